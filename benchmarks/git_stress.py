"""Several machines sharing one memory through git: is anything lost, does everyone converge?

    python benchmarks/git_stress.py                    # 3 clones x 100 operations
    python benchmarks/git_stress.py --ops 15 --seed 7 --json

A bare origin starts with a few shared memories; each clone (a real `git clone`, set up with
`memcli git setup`) runs random operations through the real CLI (`python -m memcli`, one process
per operation): remember its own memories, update shared and own memories (new summary and/or
appended text), forget its own, add session turns (folded into the episode log as the session
grows), record outcomes of the shared procedures (`memcli outcome`), and `sync`. The clones run at the same time, so their syncs race each other to the origin.

Then a final round of syncs, and the checks: every clone holds byte-identical files and a clean
work tree; every memory that was remembered and not forgotten exists; every summary written is
current or in its memory's ## History; every appended text and every folded session turn is on
disk; each shared memory's outcome counters are the sum of every clone's outcomes; no conflict
markers remain; `index check` and `heartbeat --check` pass; no operation failed.
Exit 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ENV = {
    "MEMCLI_SERVE": "off",  # each memcli in its own process, none started for the clones
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "stress",
    "GIT_AUTHOR_EMAIL": "stress@example.org",
    "GIT_COMMITTER_NAME": "stress",
    "GIT_COMMITTER_EMAIL": "stress@example.org",
    "MEMCLI_ROOT": "",
}
WORDS = (
    "amber basil cedar delta ember fjord garnet harbor iris juniper kelp lumen marble nectar onyx pepper quartz "
    "raven saffron tundra umber velvet willow xenon yarrow zephyr anchor bramble cobalt dune falcon glacier "
    "hazel indigo jasper kestrel lagoon meadow nimbus orchid pylon quill russet sable thistle"
).split()
SHARED = 4


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    e.update(ENV)
    e.pop("MEMCLI_ROOT")
    return e


def git(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env())


def memcli(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", "--root", str(root), *map(str, args)],
        capture_output=True,
        text=True,
        env=env(),
        timeout=300,
    )


def phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Clone:
    def __init__(self, name: str, path: Path, seed: int):
        self.name, self.path = name, path
        self.rng = random.Random(seed)
        self.own: list[str] = []
        self.forgotten: set = set()
        self.summaries: list = []  # (id, summary)
        self.appends: list = []  # (id, text)
        self.turns: list = []
        self.outcomes: dict = {}  # id -> [uses, successes] this clone recorded
        self.failures: list = []
        self.syncs = 0
        self.sync_seconds: list = []
        self.counter = 0

    def _run(self, *args) -> subprocess.CompletedProcess:
        p = memcli(self.path, *args)
        if p.returncode != 0:
            self.failures.append(
                {
                    "clone": self.name,
                    "args": list(map(str, args)),
                    "code": p.returncode,
                    "stderr": p.stderr.strip()[-400:],
                }
            )
        return p

    def step(self, shared: list) -> None:
        rng = self.rng
        self.counter += 1
        k = self.counter
        live = [m for m in self.own if m not in self.forgotten]
        choice = rng.choices(
            ["remember", "update-shared", "update-own", "forget", "turn", "outcome", "sync"],
            weights=[4, 4, 2, 1, 3, 3, 3],
        )[0]
        if choice == "remember" or (choice in ("update-own", "forget") and not live):
            mid = f"{self.name}-{k}-{rng.choice(WORDS)}"
            title = f"{self.name} {phrase(rng, 3)} {k}"
            p = self._run(
                "remember",
                title,
                phrase(rng, 6),
                "--id",
                mid,
                "-t",
                rng.choice(WORDS),
                "-i",
                f"{rng.choice([0.3, 0.5, 0.6, 0.8])}",
                "--body",
                phrase(rng, 12),
            )
            if p.returncode == 0:
                self.own.append(mid)
        elif choice in ("update-shared", "update-own"):
            mid = rng.choice(shared) if choice == "update-shared" else rng.choice(live)
            summary = f"{self.name} summary {k} {phrase(rng, 4)}"
            args = ["update", mid, "--summary", summary]
            if rng.random() < 0.5:
                text = f"{self.name} appended {k} {phrase(rng, 5)}"
                args += ["--append", text]
                self.appends.append((mid, text))
            if self._run(*args).returncode == 0:
                self.summaries.append((mid, summary))
        elif choice == "forget":
            mid = rng.choice(live)
            if self._run("forget", mid, "--yes").returncode == 0:
                self.forgotten.add(mid)
        elif choice == "turn":
            text = f"turn {self.name} {k} {phrase(rng, 4)}"
            if self._run("session", "add", rng.choice(["user", "assistant"]), text).returncode == 0:
                self.turns.append(text)
        elif choice == "outcome":
            mid = rng.choice(shared)
            result = "success" if rng.random() < 0.7 else "failure"
            if self._run("outcome", mid, result, "--note", f"{self.name} {k} {phrase(rng, 3)}").returncode == 0:
                counts = self.outcomes.setdefault(mid, [0, 0])
                counts[0] += 1
                counts[1] += result == "success"
        else:
            self.sync()

    def sync(self) -> None:
        t0 = time.perf_counter()
        self._run("sync")
        self.sync_seconds.append(time.perf_counter() - t0)
        self.syncs += 1


def files(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and rel.parts[0] not in (".git", ".memcli"):
            out[rel.as_posix()] = p.read_bytes()
    return out


def run(ops: int, seed: int, clones: int = 3, workdir: Path | None = None) -> dict:
    t0 = time.perf_counter()
    tmp = Path(workdir or tempfile.mkdtemp(prefix="memcli-git-stress-"))
    origin = tmp / "origin.git"
    git(tmp, "init", "-q", "--bare", str(origin))
    seed_root = tmp / "seed"
    rng = random.Random(seed)
    failures = []
    for args in (("init", seed_root, "--git"),):
        p = memcli(tmp, *args)
        assert p.returncode == 0, p.stderr
    git(seed_root, "remote", "add", "origin", str(origin))
    shared = []
    for i in range(SHARED):
        mid = f"shared-{i}"
        p = memcli(
            seed_root,
            "remember",
            f"Shared {phrase(rng, 2)} {i}",
            phrase(rng, 6),
            "--id",
            mid,
            "--body",
            phrase(rng, 10),
            "--type",
            "procedure",
        )
        assert p.returncode == 0, p.stderr
        shared.append(mid)
    p = memcli(seed_root, "sync")
    assert p.returncode == 0, p.stderr
    workers = []
    for i in range(clones):
        name = "abcdefgh"[i]
        path = tmp / name
        git(tmp, "clone", "-q", str(origin), str(path))
        p = memcli(path, "git", "setup")
        assert p.returncode == 0, p.stderr
        workers.append(Clone(name, path, seed * 100 + i))

    def work(c: Clone):
        for _ in range(ops):
            c.step(shared)

    threads = [threading.Thread(target=work, args=(c,)) for c in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for _ in range(2):  # the final round: everyone's last changes reach everyone
        for c in workers:
            c.sync()
    work_seconds = time.perf_counter() - t0

    # ---- checks
    checks: dict = {}
    snap = [files(c.path) for c in workers]
    checks["byte_identical"] = all(s == snap[0] for s in snap[1:])
    if not checks["byte_identical"]:
        diff = sorted({k for s in snap for k in s if any(s2.get(k) != s.get(k) for s2 in snap)})
        failures.append({"check": "byte_identical", "differ": diff[:10]})
    dirty = {c.name: git(c.path, "status", "--porcelain").stdout.strip() for c in workers}
    checks["clean_work_trees"] = not any(dirty.values())
    if not checks["clean_work_trees"]:
        failures.append({"check": "clean", "status": dirty})
    final = snap[0]
    forgotten = set().union(*(c.forgotten for c in workers))
    missing = [m for c in workers for m in c.own if m not in c.forgotten and f"memory/{m}.md" not in final]
    missing += [m for m in shared if f"memory/{m}.md" not in final]
    checks["no_memory_missing"] = not missing
    if missing:
        failures.append({"check": "missing", "ids": missing})
    lost = []
    for c in workers:
        for mid, summary in c.summaries:
            if mid in forgotten:
                continue
            text = final.get(f"memory/{mid}.md", b"").decode()
            if f"summary: {summary}\n" not in text and f"summary was: {summary}" not in text:
                lost.append((mid, summary))
        for mid, appended in c.appends:
            if mid not in forgotten and appended not in final.get(f"memory/{mid}.md", b"").decode():
                lost.append((mid, appended))
    checks["no_update_lost"] = not lost
    if lost:
        failures.append({"check": "updates lost", "items": lost[:10]})
    episodes = "".join(v.decode() for k, v in final.items() if k.startswith("memory/episodes/"))
    lost_turns = []
    for c in workers:
        session = c.path / ".memcli" / "sessions" / "default.json"
        kept = session.read_text() if session.exists() else ""
        lost_turns += [t for t in c.turns if t not in episodes and json.dumps(t)[1:-1] not in kept]
    checks["no_turn_lost"] = not lost_turns
    if lost_turns:
        failures.append({"check": "turns lost", "items": lost_turns[:10]})
    wrong = []
    for mid in shared:
        want = [sum(c.outcomes.get(mid, [0, 0])[i] for c in workers) for i in (0, 1)]
        text = final.get(f"memory/{mid}.md", b"").decode()
        got = [
            next((int(ln.split(":")[1]) for ln in text.split("\n") if ln.startswith(f"{key}:")), 0)
            for key in ("uses", "successes")
        ]
        if got != want:
            wrong.append((mid, {"want": want, "got": got}))
    checks["outcome_counts_summed"] = not wrong
    if wrong:
        failures.append({"check": "outcome counts", "items": wrong})
    marked = [k for k, v in final.items() if k.endswith(".md") and b"\n<<<<<<< " in b"\n" + v]
    checks["no_markers"] = not marked
    if marked:
        failures.append({"check": "markers", "files": marked})
    for c in workers:
        for args in (("index", "check"), ("heartbeat", "--check")):
            p = memcli(c.path, *args, *(("--json",) if args[0] == "heartbeat" else ()))
            if args[0] == "heartbeat":  # a shared procedure that failed often is reported, rightly
                found = json.loads(p.stdout)["data"]["findings"]
                if not [f for f in found if f["severity"] != "info" and f["code"] != "procedure-failing"]:
                    continue
            if p.returncode != 0:
                failures.append({"check": " ".join(args), "clone": c.name, "out": (p.stdout + p.stderr)[-600:]})
    checks["index_and_heartbeat_clean"] = not [
        f for f in failures if f.get("check") in ("index check", "heartbeat --check")
    ]
    op_failures = [f for c in workers for f in c.failures]
    checks["no_operation_failed"] = not op_failures
    failures += op_failures
    merges = int(git(workers[0].path, "rev-list", "--merges", "--count", "HEAD").stdout.strip() or 0)
    syncs = sorted(s for c in workers for s in c.sync_seconds)
    return {
        "ok": all(checks.values()),
        "checks": checks,
        "failures": failures[:20],
        "clones": clones,
        "ops_per_clone": ops,
        "seed": seed,
        "syncs": sum(c.syncs for c in workers),
        "merge_commits": merges,
        "outcomes": sum(n[0] for c in workers for n in c.outcomes.values()),
        "memories": sum(1 for k in final if k.startswith("memory/") and k.count("/") == 1),
        "sync_seconds_median": round(syncs[len(syncs) // 2], 3) if syncs else None,
        "seconds": round(work_seconds, 1),
        "workdir": str(tmp),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=100, help="operations per clone")
    ap.add_argument("--clones", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    res = run(a.ops, a.seed, a.clones)
    if a.json:
        print(json.dumps(res, indent=1, default=str))
    else:
        for k, v in res.items():
            if k != "failures":
                print(f"{k}: {v}")
        for f in res["failures"]:
            print("FAILURE", json.dumps(f, default=str))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
