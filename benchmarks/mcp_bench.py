"""The MCP round trip for recall: the SDK's stdio client calls `memcli mcp` (one server process,
kept running) and waits for the result. Beside it, in the same run, the whole-process time of
`memcli recall` for the same queries (what an agent pays per turn without MCP).

    .venv/bin/python benchmarks/mcp_bench.py                    # 1k and 10k memories, 30 calls each
    .venv/bin/python benchmarks/mcp_bench.py --sizes 1000 --calls 50

Queries: `quokka` is answered by the index, `zanzibar` only by the details layer (gen_store.py).
Prints a Markdown table of medians (and min / max) in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import MEMCLI, series, store  # noqa: E402
from gen_store import DETAIL_WORD, INDEX_WORD  # noqa: E402


def mcp_times(root: Path, queries: list, calls: int) -> tuple[float, dict]:
    """(milliseconds from spawn to an initialized session, {query: [ms per call]})."""
    params = StdioServerParameters(command=MEMCLI, args=["--root", str(root), "mcp"])
    times: dict = {q: [] for q in queries}
    start: list = []

    async def main():
        t0 = time.perf_counter()
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                start.append((time.perf_counter() - t0) * 1000)
                for q in queries:
                    await s.call_tool("recall", {"query": q})  # warm-up: caches filled, modules imported
                for _ in range(calls):
                    for q in queries:
                        t = time.perf_counter()
                        res = await s.call_tool("recall", {"query": q})
                        times[q].append((time.perf_counter() - t) * 1000)
                        assert not res.is_error and res.structured_content["hits"], res.content[0].text

    anyio.run(main)
    return start[0], times


def row(name: str, ms: list | dict) -> str:
    if isinstance(ms, dict):
        return f"| {name} | {ms['median']:.1f} | {ms['min']:.1f} | {ms['max']:.1f} |"
    return f"| {name} | {statistics.median(ms):.1f} | {min(ms):.1f} | {max(ms):.1f} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--runs", type=int, default=7, help="whole-process CLI runs for the baseline")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    queries = [INDEX_WORD, DETAIL_WORD]
    print("| memories · what | median ms | min | max |\n|---|---|---|---|")
    for n in a.sizes:
        root = store(a.dir, n)
        boot, times = mcp_times(root, queries, a.calls)
        print(f"| {n} · mcp start-up (spawn to initialized) | {boot:.1f} | | |")
        for q in queries:
            layer = "index" if q == INDEX_WORD else "details"
            print(row(f"{n} · mcp recall round trip ({layer})", times[q]))
            cli = series(lambda i, q=q: [MEMCLI, "--root", str(root), "recall", q], a.runs)
            print(row(f"{n} · `memcli recall` whole process ({layer}), baseline", cli))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
