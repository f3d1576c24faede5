"""Timing of the persistent search cache on a generated store.

    python benchmarks/recall_eval/bench_cache.py            # 100k documents
    python benchmarks/recall_eval/bench_cache.py --docs 20000 --dir /tmp/cache

Generates short mixed English/Chinese documents (Zipf-distributed words taken from the
evaluation memories), builds the cache, then reports the warm search latency in-process
(a fresh ``SearchCache`` object per query, as a CLI call would open it), a no-change
sync, and an incremental sync of a few changed files.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from itertools import accumulate
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from memcli.search.cache import SearchCache  # noqa: E402
from memcli.search.ranker import SearchDoc  # noqa: E402


def vocabularies() -> tuple[list[str], list[str]]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((HERE / "memory").glob("*.md")))
    english = sorted(set(re.findall(r"[a-z][a-z0-9_]{2,}", text.lower())))
    chars = sorted(set(re.findall(r"[\u4e00-\u9fff]", text)))
    rng = random.Random(7)
    rng.shuffle(english)
    # a long tail of made-up words and identifiers, as a real store of 100k notes has
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    tail = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(40000)}
    tail |= {f"{rng.choice(english)}_{rng.randint(1, 99)}" for _ in range(5000)}
    english += sorted(tail - set(english))
    chinese = sorted({"".join(rng.choice(chars) for _ in range(rng.choice((2, 2, 2, 3, 4)))) for _ in range(20000)})
    rng.shuffle(chinese)
    return english, chinese


class Generator:
    """Words follow a Zipf-Mandelbrot law, p(rank) ~ 1 / (rank + offset): with the default
    offset the commonest content word is about 0.6% of the words, as in real prose once
    stopwords are gone; ``offset=0`` gives a harsher corpus where it is about 9%."""

    def __init__(self, seed: int = 1, offset: float = 20.0) -> None:
        self.rng = random.Random(seed)
        self.english, self.chinese = vocabularies()
        self.en_cum = list(accumulate(1.0 / (i + 1 + offset) for i in range(len(self.english))))
        self.zh_cum = list(accumulate(1.0 / (i + 1 + offset) for i in range(len(self.chinese))))

    def words(self, n: int, lang: str) -> str:
        if lang == "en":
            return " ".join(self.rng.choices(self.english, cum_weights=self.en_cum, k=n))
        if lang == "zh":
            return "".join(
                w + self.rng.choice(("", "", "的", "，", "了"))
                for w in self.rng.choices(self.chinese, cum_weights=self.zh_cum, k=n)
            )
        return self.words(n // 2, "en") + " " + self.words(n - n // 2, "zh")

    def doc(self, i: int) -> SearchDoc:
        lang = self.rng.choices(("en", "zh", "mixed"), weights=(50, 35, 15))[0]
        r = self.rng
        return SearchDoc(
            key=f"mem-{i:06d}",
            title=self.words(r.randint(3, 7), lang),
            summary=self.words(r.randint(8, 16), lang),
            tags=tuple(self.words(1, "en" if lang == "en" else r.choice(("en", "zh"))) for _ in range(r.randint(1, 3))),
            aliases=tuple(self.words(r.randint(1, 3), r.choice(("en", "zh"))) for _ in range(r.randint(0, 2))),
            body=self.words(r.randint(30, 90), lang),
            importance=round(r.random(), 2),
            updated=f"2026-{r.randint(1, 11):02d}-{r.randint(1, 28):02d}T10:00:00Z",
        )


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # not on Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--zipf-offset", type=float, default=20.0, help="0 makes the commonest words far commoner")
    parser.add_argument("--dir", type=Path, default=None, help="cache folder (default: a temporary one)")
    parser.add_argument("--reuse", action="store_true", help="search an existing --dir without rebuilding")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the slowest queries")
    args = parser.parse_args(argv)

    gen = Generator(offset=args.zipf_offset)
    t = time.perf_counter()
    docs = {d.key: d for d in (gen.doc(i) for i in range(args.docs))}
    print(f"generated {len(docs)} docs in {time.perf_counter() - t:.1f}s")

    folder = args.dir or Path(tempfile.mkdtemp(prefix="memcli-bench-"))
    current = {k: "1" for k in docs}
    if not (args.reuse and args.dir):
        shutil.rmtree(folder, ignore_errors=True)
        cache = SearchCache(folder)
        t, cpu, kids = time.perf_counter(), time.process_time(), _children_cpu()
        stats = cache.sync(current, docs.get)
        build, cpu, kids = time.perf_counter() - t, time.process_time() - cpu, _children_cpu() - kids
        cache.close()
        size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        print(
            f"first build: {build:.1f}s for {stats.added} docs ({size:.0f} MB on disk); "
            f"CPU {cpu:.1f}s in this process + {kids:.1f}s in {cache.workers} worker processes"
        )

    rng = random.Random(3)
    sample = rng.sample(sorted(docs), 30)
    queries = [" ".join(docs[k].title.split()[:3]) for k in sample[:10]]
    queries += [docs[k].title[:6] for k in sample[10:20]]
    queries += [gen.words(2, "en") for _ in range(8)] + [gen.words(1, "zh") for _ in range(6)]
    queries += ["Redis cache eviction policy", "量子计算", "chrset mysq", "the a of"]
    times = []
    cpu_times = []
    hits = 0
    slowest = []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        with SearchCache(folder) as fresh:
            found = fresh.search(q, limit=5)
        times.append((time.perf_counter() - t) * 1000)
        cpu_times.append((time.process_time() - c) * 1000)
        slowest.append((times[-1], q))
        hits += bool(found)
    times.sort()
    cpu_times.sort()
    print(
        f"warm search ({len(queries)} queries, new connection each): median {statistics.median(times):.1f} ms, "
        f"p90 {times[int(len(times) * 0.9)]:.1f} ms, max {times[-1]:.1f} ms "
        f"(CPU median {statistics.median(cpu_times):.1f} ms, max {cpu_times[-1]:.1f} ms); {hits} returned hits"
    )
    if args.verbose:
        for ms, q in sorted(slowest, reverse=True)[:8]:
            print(f"    {ms:7.1f} ms  {q!r}")

    t = time.perf_counter()
    with SearchCache(folder) as fresh:
        fresh.sync(current, docs.get)
    print(f"no-change sync: {(time.perf_counter() - t) * 1000:.0f} ms")

    changed = dict(current)
    for k in sample[:10]:
        changed[k] = "2"
    t = time.perf_counter()
    with SearchCache(folder) as fresh:
        s = fresh.sync(changed, docs.get)
    print(f"incremental sync ({s.changed} changed): {(time.perf_counter() - t) * 1000:.0f} ms")
    if args.dir is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
