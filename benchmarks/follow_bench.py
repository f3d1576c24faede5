"""How `memcli serve` follows the details layer's files (``memcli.store.watcher``), this checkout's
beside another's (``--baseline SRC``, say ctypes inotify before watchdog), on a generated store,
rounds interleaved, medians:

- start-up: ``follow(root)`` (the watch and the first scan), the scan alone, and ``changed()`` over
  memcli's own code folders (what the server checks for an upgrade);
- the check before each request when nothing changed: ``detail_files()`` and the code watch;
- from a write's return to the server seeing it (``select`` on the followed object, then
  ``detail_files()`` holding the new fingerprint): an in-place append, a rename-save, a new file
  and a deletion; beside ``python -c pass``, the least time a client takes to send its next request.

    .venv/bin/python benchmarks/follow_bench.py --baseline /tmp/memcli-before --size 10000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(root: Path, rounds: int) -> dict:
    import memcli
    from memcli.store import layout
    from memcli.store.watcher import changed, follow

    out: dict = {}
    t = time.perf_counter()
    layout.scan_detail_files(root)
    out["the scan alone"] = [(time.perf_counter() - t) * 1000]
    t = time.perf_counter()
    followed = follow(root)
    out["start: follow(root), with its first scan"] = [(time.perf_counter() - t) * 1000]
    assert followed is not None
    code = sorted({d for d, _, fs in os.walk(os.path.dirname(memcli.__file__)) if "__pycache__" not in d})
    t = time.perf_counter()
    watch = changed(code)
    out[f"start: changed() over memcli's {len(code)} code folders"] = [(time.perf_counter() - t) * 1000]
    assert watch is not None
    times = []
    for _ in range(1000):
        t = time.perf_counter()
        followed.detail_files()
        times.append((time.perf_counter() - t) * 1e6)
    out["check, nothing changed: detail_files() (µs)"] = times
    times = []
    for _ in range(1000):
        t = time.perf_counter()
        watch()
        times.append((time.perf_counter() - t) * 1e6)
    out["check, nothing changed: the code watch (µs)"] = times
    files = sorted((root / "memory").glob("m*.md"))[:rounds]

    def in_place(i, p):
        with open(p, "a", encoding="utf-8") as f:
            f.write(f"\nedit {i}\n")
        return str(p.relative_to(root))

    def rename_save(i, p):
        tmp = p.with_name(f".memcli-tmp-{i}")
        tmp.write_text(p.read_text(encoding="utf-8") + f"\nsaved {i}\n", encoding="utf-8")
        os.replace(tmp, p)
        return str(p.relative_to(root))

    def new_file(i, p):
        q = p.with_name(f"new-{i}.md")
        q.write_text(f"---\ntitle: new {i}\n---\nbody\n", encoding="utf-8")
        return str(q.relative_to(root))

    def delete(i, p):
        q = p.with_name(f"new-{i}.md")
        q.unlink()
        return str(q.relative_to(root))

    def moved_away(i, p):
        q = p.with_name(f"new-{i}.md")
        q.write_text(f"---\ntitle: new {i}\n---\nbody\n", encoding="utf-8")
        followed.detail_files()  # made: seen, and scanned
        os.replace(q, root / f"away-{i}.md")  # out of memory/ altogether
        return str(q.relative_to(root))

    for name, change in (
        ("an in-place append", in_place),
        ("a rename-save", rename_save),
        ("a new file", new_file),
        ("a deletion", delete),
        ("a move out of memory/", moved_away),
    ):
        times = []
        for i, p in enumerate(files):
            followed.detail_files()
            key = change(i, p)
            t = time.perf_counter()
            want = layout.file_fingerprint(root / key, follow_symlinks=False)
            while True:
                select.select([followed], [], [], 2.0)
                if followed.detail_files().get(key) == want or time.perf_counter() - t > 5:
                    break
            times.append((time.perf_counter() - t) * 1000)
        out[f"seen after {name}"] = times
    followed.close()
    watch.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, help="a folder holding the other memcli package")
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5, help="processes per side")
    ap.add_argument("--rounds", type=int, default=20, help="changes of each kind per process")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), int(args.child[1]))))
        return
    if args.baseline is None:
        ap.error("--baseline SRC is needed")
    sides = {"this": HERE.parent, "other": args.baseline.resolve()}
    store = args.dir / f"store-{args.size}"
    if not (store / "MEMORY.md").exists():
        subprocess.run([sys.executable, str(HERE / "gen_store.py"), str(store), str(args.size)], check=True)
    got: dict = {k: {} for k in sides}
    base: list = []
    for _ in range(args.runs):
        for k, src in sides.items():
            root = args.dir / f"follow-{args.size}-{k}"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(store, root, ignore=shutil.ignore_patterns(".memcli"))
            env = {**os.environ, "PYTHONPATH": str(src)}
            cmd = [sys.executable, str(HERE / Path(__file__).name), "--child", str(root), str(args.rounds)]
            out = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
            for name, values in out.items():
                got[k].setdefault(name, []).extend(values)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            base.append((time.perf_counter() - t) * 1000)
    print(
        f"\n{date.today()} · {platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · {args.size:,} memories · {args.runs} processes a side, interleaved · load {os.getloadavg()[0]:.1f}\n"
    )
    print(f"| measure | this ({sides['this']}) median | max | other ({sides['other']}) median | max | samples |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in got["this"]:
        a, b = got["this"][name], got["other"][name]
        unit = "" if "(µs)" in name else " ms"
        print(
            f"| {name} | {statistics.median(a):.2f}{unit} | {max(a):.2f}{unit} | {statistics.median(b):.2f}{unit}"
            f" | {max(b):.2f}{unit} | {len(a)} |"
        )
    print(f"| python -c pass | {statistics.median(base):.1f} ms | {max(base):.1f} ms | | | {len(base)} |")


if __name__ == "__main__":
    main()
