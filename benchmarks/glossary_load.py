"""What the Chinese-English glossary costs a process: importing its module, reading its data file
(memcli/search/glossary.txt), splitting the lines, and building the lookup of one language, each timed inside fresh processes (the tokenizer, which
recall loads anyway, imported first), medians of --runs, beside `python -c pass`.

    python benchmarks/glossary_load.py --runs 21
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

REPO = Path(__file__).resolve().parent.parent

PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import memcli.search.tokenize
t0 = time.perf_counter()
from memcli.search import glossary
t1 = time.perf_counter()
glossary.data()
t2 = time.perf_counter()
t = glossary.tables()
t3 = time.perf_counter()
t.en
t4 = time.perf_counter()
t.zh
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "read": t2 - t1, "lines": t3 - t2, "english lookup": t4 - t3, "chinese lookup": t5 - t4}))
"""


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args(argv)
    got: dict = {}
    base = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append((time.perf_counter() - t0) * 1000)
        out = subprocess.run([sys.executable, "-c", PROBE, str(REPO)], capture_output=True, text=True, check=True)
        for k, v in json.loads(out.stdout).items():
            got.setdefault(k, []).append(v * 1000)
    print(f"medians of {args.runs} fresh processes, load {os.getloadavg()[0]:.1f}\n")
    print("| step | median ms |\n|---|---:|")
    print(f"| `python -c pass`, the whole process (baseline) | {statistics.median(base):.2f} |")
    for k, v in got.items():
        print(f"| {k} | {statistics.median(v):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
