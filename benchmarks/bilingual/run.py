"""Bilingual recall evaluation: hit@1, hit@3 and false positives per split and per kind.

    python benchmarks/bilingual/run.py                          # dev and test, every built-in engine
    python benchmarks/bilingual/run.py --engine memcli --engine bm25-cjk
    python benchmarks/bilingual/run.py --engine memcli-semantic   # needs the `semantic` extra
    python benchmarks/bilingual/run.py --engine memcli-semantic --semantic-cut 0.3 --semantic-cut 0.4
    python benchmarks/bilingual/run.py --threshold 0.2 --threshold 0.5   # memcli at other thresholds
    python benchmarks/bilingual/run.py --cli                    # memcli through the real `memcli recall`
    python benchmarks/bilingual/run.py --engine mypkg.sem:search  # any (root, query) -> [ids] function
    python benchmarks/bilingual/run.py --show misses --split dev
    python benchmarks/bilingual/run.py --split fresh            # the one-time final check
    python benchmarks/bilingual/run.py --also translation --also both   # with the other phrasings

hit@k: share of the queries that expect a memory whose id is among the first k results.
FP: share of the `expect: null` queries (unrelated, near-domain) offered an answer: for memcli, a
first hit that reaches the threshold (`good` or `strong`; a `weak` candidate is listed as no
answer); for BM25, anything returned. memcli's list scored for hit@k is the best 5 (-k 5).
right: the questions answered right first, and those none answers offered no answer.
xl@1: hit@1 over the cross-lingual queries only.
--also MODE adds each engine given the question's other phrasings (each query's `also`: a
translation into the other language, then a paraphrase): `translation`, `paraphrase` or `both`.
memcli gets them as `recall(..., also=[...])`; any other engine is run once per phrasing and
its lists are fused by reciprocal rank (the same fusion memcli uses).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import math
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

NOW = "2026-12-01T00:00:00Z"  # fixed clock: recency weighting does not drift between runs
LIMIT = 5
SPLITS = ("dev", "test", "fresh", "fresh2", "fresh3", "fresh4", "fresh5")
FINAL = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "newuser", "newuser2")  # one-time final checks
# long: a prompt of several sentences as typed to an agent; log: a pasted log line or stack trace
KINDS = ("keyword", "paraphrase", "cross-lingual", "typo", "mixed", "long", "log", "unrelated", "near-domain")
NULL_KINDS = ("unrelated", "near-domain")

Engine = Callable[..., list]  # (root, query) -> ids; memcli's also take also=[phrasings]
ENGINES: dict[str, Engine] = {}


def engine(name: str):
    def register(fn: Engine) -> Engine:
        ENGINES[name] = fn
        return fn

    return register


# ---------- memcli ----------


@functools.lru_cache(maxsize=None)
def _memory(root: Path):
    from memcli import Memory

    return Memory(root)


class Listed(list):
    """Ids, best first, and whether the question asked without -k was offered an answer (a hit
    whose confidence reaches the threshold: `good` or `strong`, not a `weak` candidate)."""

    answered = True


def offered(got) -> bool:
    """Whether an engine's result offers an answer: memcli's says (``Listed``); any other list does
    when it holds anything (BM25 never abstains)."""
    return bool(got) and getattr(got, "answered", True)


def memcli_recall(root: Path, query: str, threshold: float | None = None, also=(), strict: bool = False) -> list:
    """The one call into memcli's recall API (a change of that API is an edit here). ``strict``:
    the gate of memory injected unasked instead of a question's. The list is the best LIMIT
    (``-k``, for hit@3); whether the question is offered an answer is what the question asked
    without ``-k`` gets (`memcli recall QUESTION`, MCP `recall`, `context`): its first hit reaching
    the threshold (`good` or `strong`). hit@1 reads the list; false positives and `right` read the
    offer (a question none answers whose candidates are all marked weak is not answered)."""
    from memcli.recall import recall

    kw = {"policy": "strict"} if strict else {}
    store = _memory(root).store
    listed = Listed(
        h.id for h in recall(store, query, limit=LIMIT, threshold=threshold, now=NOW, also=list(also), **kw).hits
    )
    asked = recall(store, query, threshold=threshold, now=NOW, also=list(also), **kw).hits
    listed.answered = bool(asked) and asked[0].sure != "weak"
    return listed


def _semantic_extra(on: bool):
    """The `semantic` extra's layer on or off for a block (benchmarks/locomo.py has the switch)."""
    sys.path.insert(0, str(HERE.parent))
    from locomo import semantic_extra

    return semantic_extra(on)


