"""Sharing past one machine is git: how `memcli sync`, the merge drivers and a fresh clone grow
with the size of the memory and the number of clones, beside plain git in the same run.

    .venv/bin/python benchmarks/git_scale.py                         # all parts, 10k and 100k memories
    .venv/bin/python benchmarks/git_scale.py --part sync --sizes 10000 100000 --runs 3
    .venv/bin/python benchmarks/git_scale.py --part clones --clones 10 --clone-size 1000
    .venv/bin/python benchmarks/git_scale.py --part drivers --lines 10000 100000
    .venv/bin/python benchmarks/git_scale.py --part fresh --sizes 10000 100000

Parts (each prints a Markdown table; a size or line count beside ten times it shows the growth):

- sync: a generated root (benchmarks/gen_store.py) pushed to a bare origin and cloned twice (A, B,
  each `memcli git setup`); on A, medians of --runs: `memcli sync` with nothing to do; after one
  `remember`; and a conflict: B and A update the same memory (summary and body), B syncs first, A's
  sync merges it with the drivers. Beside each, what a person types without memcli on the same
  change (`git add -A; git commit; git pull --no-rebase; git push`).
- clones: --clones clones of one root; each remembers one memory and syncs in turn; then each
  syncs with nothing to do; then every clone updates the same memory and syncs in turn (every sync
  after the first merges). Then all must hold the same commit and pass `index check`.
- drivers: the merge drivers on files of N lines (MEMORY.md and a memory: both sides add N/2
  lines at the same place; a day's episode log of N lines to which each side appends sections),
  run as git runs them (`python -I -m memcli.gitmerge`, one process each), beside `git merge-file`
  on the same three files.
- fresh: `git clone` of the origin, `memcli git setup`, then the first `recall` answered by the
  index and the first that needs the details layer (which builds the search cache).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_store import DETAIL_WORD, INDEX_WORD, generate  # noqa: E402
from merge_scale import both_add_case, index_case  # noqa: E402

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
}
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}, **GIT_ENV, "MEMCLI_SERVE": "off"}


def sh(cwd, *args, check=True, data=None) -> subprocess.CompletedProcess:
    p = subprocess.run(list(map(str, args)), cwd=cwd, capture_output=True, env=ENV, input=data)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed in {cwd}: {p.stderr.decode()[-800:]}")
    return p


def memcli(root, *args, check=True):
    return sh(root, sys.executable, "-m", "memcli", "--root", root, *args, check=check)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def plain_git(root) -> None:
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-qm", "by hand", check=False)
    sh(root, "git", "pull", "-q", "--no-rebase", "--no-edit")
    sh(root, "git", "push", "-q")


def origin(tmp: Path, n: int) -> Path:
    """A bare origin holding a generated root of n memories, pushed by `memcli sync`."""
    seed = tmp / f"seed-{n}"
    generate(seed, n)
    sh(tmp, sys.executable, "-m", "memcli", "init", seed, "--git")
    bare = tmp / f"origin-{n}.git"
    sh(tmp, "git", "init", "-q", "--bare", bare)
    sh(seed, "git", "remote", "add", "origin", bare)
    memcli(seed, "sync")
    return bare


def clone(bare: Path, where: Path) -> Path:
    sh(where.parent, "git", "clone", "-q", bare, where)
    memcli(where, "git", "setup")
    return where


def med(xs) -> float:
    return statistics.median(xs)


# ---------------------------------------------------------------- parts


def part_sync(sizes, runs, tmp) -> None:
    rows = []
    for n in sizes:
        bare = origin(tmp, n)
        a, b = clone(bare, tmp / f"a-{n}"), clone(bare, tmp / f"b-{n}")
        shared = sorted(p.stem for p in (a / "memory").glob("m*.md"))[: runs * 4]
        t: dict = {k: [] for k in ("idle", "git idle", "push", "git push", "conflict", "git conflict")}
        for i in range(runs):
            memcli(b, "sync")
            memcli(a, "sync")
            t["idle"].append(timed(lambda: memcli(a, "sync")))
            t["git idle"].append(timed(lambda: plain_git(a)))
            memcli(a, "remember", f"scale push {n} {i}", "one more", "--id", f"scale-push-{i}")
            t["push"].append(timed(lambda: memcli(a, "sync")))
            memcli(a, "remember", f"scale hand push {n} {i}", "one more", "--id", f"scale-hand-push-{i}")
            t["git push"].append(timed(lambda: plain_git(a)))
            for kind, target in (("conflict", shared[2 * i]), ("git conflict", shared[2 * i + 1])):
                memcli(b, "update", target, "--summary", f"b changed it {i}", "--append", f"b line {i}")
                memcli(b, "sync")
                memcli(a, "update", target, "--summary", f"a changed it {i}", "--append", f"a line {i}")
                t[kind].append(timed(lambda: memcli(a, "sync") if kind == "conflict" else plain_git(a)))
        memcli(b, "sync")
        memcli(a, "sync")
        ok = memcli(a, "index", "check", check=False).returncode == 0
        same = sh(a, "git", "rev-parse", "HEAD").stdout == sh(b, "git", "rev-parse", "HEAD").stdout
        rows.append((n, {k: med(v) for k, v in t.items()}, ok and same))
    print(f"\n`memcli sync` on clone A, medians of {runs} (s); plain git on the same change beside\n")
    print(
        "| memories | nothing to do | git | one change | git | a conflict (merged) | git | index check, same commit |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, m, ok in rows:
        print(
            f"| {n:,} | {m['idle']:.2f} | {m['git idle']:.2f} | {m['push']:.2f} | {m['git push']:.2f} "
            f"| {m['conflict']:.2f} | {m['git conflict']:.2f} | {'ok' if ok else 'FAILED'} |",
            flush=True,
        )


def part_clones(k, n, tmp) -> None:
    bare = origin(tmp, n)
    clones = [clone(bare, tmp / f"c{i}-{n}") for i in range(k)]
    one, idle, conflict = [], [], []
    for i, c in enumerate(clones):
        memcli(c, "remember", f"from clone {i}", "its own", "--id", f"from-clone-{i}")
        one.append(timed(lambda: memcli(c, "sync")))
    for c in clones:
        idle.append(timed(lambda: memcli(c, "sync")))
    target = sorted(p.stem for p in (clones[0] / "memory").glob("m*.md"))[0]
    for i, c in enumerate(clones):
        memcli(c, "update", target, "--summary", f"clone {i} says", "--append", f"line from clone {i}")
    for c in clones:
        conflict.append(timed(lambda: memcli(c, "sync")))
    for c in clones:
        memcli(c, "sync")
    heads = {sh(c, "git", "rev-parse", "HEAD").stdout for c in clones}
    ok = all(memcli(c, "index", "check", check=False).returncode == 0 for c in clones)
    text = (clones[-1] / "memory" / f"{target}.md").read_text(encoding="utf-8")
    kept = all(f"line from clone {i}" in text for i in range(k))
    print(f"\n{k} clones of {n:,} memories, each syncing in turn (s)\n")
    print("| step | median | max | total |\n|---|---:|---:|---:|")
    for name, xs in (
        ("one change each, then sync", one),
        ("sync with nothing to do", idle),
        ("all change one memory, then sync (each after the first merges)", conflict),
    ):
        print(f"| {name} | {med(xs):.2f} | {max(xs):.2f} | {sum(xs):.1f} |")
    print(
        f"\nall on one commit: {len(heads) == 1}; index check passes on every clone: {ok}; "
        f"every clone's line kept in the shared memory: {kept}"
    )


def episode_case(n: int) -> tuple[str, str, str]:
    """A day's log of n lines; each side appends sections of its own (n/10 lines each)."""
    rng = random.Random(n)

    def sections(who, k, start):
        out = []
        for i in range(k):
            out += [
                f"## 2026-12-01T{(start + i) // 3600 % 24:02d}:{(start + i) // 60 % 60:02d}:{(start + i) % 60:02d}Z "
                f"session {who}",
                "",
                f"**user** (2026-12-01T00:00:00Z): {who} turn {i} "
                + " ".join(rng.choice(("deploy", "cache", "index", "merge", "token")) for _ in range(8)),
                "",
            ]
        return out

    head = ["# Episodes 2026-12-01"]
    base = head + sections("base", n // 4, 0)
    ours = base + sections("ours", n // 40, 40000)
    theirs = base + sections("theirs", n // 40, 50000)
    return "\n".join(base) + "\n", "\n".join(ours) + "\n", "\n".join(theirs) + "\n"


def part_drivers(lines, runs, tmp) -> None:
    rows = []
    for n in lines:
        for kind, case, rel in (
            ("index", lambda n: index_case(n), "MEMORY.md"),
            ("episode", episode_case, "memory/episodes/2026-12-01.md"),
            ("detail", lambda n: both_add_case(n), "memory/long-note.md"),
        ):
            texts = case(n)
            folder = tmp / f"drv-{kind}-{n}"
            folder.mkdir()
            paths = []
            for name, text in zip(("base", "ours", "theirs"), texts):
                p = folder / name
                p.write_text(text, encoding="utf-8")
                paths.append(p)
            ours = paths[1].read_bytes()

            def driver():
                paths[1].write_bytes(ours)  # git hands the driver a fresh copy of ours each time
                args = [kind, str(paths[0]), str(paths[1]), str(paths[2])] + (["7"] if kind == "detail" else []) + [rel]
                return sh(folder, sys.executable, "-I", "-m", "memcli.gitmerge", *args, check=False)

            times = [timed(driver) for _ in range(runs)]
            code = driver().returncode
            git = [
                timed(lambda: sh(folder, "git", "merge-file", "-p", paths[1], paths[0], paths[2], check=False))
                for _ in range(runs)
            ]
            size = sum(len(t.encode()) for t in texts) // 3
            rows.append((kind, n, size, med(times), med(git), code))
    print(f"\nMerge drivers as git runs them (one process each), medians of {runs} (s)\n")
    print("| file | lines | bytes | memcli merge | git merge-file | driver exit |\n|---|---:|---:|---:|---:|---:|")
    for kind, n, size, t, g, code in rows:
        print(f"| {kind} | {n:,} | {size:,} | {t:.3f} | {g:.3f} | {code} |")


def part_fresh(sizes, tmp) -> None:
    rows = []
    for n in sizes:
        bare = tmp / f"origin-{n}.git"
        if not bare.exists():
            bare = origin(tmp, n)
        where = tmp / f"fresh-{n}"
        t_clone = timed(lambda: sh(tmp, "git", "clone", "-q", bare, where))
        t_setup = timed(lambda: memcli(where, "git", "setup"))
        t_index = timed(lambda: memcli(where, "recall", INDEX_WORD))
        t_details = timed(lambda: memcli(where, "recall", DETAIL_WORD))
        t_again = timed(lambda: memcli(where, "recall", DETAIL_WORD))
        rows.append((n, t_clone, t_setup, t_index, t_details, t_again))
    print("\nA fresh clone (s)\n")
    print(
        "| memories | git clone | memcli git setup | first recall (index) | first recall (details: builds the "
        "search cache) | second details recall |\n|---:|---:|---:|---:|---:|---:|"
    )
    for n, *ts in rows:
        print(f"| {n:,} | " + " | ".join(f"{t:.2f}" for t in ts) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("sync", "clones", "drivers", "fresh", "all"), default="all")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clones", type=int, default=10)
    ap.add_argument("--clone-size", type=int, default=1000)
    ap.add_argument("--lines", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dir", type=Path, default=None, help="work here (default: a temporary folder, removed)")
    a = ap.parse_args()
    print(
        f"{date.today()} · {os.cpu_count()} cores · Python {sys.version.split()[0]} · "
        f"git {sh('.', 'git', '--version').stdout.decode().split()[-1]} · load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory(prefix="memcli-git-scale-", dir=a.dir) as d:
        tmp = Path(d)
        if a.part in ("drivers", "all"):
            part_drivers(a.lines, a.runs, tmp)
        if a.part in ("clones", "all"):
            part_clones(a.clones, a.clone_size, tmp)
        if a.part in ("sync", "all"):
            part_sync(a.sizes, a.runs, tmp)
        if a.part in ("fresh", "all"):
            part_fresh(a.sizes, tmp)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
