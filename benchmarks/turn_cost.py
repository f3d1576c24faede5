"""Per-turn cost of the personal-data scan: whole `session add` and `hook claude-code` processes,
the code before it (a source tree given with --before, e.g. `git archive main | tar -x -C /tmp/base`)
beside the code of this checkout, interleaved round by round on the same root.

    python benchmarks/turn_cost.py --before /tmp/base --runs 15 [--git]

``--git`` makes the root a git work tree with its files committed (what a shared root is): the
per-turn check that nothing under .memcli/ is tracked then has an index to look at; a `recall`
row is added.

Rows: a turn without personal data, a turn with an email and a phone number (masked by the
default `write.pii_captured: redact` in this checkout), the hook recording a prompt that needs no
memory; and `python -c pass`. Each process runs with its source tree as the working folder, so
`python -m memcli` imports that tree (compile both trees first, `python -m compileall -q TREE/memcli`,
when PYTHONDONTWRITEBYTECODE is set). Prints medians in milliseconds of wall time and of CPU time
(user + system of the process: what the command itself costs, less disturbed by a busy machine),
and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def make_root(n: int) -> Path:
    sys.path.insert(0, str(HERE))
    from memcli.core import Memory

    root = Path(tempfile.mkdtemp(prefix="memcli-turn-")) / "mem"
    m = Memory.init(root)
    for i in range(n):
        m.remember(f"Note {i} about topic {i % 37}", f"summary {i}", tags=[f"t{i % 11}"])
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="a source tree of the code before")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--memories", type=int, default=200)
    ap.add_argument("--git", action="store_true", help="the root is a git work tree with its files committed")
    a = ap.parse_args()
    root = make_root(a.memories)
    if a.git:
        env_git = {
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.org",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.org",
        }
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "memories"]):
            subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env_git)
    py = sys.executable
    plain = "please deploy the release to the staging cluster after lunch"
    personal = "客户张伟的邮箱 zhang.wei88@qq.com，手机 138 1234 5678，明天回电"
    hook = json.dumps(
        {
            "session_id": "bench",
            "cwd": str(root),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "format the table with two columns",
        }
    ).encode()
    trees = {"before": Path(a.before).resolve(), "after": HERE}
    rows = [("python -c pass", None, [py, "-c", "pass"], b"")]
    for label, tree in trees.items():
        rows += [
            (
                f"session add, plain turn ({label})",
                tree,
                [py, "-m", "memcli", "--root", str(root), "--session", f"s-{label}", "session", "add", "user", plain],
                b"",
            ),
            (
                f"session add, email + phone ({label})",
                tree,
                [
                    py,
                    "-m",
                    "memcli",
                    "--root",
                    str(root),
                    "--session",
                    f"p-{label}",
                    "session",
                    "add",
                    "user",
                    personal,
                ],
                b"",
            ),
            (
                f"hook, prompt recorded ({label})",
                tree,
                [py, "-m", "memcli", "--root", str(root), "hook", "claude-code"],
                hook,
            ),
            (
                f"recall ({label})",
                tree,
                [py, "-m", "memcli", "--root", str(root), "--session", f"s-{label}", "recall", "topic 5 note"],
                b"",
            ),
        ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env["MEMCLI_SERVE"] = "off"  # every command in its own process: the hook starts no server
    times: dict = {r[0]: [] for r in rows}
    cpu: dict = {r[0]: [] for r in rows}
    for i in range(a.runs + 1):
        for name, tree, cmd, data in rows:
            t0 = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run(cmd, input=data, capture_output=True, cwd=tree or root, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise SystemExit(f"{name}: exit {p.returncode}: {p.stderr.decode()[-300:]}")
            if i:  # the first round warms the caches
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    print(
        f"{a.memories} memories, {a.runs} interleaved rounds, load average {os.getloadavg()[0]:.2f} "
        f"(then {os.getloadavg()[1]:.2f} over 5 min)"
    )
    print("| command | median ms | min | max | median CPU ms |")
    print("|---|---:|---:|---:|---:|")
    for name, ts in times.items():
        print(
            f"| {name} | {statistics.median(ts):.1f} | {min(ts):.1f} | {max(ts):.1f} | {statistics.median(cpu[name]):.1f} |"
        )


if __name__ == "__main__":
    main()
