"""Whole-process timings of memcli against grep, on generated stores of 1k, 10k and 100k memories.

    .venv/bin/python benchmarks/bench.py                 # 1k, 10k, 100k; 7 runs after a warm-up
    .venv/bin/python benchmarks/bench.py --sizes 1000 --runs 5
    .venv/bin/python benchmarks/bench.py --sizes 1000 --runs 21 --compare OTHER/bin/memcli
    .venv/bin/python benchmarks/bench.py --sizes 1000 --runs 15 --baseline /tmp/memcli-before

Prints a Markdown table: median, min and max milliseconds per command, peak memory (max RSS
of the measured processes) and, for the details-layer recall, the ratio to `grep -ril` over
the same files in the same run. With --compare (another install's memcli, say the code before
a change installed in another venv) or --baseline (another checkout's folder, run by this
install's memcli with that folder first on PYTHONPATH), only the per-turn commands, of this
version and the other, interleaved round by round, each on its own copy of the store, with the
CPU time (user + system) of each process beside its wall time. Stores are generated with a fixed
seed (benchmarks/gen_store.py) under --dir and reused when present.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_store import DETAIL_WORD, INDEX_WORD  # noqa: E402

MEMCLI = str(Path(sys.executable).with_name("memcli"))


def timed(cmd: list, cwd=None, env=None, both: bool = False) -> tuple:
    """(milliseconds, peak RSS in MB, exit code) of one whole process; with ``both``, its CPU time
    (user + system) after them: on a busy machine the steadier measure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    ms = (time.perf_counter() - t0) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    if both:
        return ms, usage.ru_maxrss / 1024, p.returncode, (usage.ru_utime + usage.ru_stime) * 1000
    return ms, usage.ru_maxrss / 1024, p.returncode


def series(make_cmd, runs: int, warm: int = 1, cwd=None, before=None) -> dict:
    """Medians of whole-process runs; `before(i)` runs ahead of each timed run (not timed)."""
    for i in range(warm):
        timed(make_cmd(-1 - i), cwd)
    out = []
    for i in range(runs):
        if before is not None:
            before(i)
        out.append(timed(make_cmd(i), cwd))
    ms = [o[0] for o in out]
    return {
        "median": statistics.median(ms),
        "min": min(ms),
        "max": max(ms),
        "rss": max(o[1] for o in out),
        "codes": sorted({o[2] for o in out}),
    }


def store(base: Path, n: int) -> Path:
    root = base / f"store-{n}"
    if not (root / "MEMORY.md").exists() or len(os.listdir(root / "memory")) != n + 2:
        shutil.rmtree(root, ignore_errors=True)
        t = time.perf_counter()
        # In its own process, so this one stays small: a forked child's peak RSS counts its parent's pages.
        subprocess.run([sys.executable, str(Path(__file__).with_name("gen_store.py")), str(root), str(n)], check=True)
        print(f"generated {n} memories in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return root


def bench(root: Path, n: int, runs: int, rebuild: bool = True) -> list:
    m = [MEMCLI, "--root", str(root)]
    rows = []

    def row(name, s, note=""):
        rows.append((n, name, s, note))
        print(
            f"{n:>7} {name:<34} median {s['median']:8.1f} ms  min {s['min']:8.1f}  max {s['max']:8.1f}"
            f"  rss {s['rss']:6.1f} MB  exit {s['codes']} {note}",
            file=sys.stderr,
        )

    row("python -c pass", series(lambda i: [sys.executable, "-c", "pass"], runs))
    row("memcli --version", series(lambda i: [MEMCLI, "--version"], runs))
    row("recall (index hit)", series(lambda i: m + ["recall", INDEX_WORD], runs))
    row("should-recall", series(lambda i: m + ["should-recall", "还记得上次那个部署方案吗"], runs))
    # The details layer: first build of the search cache, then warm calls, then after one edit.
    shutil.rmtree(root / ".memcli" / "search", ignore_errors=True)
    first = timed(m + ["recall", DETAIL_WORD])
    row(
        "recall (details, first cache build)",
        {"median": first[0], "min": first[0], "max": first[0], "rss": first[1], "codes": [first[2]]},
    )
    warm = series(lambda i: m + ["recall", DETAIL_WORD], runs)
    grep = series(lambda i: ["grep", "-ril", DETAIL_WORD, "memory/"], runs, cwd=root)
    row("grep -ril (same word, same files)", grep)
    row("recall (details, warm cache)", warm, f"{warm['median'] / grep['median']:.2f}x grep")
    target = root / "memory" / f"m{n // 3:06d}.md"

    def edit_in_place(i):
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"\nedit {i}\n")

    def rename_save(i):  # the way vim and memcli save: a new file renamed over the old one
        tmp = target.with_name(".bench-save.tmp")
        tmp.write_text(target.read_text(encoding="utf-8") + f"\nsaved {i}\n", encoding="utf-8")
        os.replace(tmp, target)

    for name, edit in (("an in-place edit", edit_in_place), ("a rename-save", rename_save)):
        s = series(lambda i: m + ["recall", DETAIL_WORD], runs, warm=0, before=edit)
        row(f"recall (details, after {name} of 1 file)", s, f"{s['median'] / warm['median']:.2f}x warm")
    row(
        "remember",
        series(lambda i: m + ["remember", f"bench note {n} {time.time_ns()} {i}", "a summary", "-t", "bench"], runs),
    )
    row("scope set", series(lambda i: m + ["scope", "set", f"key{i % 3}", f"value {i}", "--agent", "bench"], runs))
    # index rebuild reads every detail file under the root lock; MEMORY.md is put back afterwards,
    # so the next run measures the same store. Fewer runs: at 100k one run takes seconds.
    if not rebuild:
        return rows
    index = (root / "MEMORY.md").read_bytes()
    try:
        row("index rebuild", series(lambda i: m + ["index", "rebuild"], max(1, min(runs, 3)), warm=0))
    finally:
        (root / "MEMORY.md").write_bytes(index)
    return rows


