"""The semantic layer (the ``semantic`` extra): memories found by meaning when no word of the
query matches them, such as a paraphrase or a question in the other language.

Last in the cascade and active only when the extra is installed. It runs when the lexical
layers found no real answer, and then answers only when one memory stands out (the rule is in
``memcli.search.semantic``); it reads the details layer's weak lexical candidates as evidence
instead of searching again. A recall asking for the best k, weak ones included (threshold 0),
runs it after a lexical answer too: the lexical hits keep their order and the embedding fills
the rest of the list.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Hit
from ..search import semantic
from .layer import Ask, Candidate, Layer, snip


class SemanticLayer(Layer):
    name = "semantic"
    help = "meaning: sentence embeddings of the detail files (the semantic extra)"
    memories = True
    method = "embedding"
    evidence = semantic.LEX_FLOOR
    fallback = True

    def active(self) -> bool:
        return semantic.enabled()

    def after_answer(self, ask: Ask) -> bool:
        return ask.threshold <= 0  # "the best k, weak ones included": fill the list

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.cache import SearchCacheError
        from ..search.embed import ModelUnavailable
        from .details import detail_doc

        fill = ask.threshold <= 0
        # Filling a list, the lexical answer is what the configured threshold answers; otherwise
        # nothing lexical counts as an answer, only as evidence.
        threshold = float(ask.mem.config["recall.threshold"]) if fill else float("inf")
        lexical = ask.scored
        try:
            try:
                found = semantic.search(ask.mem, ask.query, lexical, ask.limit, threshold, fill=fill)
            except (SearchCacheError, OSError):
                found = semantic.search(ask.mem, ask.query, [], ask.limit, threshold, fill=fill)  # evidence only
        except ModelUnavailable as e:
            ask.warnings.append(f"semantic recall skipped: {e}")
            ask.skipped.add(self.name)
            return [], 0
        matched = {s.key: s.matched for s in lexical or ()}
        out = []
        for key, score, methods in found:
            doc = detail_doc(ask.mem, key)
            if doc is None:
                continue
            hit = Hit(self.name, Path(key).stem, doc.title, key, score, snip(doc.body, ask.query), doc.summary,
                      doc.tags, tuple(matched.get(key, ())), tuple(methods))
            out.append(Candidate(hit, score))
        return out, len(found)
