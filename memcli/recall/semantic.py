"""The semantic layer (the ``semantic`` extra): memories found by meaning when no word of the
query matches them, such as a paraphrase or a question in the other language.

Last in the cascade and active only when the extra is installed. It runs when the lexical
layers found no sure answer (or with --deep), and offers a memory only when one stands out by
meaning (the rule is in ``memcli.search.semantic``), or, for a recall asking for the best k
(threshold 0), the best k by meaning; it reads the details layer's lexical
candidates as evidence instead of searching again. Its hits are rated like every other
(``confidence``: a match by meaning, its fused score, and what the words saw of the same memory).
The embeddings come from the configured provider (``memcli.search.providers``); one that is down
leaves the words' answer, with one warning.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Hit
from ..search import semantic
from .layer import Ask, Candidate, Layer, snip


class SemanticLayer(Layer):
    name = "semantic"
    help = "meaning: sentence embeddings of the detail files (the semantic extra)"
    extra = "semantic"  # the install extra it needs: `--layer semantic` without it says so
    memories = True
    method = "embedding"
    evidence = True
    fallback = True

    def active(self) -> bool:
        return semantic.enabled()

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.providers import ProviderUnavailable
        from .details import detail_doc

        try:
            found = semantic.search(ask.root, ask.query, ask.scored or (), ask.limit, best=ask.threshold <= 0)
        except ProviderUnavailable as e:  # the words' answer stands, with one warning
            ask.warnings.append(f"semantic recall skipped: {e}")
            ask.skipped.add(self.name)
            return [], 0
        scored = {s.key: s for s in ask.scored or ()}
        out = []
        for key, score, methods in found:
            doc = detail_doc(ask.root, key, read=ask.details)
            if doc is None:
                continue
            s = scored.get(key)
            hit = Hit(
                self.name,
                Path(key).stem,
                doc.title,
                key,
                score,
                snip(doc.body, ask.text),
                doc.summary,
                doc.tags,
                s.matched if s else (),
                tuple(methods),
            )
            out.append(Candidate(hit, 0.0, "semantic") if s is None else Candidate.of(hit, s, "semantic"))
        return out, len(found)