@engine("memcli")
def memcli_engine(root: Path, query: str, also=()) -> list:
    """memcli's lexical layers (the extra turned off if it is installed)."""
    with _semantic_extra(False):
        return memcli_recall(root, query, also=also)


@engine("memcli-strict")
def memcli_strict_engine(root: Path, query: str, also=()) -> list:
    """memcli's lexical layers under the strict gate (what `context` and the hook inject)."""
    with _semantic_extra(False):
        return memcli_recall(root, query, also=also, strict=True)


@engine("memcli-semantic")
def memcli_semantic_engine(root: Path, query: str, also=()) -> list:
    """memcli with the `semantic` extra's layer last in the cascade (the configured provider)."""
    with _semantic_extra(True):
        return memcli_recall(root, query, also=also)


def memcli_semantic_at(cut: float) -> Engine:
    """memcli with the extra, accepting a meaning-only match at another confidence cut."""

    def search(root: Path, query: str, also=()) -> list:
        from memcli.search import semantic

        saved, semantic.DEFAULT_CUT = semantic.DEFAULT_CUT, cut
        try:
            with _semantic_extra(True):
                return memcli_recall(root, query, also=also)
        finally:
            semantic.DEFAULT_CUT = saved

    return search


def memcli_provider(settings: dict) -> Engine:
    """memcli with the extra's layer using another embedding provider (``embed.*`` settings)."""

    def search(root: Path, query: str, also=()) -> list:
        from memcli.search import providers, semantic

        config = dict(settings)
        saved = semantic.provider_for
        semantic.provider_for = lambda mem: providers.get(config)
        try:
            with _semantic_extra(True):
                return memcli_recall(root, query, also=also)
        finally:
            semantic.provider_for = saved

    return search


def memcli_at(threshold: float) -> Engine:
    def search(root: Path, query: str, also=()) -> list:
        with _semantic_extra(False):
            return memcli_recall(root, query, threshold, also=also)

    return search


def memcli_cli(root: Path, query: str) -> list:
    """`memcli recall --json` in a subprocess, as an agent calls it."""
    cmd = [sys.executable, "-m", "memcli", "--root", str(root), "recall", "--json", "-k", str(LIMIT), query]
    out = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8").stdout
    try:
        data = json.loads(out).get("data") or {}
    except json.JSONDecodeError:
        raise SystemExit(f"memcli recall printed no JSON envelope for {query!r}: {out[:200]!r}")
    return [h["id"] for h in data.get("hits") or []]


# ---------- BM25 baselines (no abstention: anything with a positive score is returned) ----------

WORD = re.compile(r"\w+")
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK_SPLIT = re.compile(f"[{CJK}]+|[^\\W{CJK}]+")
CJK_RUN = re.compile(f"[{CJK}]")


def words(text: str) -> list:
    return WORD.findall(text.lower())


def cjk_bigrams(text: str) -> list:
    out = []
    for run in CJK_SPLIT.findall(text.lower()):
        if CJK_RUN.match(run):
            out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        else:
            out.append(run)
    return out