TURN = "还记得上次那个部署方案吗"


def compare(base: Path, n: int, runs: int, sides: dict) -> list:
    """The per-turn commands of two versions, rounds interleaved, each version on its own copy of
    the store (their caches may differ in format). ``sides``: name -> (memcli executable, extra
    environment or None). Rows: (n, command, side, median wall ms, min, max, median CPU ms)."""
    roots = {k: store(base / k, n) for k in sides}
    commands = [
        ("python -c pass", lambda exe, r, i: [sys.executable, "-c", "pass"]),
        ("memcli --version", lambda exe, r, i: [exe, "--version"]),
        ("recall (index hit)", lambda exe, r, i: [exe, "--root", str(r), "recall", INDEX_WORD]),
        ("should-recall", lambda exe, r, i: [exe, "--root", str(r), "should-recall", TURN]),
        ("recall (details, warm cache)", lambda exe, r, i: [exe, "--root", str(r), "recall", DETAIL_WORD]),
        (
            "session add",
            lambda exe, r, i: [
                exe,
                "--root",
                str(r),
                "--session",
                "bench",
                "session",
                "add",
                "user",
                f"turn {i} of the benchmark",
            ],
        ),
        (
            "scope set",
            lambda exe, r, i: [exe, "--root", str(r), "scope", "set", f"key{i % 3}", f"value {i}", "--agent", "bench"],
        ),
        (
            "remember",
            lambda exe, r, i: [
                exe,
                "--root",
                str(r),
                "remember",
                f"bench note {time.time_ns()} {i}",
                "a summary",
                "-t",
                "bench",
            ],
        ),
    ]
    rows = []
    for name, make in commands:
        got: dict = {k: [] for k in sides}
        for i in range(-1, runs):  # one warm-up round (it builds the search cache too)
            for k, (exe, env) in sides.items():
                wall, _, _, cpu = timed(make(exe, roots[k], i), env=env, both=True)
                if i >= 0:
                    got[k].append((wall, cpu))
        for k in sides:
            wall, cpu = [t[0] for t in got[k]], [t[1] for t in got[k]]
            rows.append((n, name, k, statistics.median(wall), min(wall), max(wall), statistics.median(cpu)))
            print(f"{n:>7} {name:<28} {k:<6} median {rows[-1][3]:7.1f} ms  cpu {rows[-1][6]:6.1f} ms", file=sys.stderr)
    return rows


def main() -> None:
    os.environ["MEMCLI_SERVE"] = "off"  # each command in its own process (resident_bench.py times `memcli serve`)
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    ap.add_argument("--no-rebuild", action="store_true", help="Leave out `index rebuild` (slow on old versions).")
    ap.add_argument(
        "--compare",
        metavar="MEMCLI",
        help="only the per-turn commands, of this install and of another install's memcli, interleaved",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="only the per-turn commands, of this checkout and of the code in SRC (another checkout's "
        "folder, put first on PYTHONPATH), interleaved",
    )
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.compare and args.baseline:
        ap.error("give --compare or --baseline, not both")
    if args.compare or args.baseline:
        if args.compare:
            sides = {"this": (MEMCLI, None), "other": (args.compare, None)}
            names = {"this": MEMCLI, "other": args.compare}
        else:
            here = Path(__file__).resolve().parent.parent  # both through PYTHONPATH: the same import search
            sides = {
                "this": (MEMCLI, {**os.environ, "PYTHONPATH": str(here)}),
                "other": (MEMCLI, {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}),
            }
            names = {"this": str(here), "other": str(args.baseline)}
        rows = [r for n in args.sizes for r in compare(args.dir, n, args.runs, sides)]
        print(
            f"\n{date.today()} · {platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()}"
            f" · medians of {args.runs} interleaved runs after a warm-up · load {os.getloadavg()[0]:.1f}\n"
        )
        print(
            f"| memories | command | median ms, this ({names['this']}) | min | median ms, other ({names['other']}) "
            "| min | CPU ms, this | CPU ms, other |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for this, other in zip(rows[::2], rows[1::2]):
            print(
                f"| {this[0]:,} | {this[1]} | {this[3]:.0f} | {this[4]:.0f} | {other[3]:.0f} | {other[4]:.0f} "
                f"| {this[6]:.0f} | {other[6]:.0f} |"
            )
        return
    rows = []
    for n in args.sizes:
        rows += bench(store(args.dir, n), n, args.runs, rebuild=not args.no_rebuild)
    print(
        f"\n{date.today()} · {platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · medians of {args.runs} runs after a warm-up\n"
    )
    print("| memories | command | median ms | min | max | peak MB | note |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for n, name, s, note in rows:
        print(f"| {n:,} | {name} | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['rss']:.0f} | {note} |")


if __name__ == "__main__":
    main()
