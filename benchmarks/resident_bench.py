"""The per-turn commands (and the hook's Stop event, which records the assistant's reply) with and
without `memcli serve`, whole processes, beside `python -c pass`.

    .venv/bin/python benchmarks/resident_bench.py                  # 1k (and 10k for the details rows), 21 rounds
    .venv/bin/python benchmarks/resident_bench.py --runs 41 --size 1000 --details-size 10000
    .venv/bin/python benchmarks/resident_bench.py --hooks --runs 61   # the hook's events only (prompt, Stop)

Run it from a regular install (`pip install .` in a venv: an editable install puts a path
finder in every process's start-up, ~9 ms that a user's install does not pay), and unset
PYTHONDONTWRITEBYTECODE or byte-compile the package first. Every row runs once per round, rounds
repeated, so a busy machine slows every row alike; the first round warms the caches and is not
counted. Each command runs twice per round: in its own process (MEMCLI_SERVE=off, as without a
server) and answered by a `memcli serve` started for the root beforehand (MEMCLI_SERVE=manual).
Prints medians and minimums of wall time, the client process's CPU time, and the CPU time the
server spent on the request (it reports its own, when pinged), then the goals, and the load
average. On a busy machine the minimums and the CPU times say more than the medians. After a
command that wrote (session add, the hook), the server brings the search cache up to date once the
client has its answer; the next row waits for that (as the next turn, seconds away, would), and
the server's CPU time of the row includes it.
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
from datetime import date
from pathlib import Path

PING = 0.0
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import MEMCLI, store  # noqa: E402
from gen_store import DETAIL_WORD, INDEX_WORD  # noqa: E402

TURN = "还记得上次那个部署方案吗"


def server_cpu(root) -> float:
    """CPU milliseconds the server of root has used so far (it says, when pinged), once it has done
    what it does between turns after a command that wrote (``serve.PREPARE_AFTER``)."""
    if root is None:
        return 0.0
    from memcli.search import remote

    answer = remote.ask(root, {"op": "ping"})
    while answer.get("preparing"):
        time.sleep(0.02)
        answer = remote.ask(root, {"op": "ping"})
    return answer["cpu"] * 1000


def run(cmd: list, data: bytes, env: dict, cwd, server) -> tuple:
    before = server_cpu(server)
    t0 = time.perf_counter()
    p = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    p.stdin.write(data)
    p.stdin.close()
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    spent = server_cpu(server) - before - PING if server is not None else 0.0
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, spent, p.returncode, out


def start_server(root: Path, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([MEMCLI, "--root", str(root), "serve"], env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if "serving" not in line:
        raise SystemExit(f"memcli serve did not start: {line}{proc.stderr.read()}")
    return proc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--details-size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    ap.add_argument("--hooks", action="store_true", help="only the hook's rows, beside the baselines")
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    small, large = store(a.dir, a.size), store(a.dir, a.details_size)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="memcli-resident-state-")
    env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="memcli-rt-")
    subprocess.run([MEMCLI, "hook", "allow", str(small)], env=env, check=True, capture_output=True)
    alone, served = {**env, "MEMCLI_SERVE": "off"}, {**env, "MEMCLI_SERVE": "manual"}
    for root in (small, large):  # the caches (index, search, plugins) as a first run leaves them
        subprocess.run([MEMCLI, "--root", str(root), "recall", DETAIL_WORD], env=alone, capture_output=True)

    def event(prompt: str, name: str = "UserPromptSubmit", key: str = "prompt") -> bytes:
        return json.dumps(
            {"session_id": "bench", "cwd": str(small), "hook_event_name": name, key: prompt}, ensure_ascii=False
        ).encode()

    reply = "The cause was the connection charset; SET NAMES utf8mb4 on the connection fixed the garbled import."

    m, ml = [MEMCLI, "--root", str(small)], [MEMCLI, "--root", str(large)]
    commands = [  # (name, command, stdin, root it runs on)
        ("recall, index hit", m + ["recall", INDEX_WORD], b"", small),
        ("should-recall", m + ["should-recall", TURN], b"", small),
        ("context", m + ["context", INDEX_WORD], b"", small),
        ("session add", m + ["--session", "bench", "session", "add", "user", "a turn of the benchmark"], b"", small),
        (
            "hook, prompt needs memory",
            m + ["hook", "claude-code"],
            event(f"上次那个 {INDEX_WORD} 的方案是怎么做的?"),
            small,
        ),
        ("hook, prompt does not", m + ["hook", "claude-code"], event("write a haiku about autumn rain"), small),
        (
            "hook, Stop (the reply recorded)",
            m + ["hook", "claude-code"],
            event(reply, "Stop", "last_assistant_message"),
            small,
        ),
        (f"recall, details layer, {a.details_size // 1000}k", ml + ["recall", DETAIL_WORD], b"", large),
    ]
    if a.hooks:
        commands = [c for c in commands if c[0].startswith("hook")]
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"], b"", alone, small, None),
        (
            "python -c 'import re' (what the console script imports)",
            [sys.executable, "-c", "import re"],
            b"",
            alone,
            small,
            None,
        ),
        ("memcli --version", [MEMCLI, "--version"], b"", alone, small, None),
        (
            f"grep -ril, {a.details_size // 1000}k files",
            ["grep", "-ril", DETAIL_WORD, "memory/"],
            b"",
            alone,
            large,
            None,
        ),
    ]
    servers = {root: start_server(root, env) for root in (small, large)}
    global PING
    os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]  # this process pings the servers
    pings = [server_cpu(small) for _ in range(21)]
    PING = statistics.median(b - a for a, b in zip(pings, pings[1:]))  # what a ping itself costs the server
    try:
        for name, cmd, data, root in commands:
            rows.append((f"{name} · own process", cmd, data, alone, root, None))
            rows.append((f"{name} · memcli serve", cmd, data, served, root, root))
        got: list = [[] for _ in rows]
        for i in range(a.runs + 1):
            for k, (_name, cmd, data, e, root, pid) in enumerate(rows):
                res = run(cmd, data, e, root, pid)
                if i:
                    got[k].append(res)
        from memcli.search import remote

        answered = {root: remote.ask(root, {"op": "ping"})["served"] for root in servers}
    finally:
        for proc in servers.values():
            proc.terminate()
            proc.wait(10)
    load = os.getloadavg()
    print(
        f"{date.today()} · {os.cpu_count()} cores · Python {sys.version.split()[0]} · {a.size} memories "
        f"({a.details_size} for the details rows) · medians of {a.runs} interleaved rounds after a warm-up · "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} · requests the servers ran: "
        f"{sum(answered.values())} of {a.runs + 1} × {len(commands)}\n"
    )
    print("| command | median ms | min ms | client CPU ms | server CPU ms | exit |")
    print("|---|---:|---:|---:|---:|---|")
    med = {}
    for (name, *_), g in zip(rows, got):
        wall = [x[0] for x in g]
        med[name] = statistics.median(wall)
        print(
            f"| {name} | {med[name]:.1f} | {min(wall):.1f} | {statistics.median(x[1] for x in g):.1f} "
            f"| {statistics.median(x[2] for x in g):.1f} | {sorted({x[3] for x in g})} |"
        )
    grep = med[f"grep -ril, {a.details_size // 1000}k files"]
    details = f"recall, details layer, {a.details_size // 1000}k"
    print("\n| goal (ms) | own process | memcli serve |\n|---|---:|---:|")
    rows = (
        [(name, None, 35) for name, *_ in commands]
        if a.hooks
        else [
            ("recall, index hit", 110, 25),
            ("should-recall", None, 25),
            ("hook, prompt needs memory", None, 35),
            ("hook, prompt does not", None, 35),
            ("hook, Stop (the reply recorded)", None, 35),
        ]
    )
    for name, alone, goal in rows:
        print(
            f"| {name}: ≤ {alone or '-'} alone, ≤ {goal} served | {med[name + ' · own process']:.0f} "
            f"| {med[name + ' · memcli serve']:.0f} |"
        )
    if a.hooks:
        return
    print(
        f"| {details} ≤ 1.0× grep -ril ({grep:.0f} ms) | {med[details + ' · own process'] / grep:.2f}× "
        f"| {med[details + ' · memcli serve'] / grep:.2f}× |"
    )


if __name__ == "__main__":
    main()
