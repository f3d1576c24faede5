"""Two costs issue 16 changed, as whole `memcli` processes, beside `python -c pass`:

    rename    `memcli rename` of a memory that 3,000 other memories refer to
    snippet   `memcli recall` answered by a detail file of 1,000,000 short lines (~6 MB),
              next to a recall of the same root that the file does not answer

    .venv/bin/python benchmarks/write_boundary_bench.py rename --runs 3
    .venv/bin/python benchmarks/write_boundary_bench.py snippet --runs 7
    .venv/bin/python benchmarks/write_boundary_bench.py snippet --src /path/to/main . --runs 7

--src runs other checkouts' memcli with this interpreter (PYTHONPATH), taking turns, for a
before/after on the same machine and load. Prints medians in ms and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
WORK: list = []


def memcli(src: Path, *args) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")} | {"MEMCLI_SERVE": "off"}
    env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    # run from the bench folder: `-m` puts the working folder first on sys.path
    r = subprocess.run(
        [sys.executable, "-m", "memcli", *map(str, args)], env=env, capture_output=True, text=True, cwd=WORK[0]
    )
    ms = (time.perf_counter() - t0) * 1000
    if r.returncode not in (0, 1):
        raise SystemExit(f"memcli {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return ms


def baseline() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - t0) * 1000


def new_root(src: Path, path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    memcli(src, "init", path)


def rename(srcs: list, work: Path, runs: int, refs: int) -> None:
    times: dict = {src: [] for src in srcs}
    for i in range(runs):  # the checkouts take turns, so each sees the same load
        for src in srcs:
            root = work / "rename"
            new_root(src, root)
            (root / "memory/target.md").write_text(
                "---\nid: target\ntitle: Target\nsummary: s\n---\nBody.\n", encoding="utf-8"
            )
            for n in range(refs):
                (root / f"memory/ref-{n:05d}.md").write_text(
                    f"---\nid: ref-{n:05d}\ntitle: Ref {n}\nsummary: s\n---\nSee memory/target.md and [[target]].\n",
                    encoding="utf-8",
                )
            times[src].append(memcli(src, "--root", root, "rename", "target", f"renamed-{i}"))
    base = statistics.median(baseline() for _ in range(5))
    print(f"python -c pass: {base:.0f} ms")
    for src, t in times.items():
        print(
            f"{src}: rename, {refs} referring files: median {statistics.median(t):.0f} ms "
            f"(min {min(t):.0f}, max {max(t):.0f}, {runs} runs)"
        )


def snippet(srcs: list, work: Path, runs: int, lines: int) -> None:
    rng = random.Random(16)
    words = "alpha beta gamma delta latency cache node pod deploy".split()
    body = "\n".join(rng.choice(words) for _ in range(lines))
    roots = {}
    for k, src in enumerate(srcs):
        root = roots[src] = work / f"snippet-{k}"
        new_root(src, root)
        memcli(src, "--root", root, "remember", "Kubernetes rollback", "kubectl rollout undo deployment/web")
        (root / "memory/server-logs.md").write_text(
            f"---\ntitle: Server logs\nsummary: captured log lines\n---\n{body}\n", encoding="utf-8"
        )
        memcli(src, "--root", root, "recall", "latency cache")  # builds the search cache once
    big: dict = {src: [] for src in srcs}
    small: dict = {src: [] for src in srcs}
    base = []
    for _ in range(runs):  # interleaved, so all see the same load
        for src in srcs:
            big[src].append(memcli(src, "--root", roots[src], "recall", "latency cache"))
            small[src].append(memcli(src, "--root", roots[src], "recall", "kubernetes rollback"))
        base.append(baseline())
    print(f"python -c pass: {statistics.median(base):.0f} ms")
    for src in srcs:
        print(
            f"{src}: recall answered by the {lines:,}-line file {statistics.median(big[src]):.0f} ms, "
            f"by another memory {statistics.median(small[src]):.0f} ms"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("rename", "snippet"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--src", type=Path, nargs="+", default=[HERE])
    ap.add_argument("--refs", type=int, default=3000)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench-boundary"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    WORK.append(args.dir)
    args.src = [p.resolve() for p in args.src]
    print(
        f"src {', '.join(map(str, args.src))}; load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )
    (rename if args.what == "rename" else snippet)(
        args.src, args.dir, args.runs, args.refs if args.what == "rename" else args.lines
    )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