class BM25:
    def __init__(self, docs: list, tokenize: Callable[[str], list], k1: float = 1.2, b: float = 0.75):
        self.keys = [k for k, _ in docs]
        self.tokenize, self.k1, self.b = tokenize, k1, b
        self.tfs = [Counter(tokenize(text)) for _, text in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avgdl = sum(self.lens) / max(len(self.lens), 1)
        self.df = Counter(t for tf in self.tfs for t in tf)

    def search(self, query: str, limit: int = LIMIT) -> list:
        n = len(self.keys)
        terms = set(self.tokenize(query))
        scored = []
        for key, tf, dl in zip(self.keys, self.tfs, self.lens):
            s = 0.0
            for t in terms:
                if t in tf:
                    idf = math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                    s += idf * tf[t] * (self.k1 + 1) / (tf[t] + self.k1 * (1 - self.b + self.b * dl / self.avgdl))
            if s > 0:
                scored.append((-s, key))
        return [k for _, k in sorted(scored)[:limit]]


@functools.lru_cache(maxsize=None)
def _documents(root: Path) -> tuple:
    mem = _memory(root).store
    docs = []
    for path in mem.detail_files():
        d = mem.load(path)
        docs.append((d.id, "\n".join([d.title, d.summary, " ".join(d.tags), " ".join(d.aliases), d.body])))
    return tuple(docs)


@functools.lru_cache(maxsize=None)
def _bm25(root: Path, tokenizer: str) -> BM25:
    return BM25(list(_documents(root)), {"words": words, "stem": stemmed}.get(tokenizer, cjk_bigrams))


@engine("bm25")
def bm25_engine(root: Path, query: str) -> list:
    return _bm25(root, "words").search(query)


@engine("bm25-cjk")
def bm25_cjk_engine(root: Path, query: str) -> list:
    return _bm25(root, "cjk").search(query)


def stemmed(text: str) -> list:
    """``words`` through memcli's English stemmer (plain BM25 + stem, as benchmarks/locomo.py's)."""
    from memcli.search.tokenize import stem

    return [stem(w) for w in words(text)]


@engine("bm25-stem")
def bm25_stem_engine(root: Path, query: str) -> list:
    return _bm25(root, "stem").search(query)


def plugin(spec: str) -> Engine:
    """`package.module:function`, a function (root, query) -> list of ids."""
    mod, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"unknown engine {spec!r}: built-in ones are {', '.join(ENGINES)}, or give module:function")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise SystemExit(f"cannot load engine {spec!r}: {e}")


# ---------- queries and scoring ----------


def load_queries(root: Path, split: str) -> list:
    import yaml

    path = root / f"queries-{split}.yaml"
    queries = yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]
    for q in queries:
        if q.get("kind") not in KINDS:
            raise SystemExit(
                f"{path.name}: {q.get('q')!r} has kind {q.get('kind')!r}; expected one of {', '.join(KINDS)}"
            )
        if (q["expect"] is None) != (q["kind"] in NULL_KINDS):
            raise SystemExit(f"{path.name}: {q['q']!r}: kinds {', '.join(NULL_KINDS)} and only they expect null")
        q["split"] = split
    return queries


def _share(num: int, den: int):
    return round(num / den, 4) if den else None


def score(results: list) -> dict:
    """results: (query dict, returned ids) pairs -> the figures of one engine on one split."""

    def block(rows):
        pos = [(q, got) for q, got in rows if q["expect"]]
        neg = [(q, got) for q, got in rows if not q["expect"]]
        return {
            "n": len(rows),
            "hit@1": _share(sum(got[:1] == [q["expect"]] for q, got in pos), len(pos)),
            "hit@3": _share(sum(q["expect"] in got[:3] for q, got in pos), len(pos)),
            "FP": _share(sum(offered(got) for _, got in neg), len(neg)),
            # right first: the answer first, or no answer offered for a question none answers
            "right": sum(got[:1] == [q["expect"]] for q, got in pos) + sum(not offered(got) for _, got in neg),
        }

    out = block(results)
    for kind in NULL_KINDS:
        out[f"FP {kind}"] = block([r for r in results if r[0]["kind"] == kind])["FP"]
    out["xl@1"] = block([r for r in results if r[0]["kind"] == "cross-lingual"])["hit@1"]
    out["kinds"] = {k: block([r for r in results if r[0]["kind"] == k]) for k in KINDS}
    return out


