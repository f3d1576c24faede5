"""Two installs of memcli, each with `memcli serve` on its own copy of the same 1k store, answering
the per-turn commands in turns: requests alternate between them (which goes first alternates too),
with a pause between requests as between an agent's turns.

    python benchmarks/resident_ab.py --a /tmp/main-venv/bin/memcli --b .venv-regular/bin/memcli

Prints medians and minimums of wall time per command and install, `python -c pass` of the same run
and the load average. Where both installs share a machine's noise, this is the fair comparison of
two versions' served turns (``resident_bench.py`` measures one install against its own process).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import store  # noqa: E402
from gen_store import INDEX_WORD  # noqa: E402

ROWS = [
    ("should-recall", ["should-recall", "还记得上次那个部署方案吗"], None),
    ("recall, index hit", ["recall", INDEX_WORD], None),
    ("hook, prompt needs memory", ["hook", "claude-code"], f"上次那个 {INDEX_WORD} 的方案是怎么做的?"),
    ("hook, prompt does not", ["hook", "claude-code"], "write a haiku about autumn rain"),
    ("session add", ["--session", "ab", "session", "add", "assistant", "a turn of the benchmark"], None),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="one install's memcli")
    ap.add_argument("--b", required=True, help="the other's")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--gap", type=float, default=0.25, help="seconds between requests")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    a = ap.parse_args()
    source = store(a.dir, 1000)
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    sides: dict = {}
    servers = []
    try:
        for name, memcli in (("a", a.a), ("b", a.b)):
            root = a.dir / f"ab-{name}"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(source, root, ignore=shutil.ignore_patterns(".memcli"))
            env = dict(env0, XDG_STATE_HOME=tempfile.mkdtemp(), XDG_RUNTIME_DIR=tempfile.mkdtemp())
            subprocess.run([memcli, "hook", "allow", str(root)], env=env, capture_output=True, check=True)
            subprocess.run(
                [memcli, "--root", str(root), "recall", "zanzibar"],
                env=dict(env, MEMCLI_SERVE="off"),
                capture_output=True,
            )  # the caches, as a first run leaves them
            proc = subprocess.Popen([memcli, "--root", str(root), "serve"], env=env, stderr=subprocess.PIPE, text=True)
            servers.append(proc)
            if "serving" not in proc.stderr.readline():
                raise SystemExit(f"{memcli} serve did not start")
            sides[name] = (memcli, root, dict(env, MEMCLI_SERVE="manual"))
        got: dict = {(row, s): [] for row, *_ in ROWS for s in sides}
        floor = []
        for i in range(a.rounds + 1):
            for row, args, prompt in ROWS:
                for s in ("a", "b") if i % 2 else ("b", "a"):
                    memcli, root, env = sides[s]
                    data = (
                        b""
                        if prompt is None
                        else json.dumps(
                            {
                                "session_id": "ab",
                                "cwd": str(root),
                                "hook_event_name": "UserPromptSubmit",
                                "prompt": prompt,
                            },
                            ensure_ascii=False,
                        ).encode()
                    )
                    t = time.perf_counter()
                    r = subprocess.run([memcli, "--root", str(root), *args], input=data, env=env, capture_output=True)
                    wall = (time.perf_counter() - t) * 1000
                    if r.returncode not in (0, 1):
                        raise SystemExit(f"{row}: exit {r.returncode}: {r.stderr.decode()}")
                    if i:
                        got[(row, s)].append(wall)
                    time.sleep(a.gap)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"])
            floor.append((time.perf_counter() - t) * 1000)
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(10)
    load = os.getloadavg()
    print(
        f"{a.rounds} rounds, {a.gap} s between requests, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; "
        f"python -c pass {statistics.median(floor[1:]):.1f} ms (min {min(floor[1:]):.1f})\n"
    )
    print(f"| served command | {a.a}: median (min) ms | {a.b}: median (min) ms |\n|---|---:|---:|")
    for row, *_ in ROWS:
        x, y = got[(row, "a")], got[(row, "b")]
        print(f"| {row} | {statistics.median(x):.1f} ({min(x):.1f}) | {statistics.median(y):.1f} ({min(y):.1f}) |")


if __name__ == "__main__":
    main()
