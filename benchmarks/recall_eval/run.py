"""Recall evaluation: hit@1, hit@3 and false-positive rate for memcli and a plain BM25.

    python benchmarks/recall_eval/run.py                 # in-process MemoryIndex
    python benchmarks/recall_eval/run.py --cli           # the real `memcli recall`
    python benchmarks/recall_eval/run.py --show misses   # list the queries that failed

hit@k counts queries with an expected id found in the first k results; FP is the share
of `expect: null` queries that returned anything.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from memcli.search.ranker import MemoryIndex, SearchDoc  # noqa: E402

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
Searcher = Callable[[str], list[str]]


def load_docs(folder: Path) -> list[tuple[SearchDoc, dict]]:
    docs = []
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2)
        meta = yaml.safe_load(front)
        updated = meta.get("updated")
        docs.append(
            (
                SearchDoc(
                    key=str(meta["id"]),
                    title=str(meta.get("title") or ""),
                    summary=str(meta.get("summary") or ""),
                    tags=tuple(str(t) for t in meta.get("tags") or ()),
                    aliases=tuple(str(a) for a in meta.get("aliases") or ()),
                    body=body,
                    importance=float(meta.get("importance", 0.5)),
                    updated=updated.isoformat() if hasattr(updated, "isoformat") else updated,
                ),
                meta,
            )
        )
    return docs


def memcli_searcher(docs: list[SearchDoc], threshold: float | None) -> Searcher:
    index = MemoryIndex(docs)
    return lambda q: [h.key for h in index.search(q, limit=5, threshold=threshold, now=NOW)]


def baseline_searcher(docs: list[SearchDoc]) -> Searcher:
    """Standard BM25 over concatenated text with a \\w+ lowercase tokenizer, no abstention."""
    word = re.compile(r"\w+")

    def tok(text: str) -> list[str]:
        return word.findall(text.lower())

    bodies = [tok(" ".join([d.title, d.summary, " ".join(d.tags), " ".join(d.aliases), d.body])) for d in docs]
    n = len(bodies)
    avgdl = sum(map(len, bodies)) / n
    tfs = [Counter(b) for b in bodies]
    df = Counter(t for tf in tfs for t in tf)

    def search(q: str) -> list[str]:
        scores = []
        for doc, tf, body in zip(docs, tfs, bodies):
            s = 0.0
            for t in set(tok(q)):
                if t in tf:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(body) / avgdl))
            if s > 0:
                scores.append((s, doc.key))
        scores.sort(key=lambda x: (-x[0], x[1]))
        return [k for _, k in scores[:5]]

    return search


def cli_searcher(memory: Path) -> Searcher:
    """Run the real CLI against a temporary root holding a copy of the memories."""
    tmp = Path(tempfile.mkdtemp(prefix="recall-eval-"))
    (tmp / "memory").mkdir()
    for path in memory.glob("*.md"):
        (tmp / "memory" / path.name).write_bytes(path.read_bytes())
    (tmp / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")

    def search(q: str) -> list[str]:
        cmd = [sys.executable, "-m", "memcli", "--root", str(tmp), "recall", "--deep", "--json", q]
        out = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8").stdout
        try:
            data = json.loads(out).get("data") or {}
        except json.JSONDecodeError:
            return []
        return [h.get("id") for h in data.get("hits") or [] if h.get("id")]

    return search


def evaluate(search: Searcher, queries: list[dict]) -> tuple[dict[str, float], list[tuple[dict, list[str]]]]:
    pos = [q for q in queries if q["expect"]]
    neg = [q for q in queries if not q["expect"]]
    h1 = h3 = fp = 0
    misses = []
    for q in queries:
        got = search(q["q"])
        if q["expect"]:
            h1 += bool(got[:1] == [q["expect"]])
            h3 += q["expect"] in got[:3]
            if got[:1] != [q["expect"]]:
                misses.append((q, got))
        elif got:
            fp += 1
            misses.append((q, got))
    return {
        "hit@1": h1 / max(len(pos), 1),
        "hit@3": h3 / max(len(pos), 1),
        "FP": fp / max(len(neg), 1),
        "n": len(queries),
    }, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory", type=Path, default=HERE / "memory")
    parser.add_argument("--queries", type=Path, default=HERE / "queries.yaml")
    parser.add_argument("--cli", action="store_true", help="run `memcli recall` instead of MemoryIndex")
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--show", choices=["misses", "all"], help="list per-query results")
    args = parser.parse_args(argv)

    docs = [d for d, _ in load_docs(args.memory)]
    queries = yaml.safe_load(args.queries.read_text(encoding="utf-8"))["queries"]
    engines = {
        "memcli": cli_searcher(args.memory) if args.cli else memcli_searcher(docs, args.threshold),
        "bm25": baseline_searcher(docs),
    }
    print(f"{len(docs)} memories, {len(queries)} queries")
    print(f"{'split':6} {'engine':7} {'n':>4} {'hit@1':>6} {'hit@3':>6} {'FP':>6}")
    for split in ("dev", "test", "fresh", "all"):
        subset = [q for q in queries if split == "all" or q.get("split") == split]
        for name, search in engines.items():
            m, misses = evaluate(search, subset)
            print(f"{split:6} {name:7} {m['n']:>4} {m['hit@1']:>6.2f} {m['hit@3']:>6.2f} {m['FP']:>6.2f}")
            if args.show and split == "all" and name == "memcli":
                shown = misses if args.show == "misses" else [(q, search(q["q"])) for q in subset]
                for q, got in shown:
                    print(f"    [{q['split']}/{q['kind']}] {q['q']!r}: expect {q['expect']}, got {got[:3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
