"""What finding the plugins costs a process, in three cases, each a fresh interpreter:

    .venv/bin/python benchmarks/plugin_discovery.py [--runs 21]

- cache: the plugins found before are read from the cache (what a turn pays);
- scan: no cache, no plugin installed: the entry_points.txt files on the path are read;
- metadata: no cache, a plugin installed: importlib.metadata reads the distributions.

Beside them, the same process doing nothing of it (the baseline). Prints the median
milliseconds from the start of the lookup to its end (imports included) and of the whole
process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = """
import json, time  # json: a turn has it loaded already
t = time.perf_counter()
from memcli import plugins
if {look}:
    plugins.call("register_layers", lambda layer, before=None: None)
print((time.perf_counter() - t) * 1000)
"""


def run(look: bool, env: dict, fresh_cache: bool) -> tuple[float, float]:
    if fresh_cache:
        env = {**env, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="memcli-bench-")}
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(look=look)], capture_output=True, text=True, env=env, check=True
    ).stdout
    return float(out), (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    runs = ap.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="memcli-plugins-"))
    site = work / "site"
    (site / "demo_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "demo_plugin.py").write_text("def register_layers(register):\n    pass\n")
    (site / "demo_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: demo-plugin\nVersion: 0.1\n"
    )
    (site / "demo_plugin-0.1.dist-info" / "entry_points.txt").write_text("[memcli.plugins]\ndemo = demo_plugin\n")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cached = {**base, "XDG_CACHE_HOME": str(work / "cache")}
    then = time.time_ns() - 60_000_000_000
    for p in [site, *site.rglob("*")]:
        os.utime(p, ns=(then, then))
    run(True, cached, False)  # fills the cache
    cases = {
        "baseline (import memcli.plugins only)": (False, cached, False),
        "cache": (True, cached, False),
        "scan (no cache, no plugin)": (True, base, True),
        "metadata (no cache, a plugin)": (True, {**base, "PYTHONPATH": str(site)}, True),
    }
    rows = {name: [] for name in cases}
    for _ in range(runs):  # interleaved, so load changes touch every case alike
        for name, (look, env, fresh) in cases.items():
            rows[name].append(run(look, env, fresh))
    print(f"load {os.getloadavg()[0]:.2f}, {runs} runs, medians\n")
    print("| case | lookup ms | process ms |\n|---|---:|---:|")
    for name, got in rows.items():
        print(f"| {name} | {statistics.median(g[0] for g in got):.2f} | {statistics.median(g[1] for g in got):.1f} |")


if __name__ == "__main__":
    main()
