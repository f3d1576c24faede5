"""Whole-process time of `memcli hook claude-code`, the hook Claude Code runs before every
prompt, on a generated store; beside it, in the same run, `python -c pass`, `memcli --version`
and `memcli should-recall`, each in its own process (resident_bench.py times them with `memcli serve`).

    .venv/bin/python benchmarks/hook_bench.py                 # 1k memories, 9 runs after a warm-up
    .venv/bin/python benchmarks/hook_bench.py --size 10000 --runs 15
    .venv/bin/python benchmarks/hook_bench.py --compare /path/to/other/python   # another checkout beside
    .venv/bin/python benchmarks/hook_bench.py --compare /tmp/after/python --compare /tmp/before/python

The root is one the hook may use (`memcli hook allow`, recorded in a temporary state folder).
`--compare PYTHON` adds the hook rows run as `PYTHON -m memcli` (another checkout's interpreter)
and as `python -m memcli` with this one, in the same rounds.

Two prompts: one that needs memory (explicit signal and a word the index knows: the context
block is printed) and one that does not (only the turn is recorded). Prints a Markdown table of
medians in milliseconds and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import MEMCLI, store  # noqa: E402
from gen_store import INDEX_WORD  # noqa: E402


ENV = dict(os.environ, MEMCLI_SERVE="off")  # the hook in its own process (resident_bench.py: with `memcli serve`)


def timed_stdin(cmd: list, data: bytes, cwd) -> tuple[float, int, int]:
    """(milliseconds, exit code, stdout bytes) of one whole process fed data on stdin."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=ENV)
    return (time.perf_counter() - t0) * 1000, p.returncode, len(p.stdout)


def interleaved(rows: list, runs: int, cwd) -> list:
    """Each command once per round, rounds repeated: a busy machine slows every row alike."""
    for _, cmd, data in rows:
        timed_stdin(cmd, data, cwd)
    out: list = [[] for _ in rows]
    for _ in range(runs):
        for k, (_, cmd, data) in enumerate(rows):
            out[k].append(timed_stdin(cmd, data, cwd))
    stats = []
    for o in out:
        ms = [x[0] for x in o]
        stats.append(
            {
                "median": statistics.median(ms),
                "min": min(ms),
                "max": max(ms),
                "codes": sorted({x[1] for x in o}),
                "stdout": statistics.median([x[2] for x in o]),
            }
        )
    return stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        help="another interpreter whose memcli runs beside (repeatable: a wrapper that puts one "
        "checkout first on PYTHONPATH, and one for the other, compare two versions alike)",
    )
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    root = store(a.dir, a.size)
    import tempfile

    ENV["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="memcli-hook-bench-")
    subprocess.run([MEMCLI, "hook", "allow", str(root)], env=ENV, check=True, capture_output=True)

    def payload(prompt: str) -> bytes:
        return json.dumps(
            {
                "session_id": "bench-hook",
                "transcript_path": "/tmp/t.jsonl",
                "cwd": str(root),
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            },
            ensure_ascii=False,
        ).encode()

    recall = payload(f"上次那个 {INDEX_WORD} 的方案是怎么做的?")
    plain = payload("write a haiku about autumn rain")
    py = sys.executable
    rows = [
        ("python -c pass (baseline)", [py, "-c", "pass"], b""),
        ("memcli --version (baseline)", [MEMCLI, "--version"], b""),
        ("memcli should-recall (fast path, baseline)", [MEMCLI, "should-recall", "上次那个方案"], b""),
        ("memcli hook claude-code · prompt needs memory", [MEMCLI, "hook", "claude-code"], recall),
        ("memcli hook claude-code · prompt does not", [MEMCLI, "hook", "claude-code"], plain),
    ]
    if a.compare:
        for who, exe in (("this checkout", py), *((c, c) for c in a.compare)):
            rows += [
                (
                    f"python -m memcli hook claude-code · needs memory ({who})",
                    [exe, "-m", "memcli", "hook", "claude-code"],
                    recall,
                ),
                (
                    f"python -m memcli hook claude-code · does not ({who})",
                    [exe, "-m", "memcli", "hook", "claude-code"],
                    plain,
                ),
            ]
    print(f"{a.size} memories, {a.runs} rounds after a warm-up, load {os.getloadavg()[0]:.1f}\n")
    print("| command | median ms | min | max | exit | stdout bytes |\n|---|---|---|---|---|---|")
    for s, (name, _, _) in zip(interleaved(rows, a.runs, root), rows):
        print(f"| {name} | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['codes']} | {s['stdout']:.0f} |")


if __name__ == "__main__":
    main()
