"""How long `index rebuild` takes and how long it holds the root lock (what every other writer
waits for), on a generated store.

    .venv/bin/python benchmarks/rebuild_lock.py --sizes 10000 --runs 5

Runs `Memory.rebuild_index()` in this process, timing the whole call and each hold of the
root lock; prints medians. MEMORY.md is put back after each run, so every run rebuilds the
same store.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import store  # noqa: E402

import memcli.core as core  # noqa: E402
import memcli.store.root as root_module  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    args = ap.parse_args()
    held: list[float] = []
    plain = root_module.root_lock

    @contextlib.contextmanager
    def timed_lock(root, timeout):
        with plain(root, timeout):
            t0 = time.perf_counter()
            try:
                yield
            finally:
                held.append(time.perf_counter() - t0)

    root_module.root_lock = timed_lock
    print("| memories | rebuild median ms | lock held median ms (longest hold per run) |")
    print("|---|---|---|")
    for n in args.sizes:
        root = store(args.dir, n)
        index = (root / "MEMORY.md").read_bytes()
        total, hold = [], []
        try:
            for _ in range(args.runs):
                held.clear()
                t0 = time.perf_counter()
                core.Memory(root).rebuild_index()
                total.append(time.perf_counter() - t0)
                hold.append(max(held))
                (root / "MEMORY.md").write_bytes(index)
        finally:
            (root / "MEMORY.md").write_bytes(index)
        print(f"| {n} | {statistics.median(total) * 1000:.0f} | {statistics.median(hold) * 1000:.0f} |")


if __name__ == "__main__":
    main()
