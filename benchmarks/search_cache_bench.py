"""The details layer's search cache of this checkout beside another checkout's (``--baseline SRC``,
say the packed postings before FTS5), on generated stores (benchmarks/gen_store.py), rounds
interleaved, medians:

- in one process: the build of a new cache, a recall's sync-and-search (a word only one memory
  holds, two common words, a typo), one changed memory synced into the full cache, the file size;
- through the CLI (``python -m memcli ... recall WORDS --layer details``, no server): the rare
  word and the common words, beside ``grep -ril`` over the same files and ``python -c pass``.

    .venv/bin/python benchmarks/search_cache_bench.py --baseline /tmp/memcli-before
    .venv/bin/python benchmarks/search_cache_bench.py --baseline SRC --sizes 1000 10000 --runs 9

SRC is a folder holding a ``memcli`` package (``git archive REV memcli | tar -x -C SRC``); each
side runs with its folder first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_store import DETAIL_WORD  # noqa: E402

QUERIES = {"rare word": DETAIL_WORD, "two common words": "deploy rollback", "typo": "rollbak"}
COMMON = QUERIES["two common words"]
DETAILS = ["--layer", "details"]


def child(docs_file: Path, folder: Path, runs: int, workers: int, build: bool) -> dict:
    """Measures taken in this process, with whichever memcli is first on the path."""
    from memcli.search.cache import FILENAME, SearchCache
    from memcli.search.ranker import SearchDoc

    docs = {
        d["key"]: SearchDoc(**{**d, "tags": tuple(d["tags"]), "aliases": tuple(d["aliases"])})
        for d in json.loads(docs_file.read_text("utf-8"))
    }
    current = dict.fromkeys(docs, "1")
    out: dict = {}

    def clock() -> tuple[float, float]:
        return time.perf_counter() * 1000, time.process_time() * 1000

    def since(start: tuple[float, float]) -> list[float]:
        return [now - then for now, then in zip(clock(), start)]  # wall, CPU of this process

    if build:
        shutil.rmtree(folder, ignore_errors=True)
        t = clock()
        SearchCache(folder, workers=workers).sync(current, docs.get)
        out["build"] = [since(t)]
    for name, query in QUERIES.items():
        times = []
        for _ in range(runs + 1):  # the first one warms the page cache
            t = clock()
            with SearchCache(folder) as cache:
                cache.sync(current, docs.get)
                cache.search(query, limit=5)
            times.append(since(t))
        out[f"recall: {name}"] = times[1:]
    key = sorted(docs)[len(docs) // 3]
    times = []
    with SearchCache(folder) as cache:
        for i in range(runs):
            changed = {**current, key: f"edit {i}"}
            t = clock()
            cache.sync(changed, docs.get)
            times.append(since(t))
        cache.sync(current, docs.get)
        cache._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["one write into the full cache"] = times
    size = sum(p.stat().st_size for p in folder.iterdir() if p.name.startswith(FILENAME)) / 1e6
    out["file MB"] = [[size, size]]
    return out


def docs_of(root: Path) -> Path:
    """The store's memories as the details layer reads them, written once as JSON."""
    target = root.with_name(root.name + ".docs.json")
    if not target.exists():
        from memcli.search.docs import detail_doc
        from memcli.store import layout

        docs = [detail_doc(root, key) for key in layout.scan_detail_files(root)]
        target.write_text(json.dumps([{f: getattr(d, f) for f in d.FIELDS} for d in docs if d is not None]), "utf-8")
    return target