ALSO = {"translation": (0,), "paraphrase": (1,), "both": (0, 1)}


def phrasings(q: dict, mode: str | None) -> list:
    return [q["also"][i] for i in ALSO[mode] if i < len(q.get("also") or ())] if mode else []


def takes_also(fn) -> bool:
    import inspect

    try:
        return "also" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def rrf(lists: list, k: int = 10) -> list:
    """Reciprocal rank fusion of ranked id lists (memcli.recall.cascade.fuse's rule for ids)."""
    score: dict = {}
    first: dict = {}
    for n, ids in enumerate(lists):
        for rank, i in enumerate(ids):
            score[i] = score.get(i, 0.0) + 1.0 / (k + rank + 1)
            first.setdefault(i, (n, rank))
    return sorted(score, key=lambda i: (-score[i], first[i]))[:LIMIT]


def ask(fn, root: Path, q: dict, mode: str | None) -> list:
    other = phrasings(q, mode)
    if not other:
        return fn(root, q["q"])
    if takes_also(fn):
        return fn(root, q["q"], also=other)
    return rrf([list(fn(root, text)) for text in [q["q"], *other]])


def run(engines: dict, root: Path, sections: dict, show: str | None, modes: list | None = None) -> dict:
    report = {}
    for section, queries in sections.items():
        report[section] = {}
        for mode in modes or [None]:
            for name, fn in engines.items():
                label = f"{name} +{mode}" if mode else name
                results, ms = [], []
                for q in queries:
                    t0 = time.perf_counter()
                    got = ask(fn, root, q, mode)
                    ms.append((time.perf_counter() - t0) * 1000)
                    results.append((q, got))
                figures = score(results)
                figures["ms/query (median)"] = round(statistics.median(ms), 2) if ms else None
                report[section][label] = figures
                if show:
                    for q, got in results:
                        right = got[:1] == [q["expect"]] if q["expect"] else not offered(got)
                        if show == "all" or not right:
                            print(f"  {section} {label} [{q['kind']}] {q['q']!r}: expect {q['expect']}, got {got[:3]}")
    return report


def fmt(x) -> str:
    return "   -" if x is None else f"{x:4d}" if isinstance(x, int) else f"{x:4.2f}"


