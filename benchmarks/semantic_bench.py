"""The semantic layer (the `semantic` extra): quality against lexical recall and BM25, and the
cost per call.

    python benchmarks/semantic_bench.py quality --set recall_eval --split dev
    python benchmarks/semantic_bench.py quality --set PATH/TO/bilingual --split dev
    python benchmarks/semantic_bench.py locomo ../shared/data/locomo-dev/locomo-dev.json
    python benchmarks/semantic_bench.py timing --docs 1000 10000

quality: hit@1 on questions that have an answer (and on the cross-lingual ones), and the share
of unrelated and near-domain questions that get any answer (false positives), for BM25 (answers
everything), memcli's lexical ranker as shipped, and lexical + semantic along a sweep of the
acceptance cut (the trade-off curve). The old set's aliases are stripped: users rarely write them.

locomo: any@5 on LoCoMo dev with one memory per dialog turn (the file is read where it lies and
never copied): lexical as shipped, lexical with no cut-offs, and lexical + semantic as a plain
recall runs it (only when lexical finds nothing, abstention kept).

timing: whole `memcli recall --json` processes on generated roots with a warm embedding cache:
a query the index answers, a query only embeddings answer (cold, no server), and the same with
`memcli serve` running. Medians of --runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE / "recall_eval"))

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
LEX_FLOOR = 0.1  # lexical evidence is fetched down to this relevance (lower: slower, same dev figures)
# A lexical answer: a candidate that may answer (``Scored.evidence``) reaching LEXICAL_ANSWER; the
# list it answers with holds the candidates reaching LEXICAL_LIST.
LEXICAL_ANSWER, LEXICAL_LIST = 0.35, 0.2
CUTS = [0.30, 0.35, 0.40, 0.425, 0.45, 0.475, 0.50, 0.55, 0.60, 0.70, 0.80, 9.0]


# -- data ----------------------------------------------------------------------------------------


def load_set(path: str, split: str):
    """(docs, queries) with queries as dicts: q, expect (id or None), kind, cross (bool)."""
    import yaml

    from memcli.search.ranker import SearchDoc

    if path == "recall_eval":
        from run import load_docs  # benchmarks/recall_eval/run.py

        docs = [
            SearchDoc(
                key=d.key,
                title=d.title,
                summary=d.summary,
                tags=d.tags,
                body=d.body,
                importance=d.importance,
                updated=d.updated,
            )
            for d, _ in load_docs(HERE / "recall_eval" / "memory")
        ]
        raw = yaml.safe_load((HERE / "recall_eval" / "queries.yaml").read_text(encoding="utf-8"))["queries"]
        queries = [
            {"q": q["q"], "expect": q["expect"], "kind": q["kind"], "cross": q["kind"] == "cross"}
            for q in raw
            if split == "all" or q.get("split") == split
        ]
        return docs, queries
    root = Path(path)
    from run import load_docs

    mem_dir = root / "memories" if (root / "memories").is_dir() else root / "memory"
    docs = [
        SearchDoc(
            key=d.key,
            title=d.title,
            summary=d.summary,
            tags=d.tags,
            aliases=d.aliases,
            body=d.body,
            importance=d.importance,
            updated=d.updated,
        )
        for d, _ in load_docs(mem_dir)
    ]
    raw = yaml.safe_load((root / f"queries-{split}.yaml").read_text(encoding="utf-8"))
    raw = raw.get("queries", raw) if isinstance(raw, dict) else raw
    queries = []
    for q in raw:
        expect = q.get("expect")
        if isinstance(expect, list):
            expect = expect[0] if expect else None
        kind = str(q.get("kind") or "")
        cross = (
            bool(q.get("cross"))
            or "cross" in kind
            or (q.get("lang") and q.get("doc_lang") and q["lang"] != q["doc_lang"])
        )
        queries.append({"q": q["q"] if "q" in q else q["query"], "expect": expect, "kind": kind, "cross": bool(cross)})
    return docs, queries


# -- quality -------------------------------------------------------------------------------------


def score(results: dict, queries: list) -> dict:
    pos = [q for q in queries if q["expect"]]
    cross = [q for q in pos if q["cross"]]
    near = [q for q in queries if not q["expect"] and "near" in q["kind"]]
    unrel = [q for q in queries if not q["expect"] and "near" not in q["kind"]]

    def h1(qs):
        return sum(1 for q in qs if results[q["q"]][:1] == [q["expect"]]) / max(len(qs), 1)

    def fp(qs):
        return sum(1 for q in qs if results[q["q"]]) / max(len(qs), 1)

    return {
        "hit@1": h1(pos),
        "cross": h1(cross),
        "FP-unrel": fp(unrel),
        "FP-near": fp(near),
        "n": (len(pos), len(cross), len(unrel), len(near)),
    }


def lexical_first(v, keys, vectors, lexical, rule) -> list:
    """The lexical answer when the words hold one, else the semantic step (the best 5)."""
    from memcli.search import semantic

    if any(s.evidence and s.relevance >= LEXICAL_ANSWER for s in lexical):
        return [s.key for s in lexical if s.relevance >= LEXICAL_LIST][:5]
    return [k for k, _, _ in semantic.rank(v, keys, vectors, lexical, 5, rule)]


def quality(args) -> None:
    import numpy as np

    from memcli.search import embed, semantic
    from memcli.search.ranker import MemoryIndex
    from run import baseline_searcher

    docs, queries = load_set(args.set, args.split)
    index = MemoryIndex(docs)
    bm25 = baseline_searcher(docs)
    model = embed.load()
    keys = [d.key for d in docs]
    t0 = time.perf_counter()
    vecs = model.encode([t for d in docs for t in (semantic.head_text(d), semantic.full_text(d))])
    vectors = vecs.reshape(len(docs), 2, -1).astype(np.float16)
    build = time.perf_counter() - t0
    qv = model.encode([q["q"] for q in queries])
    lexical = {q["q"]: index.search(q["q"], limit=50, threshold=args.lex_floor, now=NOW) for q in queries}
    shipped = {q["q"]: [s.key for s in index.search(q["q"], limit=5, now=NOW)] for q in queries}
    rows = [("bm25", score({q["q"]: bm25(q["q"]) for q in queries}, queries)), ("lexical", score(shipped, queries))]
    weights = (
        [(args.lex_weight, args.margin_weight)]
        if not args.grid
        else [(lw, mw) for lw in (0.3, 0.6, 1.0) for mw in (0.0, 1.0, 2.0)]
    )
    for lw, mw in weights:
        for cut in CUTS:
            rule = semantic.Rule(cut=cut, lex_weight=lw, margin_weight=mw)
            res = {q["q"]: lexical_first(v, keys, vectors, lexical[q["q"]], rule) for q, v in zip(queries, qv)}
            rows.append((f"sem lw={lw} mw={mw} cut={cut}", score(res, queries)))
    n = rows[0][1]["n"]
    print(
        f"{len(docs)} memories ({build * 1000:.0f} ms to embed), {len(queries)} queries "
        f"(answerable {n[0]}, cross-lingual {n[1]}, unrelated {n[2]}, near-domain {n[3]})"
    )
    print(f"{'engine':36} {'hit@1':>6} {'cross':>6} {'FP-unr':>7} {'FP-near':>7}")
    for name, m in rows:
        print(f"{name:36} {m['hit@1']:>6.2f} {m['cross']:>6.2f} {m['FP-unrel']:>7.2f} {m['FP-near']:>7.2f}")
    if args.show:
        rule = semantic.Rule(cut=args.cut, lex_weight=args.lex_weight, margin_weight=args.margin_weight)
        for q, v in zip(queries, qv):
            sims = semantic.similarities(v, vectors)
            lex = {s.key: s.relevance for s in lexical[q["q"]]}
            fused = semantic.fused_scores(keys, sims, lex, rule, 50)
            conf = semantic.confidence(fused, rule)
            got = lexical_first(v, keys, vectors, lexical[q["q"]], rule)
            ok = got[:1] == [q["expect"]] if q["expect"] else not got
            if not ok or args.show == "all":
                print(
                    f"  {'ok ' if ok else 'BAD'} [{q['kind']}] {q['q']!r} expect={q['expect']} got={got[:2]} "
                    f"conf={conf:.3f} top={fused[0][0]}:{fused[0][1]:.3f} 2nd={fused[1][0]}:{fused[1][1]:.3f} "
                    f"lex_top={max(lex.values()) if lex else 0:.2f}"
                )


# -- LoCoMo --------------------------------------------------------------------------------------


def locomo(args) -> None:
    import numpy as np

    from memcli.search import embed, semantic
    from memcli.search.ranker import MemoryIndex, SearchDoc

    data = json.loads(Path(args.path).read_text(encoding="utf-8"))
    model = embed.load()
    totals = {
        "lexical (shipped)": [0, 0],
        "lexical, no cut-offs": [0, 0],
        "lexical + semantic": [0, 0],
    }
    for conv in data:
        c = conv["conversation"]
        docs = []
        for key in sorted(k for k in c if k.startswith("session_") and isinstance(c[k], list)):
            for turn in c[key]:
                docs.append(
                    SearchDoc(key=turn["dia_id"], title="", body=f"{turn['speaker']}: {turn['text']}", updated=None)
                )
        index = MemoryIndex(docs)
        keys = [d.key for d in docs]
        vecs = model.encode([d.body for d in docs])  # a turn has no head: both vectors are the same
        vectors = np.stack([vecs, vecs], axis=1).astype(np.float16)
        qa = [q for q in conv["qa"] if q.get("evidence") and q.get("category") != 5]
        qv = model.encode([q["question"] for q in qa])
        for q, v in zip(qa, qv):
            gold = set(q["evidence"])
            lex = index.search(q["question"], limit=50, threshold=LEX_FLOOR, now=NOW)
            shipped = [s.key for s in index.search(q["question"], limit=5, now=NOW)]
            nocut = [s.key for s in lex[:5]]
            rule = semantic.Rule(cut=args.cut)
            plain = shipped or [k for k, _, _ in semantic.rank(v, keys, vectors, lex, 5, rule)]
            for name, got in (
                ("lexical (shipped)", shipped),
                ("lexical, no cut-offs", nocut),
                ("lexical + semantic", plain),
            ):
                totals[name][0] += bool(gold & set(got[:5]))
                totals[name][1] += 1
    for name, (hit, n) in totals.items():
        print(f"{name:24} any@5 {hit / n:.3f}  ({n} questions)")


# -- timing --------------------------------------------------------------------------------------


def _run(cmd: list[str], env: dict, check: bool = False) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    ms = (time.perf_counter() - t0) * 1000
    try:
        data = json.loads(out.stdout)
    except ValueError:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return ms, data


def timing(args) -> None:
    from gen_store import INDEX_WORD, generate  # benchmarks/gen_store.py

    env = dict(os.environ, MEMCLI_SERVE="manual")  # the server this benchmark starts, none started by a recall
    env.pop("MEMCLI_ROOT", None)
    py = sys.executable
    print(f"{'memories':>8} {'case':28} {'median ms':>10} {'layer':>9}")
    start = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run([py, "-c", "pass"], env=env, check=True)
        start.append((time.perf_counter() - t0) * 1000)
    print(f"{'-':>8} {'python -c pass (baseline)':28} {statistics.median(start):>10.1f}")
    for n in args.docs:
        with tempfile.TemporaryDirectory(prefix="sem-bench-") as tmp:
            root = (args.roots / str(n)) if args.roots else Path(tmp) / "mem"
            if not (root / "MEMORY.md").exists():
                generate(root, n)
            base = [py, "-m", "memcli", "--root", str(root), "recall", "--json"]
            lexical_q = args.lexical_query or INDEX_WORD
            meaning_q = args.meaning_query
            t0 = time.perf_counter()
            _run(base + [meaning_q], env, check=False)  # warm the search and embedding caches
            print(f"{n:>8} {'first call (embeds new)':28} {(time.perf_counter() - t0) * 1000:>10.1f}")
            cases = [("index answers (lexical)", lexical_q), ("embeddings, cold process", meaning_q)]
            for name, q in cases:
                times = []
                layer = None
                for _ in range(args.runs):
                    ms, data = _run(base + [q], env)
                    times.append(ms)
                    layer = (data.get("data") or {}).get("layer")
                print(f"{n:>8} {name:28} {statistics.median(times):>10.1f} {str(layer):>9}")
            server = subprocess.Popen(
                [py, "-m", "memcli", "--root", str(root), "serve"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
            )
            try:
                from memcli.search import remote as serve

                deadline = time.time() + 60
                while serve.ask(root, {"op": "ping"}) is None and time.time() < deadline:
                    time.sleep(0.1)
                _run(base + [meaning_q], env)  # the server embeds nothing new: its first answer
                times = []
                for _ in range(args.runs):
                    ms, data = _run(base + [meaning_q], env)
                    times.append(ms)
                    layer = (data.get("data") or {}).get("layer")
                print(f"{n:>8} {'embeddings, served':28} {statistics.median(times):>10.1f} {str(layer):>9}")
            finally:
                server.terminate()
                server.wait(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument(
        "--set", default="recall_eval", help="recall_eval, or a folder with memories/ and queries-SPLIT.yaml"
    )
    q.add_argument("--split", default="dev")
    q.add_argument("--lex-weight", type=float, default=None)
    q.add_argument("--margin-weight", type=float, default=None)
    q.add_argument("--cut", type=float, default=None)
    q.add_argument("--grid", action="store_true", help="sweep the weights too")
    q.add_argument("--show", choices=["bad", "all"])
    q.add_argument("--lex-floor", type=float, default=None, help="lexical evidence below this is not fetched")
    lo = sub.add_parser("locomo")
    lo.add_argument("path")
    lo.add_argument("--cut", type=float, default=None)
    t = sub.add_parser("timing")
    t.add_argument("--docs", type=int, nargs="+", default=[1000, 10000])
    t.add_argument("--runs", type=int, default=7)
    t.add_argument("--roots", type=Path, help="keep the generated roots (and their caches) in DIR/N for the next run")
    t.add_argument("--lexical-query", default=None, help="default: the word gen_store plants in the index")
    t.add_argument(
        "--meaning-query",
        default="sourdough starter feeding schedule",
        help="words no generated memory holds, so only embeddings can answer",
    )
    args = parser.parse_args(argv)
    from memcli.search.semantic import DEFAULT_CUT, LEX_WEIGHT, MARGIN_WEIGHT

    if getattr(args, "lex_weight", 0) is None:
        args.lex_weight = LEX_WEIGHT
    if getattr(args, "margin_weight", 0) is None:
        args.margin_weight = MARGIN_WEIGHT
    if getattr(args, "lex_floor", 0) is None:
        args.lex_floor = LEX_FLOOR
    if getattr(args, "cut", 0) is None:
        args.cut = DEFAULT_CUT
    {"quality": quality, "locomo": locomo, "timing": timing}[args.cmd](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
