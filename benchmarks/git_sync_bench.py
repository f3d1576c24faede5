"""How long `memcli sync` takes on a shared root of 1k and 10k memories, beside plain git.

    python benchmarks/git_sync_bench.py                 # 1000 and 10000 memories, 7 runs each
    python benchmarks/git_sync_bench.py --sizes 1000 --runs 5 --json

A root is generated (benchmarks/gen_store.py), committed and pushed to a bare origin, and cloned
twice (A and B, both set up with `memcli git setup`). Each run times, on A, medians over the runs:

- idle:   `memcli sync` with nothing to commit and nothing new on the origin;
- push:   one `remember`, then `memcli sync` (commit + fetch + push);
- merge:  B remembers one memory, updates a shared one and syncs; A remembers one and updates the
          same shared memory, then `memcli sync` (commit, fetch, merge with the drivers for MEMORY.md
          and the shared memory, reconcile the index, commit the merge, push).

The baseline, in the same run and on the same kind of change: what a person types without memcli
(`git add -A && git commit -qm x && git pull -q --no-rebase --no-edit && git push -q`), which runs
the same registered merge drivers in the merge case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {
    "MEMCLI_SERVE": "off",  # each memcli in its own process, none started for the clones
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
}


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    e.update(ENV)
    return e


def sh(cwd, *args, check=True) -> subprocess.CompletedProcess:
    p = subprocess.run(list(map(str, args)), cwd=cwd, capture_output=True, text=True, env=env())
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed in {cwd}: {p.stderr.strip()[-500:]}")
    return p


def memcli(root, *args, check=True):
    return sh(root, sys.executable, "-m", "memcli", "--root", root, *args, check=check)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def plain_git(root):
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-qm", "by hand", check=False)
    sh(root, "git", "pull", "-q", "--no-rebase", "--no-edit")
    sh(root, "git", "push", "-q")


def bench(n: int, runs: int, tmp: Path) -> dict:
    sys.path.insert(0, str(HERE))
    from gen_store import generate

    seed = tmp / f"seed-{n}"
    generate(seed, n)
    sh(tmp, sys.executable, "-m", "memcli", "init", seed, "--git")
    bare = tmp / f"origin-{n}.git"
    sh(tmp, "git", "init", "-q", "--bare", bare)
    sh(seed, "git", "remote", "add", "origin", bare)
    memcli(seed, "sync")
    a, b = tmp / f"a-{n}", tmp / f"b-{n}"
    for c in (a, b):
        sh(tmp, "git", "clone", "-q", bare, c)
        memcli(c, "git", "setup")
    shared = sorted(p.stem for p in (a / "memory").glob("*.md"))[: runs * 4]
    times: dict = {"idle": [], "push": [], "merge": [], "git idle": [], "git push": [], "git merge": []}
    for i in range(runs):
        memcli(b, "sync")
        memcli(a, "sync")
        times["idle"].append(timed(lambda: memcli(a, "sync")))
        times["git idle"].append(timed(lambda: plain_git(a)))
        memcli(a, "remember", f"bench push {n} {i}", "one more", "--id", f"bench-push-{i}")
        times["push"].append(timed(lambda: memcli(a, "sync")))
        memcli(a, "remember", f"bench hand push {n} {i}", "one more", "--id", f"bench-hand-push-{i}")
        times["git push"].append(timed(lambda: plain_git(a)))
        for kind, target in (("merge", shared[2 * i]), ("git merge", shared[2 * i + 1])):
            memcli(b, "remember", f"bench from b {kind} {i}", "b", "--id", f"bench-b-{kind.replace(' ', '-')}-{i}")
            memcli(b, "update", target, "--summary", f"b changed it {i}", "--append", f"b line {i}")
            memcli(b, "sync")
            memcli(a, "remember", f"bench from a {kind} {i}", "a", "--id", f"bench-a-{kind.replace(' ', '-')}-{i}")
            memcli(a, "update", target, "--summary", f"a changed it {i}", "--append", f"a line {i}")
            times[kind].append(timed(lambda: memcli(a, "sync") if kind == "merge" else plain_git(a)))
    memcli(b, "sync")
    memcli(a, "sync")
    ok = memcli(a, "index", "check", check=False).returncode == 0
    same = sh(a, "git", "rev-parse", "HEAD").stdout == sh(b, "git", "rev-parse", "HEAD").stdout
    return {
        "memories": n,
        "runs": runs,
        "index_check_ok": ok,
        "clones_same_commit": same,
        **{k: round(statistics.median(v), 3) for k, v in times.items()},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memcli-git-bench-") as d:
        results = [bench(int(n), a.runs, Path(d)) for n in a.sizes.split(",")]
    if a.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'memories':>9} {'idle':>7} {'git':>7} {'push':>7} {'git':>7} {'merge':>7} {'git':>7}  (median s)")
        for r in results:
            print(
                f"{r['memories']:>9} {r['idle']:>7} {r['git idle']:>7} {r['push']:>7} {r['git push']:>7} "
                f"{r['merge']:>7} {r['git merge']:>7}  index ok: {r['index_check_ok']}"
            )
    return 0 if all(r["index_check_ok"] and r["clones_same_commit"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
