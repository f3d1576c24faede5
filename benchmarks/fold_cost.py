"""What reading injection through its disguises costs: `find_injection` over 1 MB of ordinary notes
(tests/data/scan/ordinary_notes.txt, repeated), this tree beside another (an older commit, from
`git archive`), in fresh processes taken in turn, medians; `python -c pass` in the same rounds.

    git archive main memcli templates | (mkdir -p /tmp/main && tar -x -C /tmp/main)
    .venv/bin/python benchmarks/fold_cost.py /tmp/main --rounds 7

Each process scans the text once to load and compile the rules, then times one scan (the
scanner keeps what it found for texts up to 64 kB only, so 1 MB is scanned each time), and says
how much of the text fold hands to the rules a second time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE = f"""
import sys, time
sys.path.insert(0, {str(HERE)!r})
from scan_speed import text_of
from memcli.safety import scanner
text = text_of(1_000_000)
scanner.find_injection(text)
t = time.perf_counter()
scanner.find_injection(text)
ms = (time.perf_counter() - t) * 1000
folded = scanner.fold(text)
print(ms, len(folded[0]) if folded else 0)
"""


def run(tree: str | None) -> tuple[float, int]:
    if tree is None:
        cmd, env = [sys.executable, "-c", PROBE], dict(os.environ)
    else:  # without site, so that an editable install of this tree does not shadow it
        cmd = [sys.executable, "-S", "-c", PROBE]
        env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{sysconfig.get_paths()['purelib']}")
    # run in the temp folder: `-c` puts the working folder first on the path, where a memcli/ may be
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    ms, folded = out.stdout.split()
    return float(ms), int(folded)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("other", help="another tree of memcli (a folder holding memcli/)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    times: dict = {"this tree": [], args.other: [], "python -c pass": []}
    folded: dict = {}
    for _ in range(args.rounds):
        for name, tree in (("this tree", None), (args.other, args.other)):
            ms, folded[name] = run(tree)
            times[name].append(ms)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times["python -c pass"].append((time.perf_counter() - t) * 1000)
    print(f"load average {os.getloadavg()[0]:.1f}, {args.rounds} rounds, medians")
    for name, values in times.items():
        extra = f" (fold hands the rules {folded[name]:,} characters again)" if name in folded else ""
        print(f"{name}: {statistics.median(values):.0f} ms{extra}")


if __name__ == "__main__":
    main()