def timed(cmd: list, env: dict | None = None, cwd=None) -> list[float]:
    """[wall, CPU (user + system)] milliseconds of one whole process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(p.pid, 0)
    ms = (time.perf_counter() - t) * 1000
    if os.waitstatus_to_exitcode(status) and cmd[0] != "grep":
        print(f"exit {os.waitstatus_to_exitcode(status)}: {' '.join(cmd)}", file=sys.stderr)
    return [ms, (usage.ru_utime + usage.ru_stime) * 1000]


def _medians(pairs: list) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, help="a folder holding the other memcli package")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--workers", type=int, default=None, help="processes for a large build (default: the cache's)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        docs_file, folder, runs, workers, build = args.child
        result = child(Path(docs_file), Path(folder), int(runs), int(workers), build == "1")
        print(json.dumps(result))
        return
    if args.baseline is None:
        ap.error("--baseline SRC is needed")
    sides = {"this": HERE.parent, "other": args.baseline.resolve()}
    envs = {k: {**os.environ, "PYTHONPATH": str(src), "MEMCLI_SERVE": "off"} for k, src in sides.items()}
    for src in sides.values():  # compiled ahead, as an install is: each process would compile again otherwise
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "memcli")], check=True)
    args.dir.mkdir(parents=True, exist_ok=True)
    os.chdir(args.dir)  # not the checkout: `python -m` puts the working folder first on the path
    rows: list = []
    for n in args.sizes:
        root = args.dir / f"store-{n}"
        if not (root / "MEMORY.md").exists():
            subprocess.run([sys.executable, str(HERE / "gen_store.py"), str(root), str(n)], check=True)
        docs_file = docs_of(root)
        copies = {}
        for k in sides:  # each side its own copy of the store (hard links) and its own cache
            copy = args.dir / f"store-{n}-{k}"
            if not copy.exists():
                shutil.copytree(root, copy, copy_function=os.link, ignore=shutil.ignore_patterns(".memcli"))
            copies[k] = copy
        got: dict = {k: {} for k in sides}
        workers = args.workers if args.workers is not None else min(os.cpu_count() or 1, 4)
        builds = 1 if n >= 100_000 else 3
        for _ in range(builds):
            for k in sides:
                cmd = [
                    sys.executable,
                    str(HERE / Path(__file__).name),
                    "--child",
                    str(docs_file),
                    str(copies[k] / ".memcli" / "search"),
                    str(args.runs),
                    str(workers),
                    "1",
                ]
                out = json.loads(subprocess.run(cmd, env=envs[k], capture_output=True, text=True, check=True).stdout)
                for name, values in out.items():
                    got[k].setdefault(name, []).extend(values)
        for k in sides:  # the CLI's first details recall builds its own cache: out of the timed runs
            timed([sys.executable, "-m", "memcli", "--root", str(copies[k]), "recall", DETAIL_WORD, *DETAILS], envs[k])
        base: dict = {"python -c pass": [], f"grep -ril {DETAIL_WORD}": []}
        for _ in range(args.runs):
            base["python -c pass"].append(timed([sys.executable, "-c", "pass"]))
            base[f"grep -ril {DETAIL_WORD}"].append(timed(["grep", "-ril", DETAIL_WORD, "memory/"], cwd=root))
            for k in sides:
                for label, query in ((f"CLI recall {DETAIL_WORD}", DETAIL_WORD), (f"CLI recall {COMMON}", COMMON)):
                    cmd = [sys.executable, "-m", "memcli", "--root", str(copies[k]), "recall", query, *DETAILS]
                    ms = timed(cmd, envs[k])
                    got[k].setdefault(label, []).append(ms)
        for name in got["this"]:
            this, other = got["this"][name], got["other"][name]
            rows.append((n, name, _medians(this), _medians(other), len(this)))
        for name, values in base.items():
            rows.append((n, name, _medians(values), None, len(values)))
        print(f"{n} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(
        f"\n{date.today()} · {platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()}"
        f" · SQLite {__import__('sqlite3').sqlite_version} · load {os.getloadavg()[0]:.1f} at the end\n"
    )
    print(f"| memories | measure | this ({sides['this']}): wall, CPU | other ({sides['other']}): wall, CPU | runs |")
    print("|---:|---|---:|---:|---:|")
    for n, name, this, other, runs in rows:
        if name == "file MB":
            print(f"| {n:,} | {name} | {this[0]:.1f} MB | {other[0]:.1f} MB | 1 |")
            continue
        pair = "" if other is None else f"{other[0]:.1f}, {other[1]:.1f} ms"
        print(f"| {n:,} | {name} | {this[0]:.1f}, {this[1]:.1f} ms | {pair} | {runs} |")


if __name__ == "__main__":
    main()