def print_tables(report: dict) -> None:
    cols = ("hit@1", "hit@3", "xl@1", "FP unrelated", "FP near-domain", "right")
    head = ("hit@1", "hit@3", "xl@1", "FP-unrel", "FP-near", "right")
    names = [n for sec in report.values() for n in sec]
    w = max(12, *(len(n) for n in names))
    print(f"| split | engine{' ' * (w - 6)} |   n | " + " | ".join(f"{h:>8}" for h in head) + " | ms/q |")
    print(f"|---|{'-' * (w + 2)}|---:|" + "|".join("-------:" for _ in head) + "|---:|")
    for section, engines in report.items():
        for name, f in engines.items():
            print(
                f"| {section} | {name:{w}} | {f['n']:>3} | "
                + " | ".join(f"{fmt(f[c]):>8}" for c in cols)
                + f" | {f['ms/query (median)']:.1f} |"
            )
    print()
    print("per kind: hit@1 (FP for unrelated and near-domain), n in brackets")
    print(f"| split | engine{' ' * (w - 6)} | " + " | ".join(KINDS) + " |")
    print(f"|---|{'-' * (w + 2)}|" + "|".join("---:" for _ in KINDS) + "|")
    for section, engines in report.items():
        for name, f in engines.items():
            cells = []
            for k in KINDS:
                b = f["kinds"][k]
                cells.append(f"{fmt(b['FP'] if k in NULL_KINDS else b['hit@1'])} ({b['n']})")
            print(f"| {section} | {name:{w}} | " + " | ".join(cells) + " |")


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="memory root holding queries-*.yaml (default: here)")
    parser.add_argument(
        "--split",
        help="dev, test, fresh, fresh2 ... fresh5, all-but-fresh, or the NAME of any "
        "queries-NAME.yaml under --root (default: dev and test, each on its own)",
    )
    parser.add_argument(
        "--engine",
        action="append",
        metavar="NAME",
        help=f"repeatable; one of {', '.join(ENGINES)} or module:function (default: all built-in)",
    )
    parser.add_argument(
        "--threshold",
        action="append",
        type=float,
        default=[],
        help="repeatable; adds the engine memcli@T: recall with this threshold",
    )
    parser.add_argument(
        "--semantic-cut",
        action="append",
        type=float,
        default=[],
        help="repeatable; adds memcli-semantic accepting a meaning-only match at this confidence (the trade-off curve)",
    )
    parser.add_argument(
        "--embed-url",
        metavar="URL",
        help="adds memcli-semantic@openai: the extra with an OpenAI-compatible embeddings endpoint",
    )
    parser.add_argument("--embed-model", default="default", help="the model name sent to --embed-url")
    parser.add_argument(
        "--embed-prefixes",
        nargs=2,
        metavar=("QUERY", "PASSAGE"),
        default=("", ""),
        help='texts put before questions and memories (E5: "query: " "passage: ")',
    )
    parser.add_argument("--cli", action="store_true", help="memcli engine through the real `memcli recall` subprocess")
    parser.add_argument(
        "--also",
        action="append",
        choices=["none", *ALSO],
        default=[],
        help="repeatable; each engine also given the other phrasings of every question (none: without them)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--show", choices=["misses", "all"], help="list per-query results")
    args = parser.parse_args(argv)

    root = args.root.resolve()
    if args.cli and args.threshold:
        parser.error("--threshold goes through the library; `memcli recall` has no threshold option")
    engines = {}
    from memcli.search.embed import available

    default = [
        n for n in ENGINES if n not in ("memcli-semantic", "memcli-strict") or (n == "memcli-semantic" and available())
    ]
    for name in args.engine or default:
        engines[name] = ENGINES[name] if name in ENGINES else plugin(name)
    if args.cli and "memcli" in engines:
        engines["memcli"] = memcli_cli
    if args.embed_url:
        engines["memcli-semantic@openai"] = memcli_provider(
            {
                "embed.provider": "openai",
                "embed.url": args.embed_url,
                "embed.model": args.embed_model,
                "embed.query_prefix": args.embed_prefixes[0],
                "embed.passage_prefix": args.embed_prefixes[1],
            }
        )
    for t in args.threshold:
        engines[f"memcli@{t:g}"] = memcli_at(t)
    for c in args.semantic_cut:
        engines[f"memcli-semantic cut={c:g}"] = memcli_semantic_at(c)

    if args.split and args.split != "all-but-fresh" and not (root / f"queries-{args.split}.yaml").is_file():
        parser.error(f"no queries-{args.split}.yaml under {root}")
    if args.split in FINAL:
        print(
            f"split {args.split}: the one-time final check. Score it once, after the work it judges is done, "
            "and do not tune on what it shows.",
            file=sys.stderr,
        )
        sections = {args.split: load_queries(root, args.split)}
    elif args.split == "all-but-fresh":
        sections = {"dev+test": load_queries(root, "dev") + load_queries(root, "test")}
    elif args.split:
        sections = {args.split: load_queries(root, args.split)}
    else:
        sections = {"dev": load_queries(root, "dev"), "test": load_queries(root, "test")}

    modes = [None if m == "none" else m for m in args.also] or None
    report = run(engines, root, sections, args.show, modes)
    n_mem = len(_documents(root))
    if args.json:
        print(
            json.dumps(
                {
                    "memories": n_mem,
                    "limit": LIMIT,
                    "now": NOW,
                    "cli": args.cli,
                    "final_check": args.split in FINAL,
                    "results": report,
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        print(
            f"{n_mem} memories; "
            + ", ".join(f"{s}: {len(q)} queries" for s, q in sections.items())
            + (" (memcli via the CLI)" if args.cli else "")
        )
        print_tables(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
