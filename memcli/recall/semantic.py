"""The semantic layer (the ``semantic`` extra): memories found by meaning when no word of the
query matches them, such as a paraphrase or a question in the other language.

Last in the cascade and active only when the extra is installed. It runs when the lexical
layers found no real answer, and then answers only when one memory stands out (the rule is in
``memcli.search.semantic``); it reads the details layer's weak lexical candidates as evidence
instead of searching again. A weak answer of the details layer (no hit covering nearly all of
the query) is checked too: it gives way when the embedding is sure of another memory. A meaning
match is not accepted for a question that names a product, system or person (CUDA, MongoDB, Tom)
that its memory does not name, nor, for a question asked for its answer, for a memory whose words
meet the question's topic but not what it asks (``ranker.covers_ask``): near the topic is not the
answer. Nor does a meaning match stand in for the user's own statement that covers the query
(``Ask.stated``). The embeddings come from the configured provider (``memcli.search.providers``);
one that is down leaves the words' answer, with one warning. A recall asking for the best k, weak
ones included (threshold 0), runs it after any lexical answer: the best lexical hit stays first and
fusion with the embedding order fills the rest of the list.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Hit
from ..search import semantic
from .layer import Ask, Candidate, Layer, snip, wants_answer


class SemanticLayer(Layer):
    name = "semantic"
    help = "meaning: sentence embeddings of the detail files (the semantic extra)"
    extra = "semantic"  # the install extra it needs: `--layer semantic` without it says so
    memories = True
    method = "embedding"
    evidence = semantic.LEX_FLOOR
    fallback = True

    def active(self) -> bool:
        return semantic.enabled()

    def after_answer(self, ask: Ask) -> bool:
        # "the best k, weak ones included" fills the list; a weak details answer is checked
        return _fills(ask) or _weak(ask)

    def holds_answer(self, ask: Ask) -> bool:
        return _fills(ask)

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.cache import SearchCacheError
        from ..search.providers import ProviderUnavailable
        from .details import detail_doc

        fill = _fills(ask)
        if ask.stated and not fill:
            return [], 0  # the user's own statement covers the query: meaning alone does not stand in for it
        rescue = ask.answered and not fill
        # Filling a list or checking a weak answer, the lexical answer is what the configured
        # threshold answers; otherwise nothing lexical counts as an answer, only as evidence.
        threshold = float(ask.root.config["recall.threshold"]) if fill or rescue else float("inf")
        lexical = [(s.key, s.relevance, s.evidence) for s in ask.scored or ()]
        kw: dict = {"fill": fill, "rescue": semantic.RESCUE_CUT if rescue else None}
        try:
            try:
                found = semantic.search(ask.root, ask.query, lexical, ask.limit, threshold, **kw)
            except (SearchCacheError, OSError):
                found = semantic.search(ask.root, ask.query, [], ask.limit, threshold, **kw)  # evidence only
        except ProviderUnavailable as e:  # the words' answer stands, with one warning
            ask.warnings.append(f"semantic recall skipped: {e}")
            ask.skipped.add(self.name)
            return [], 0
        if rescue and all(m == ("bm25f",) for _, _, m in found):
            return [], len(found)  # the words' answer stands
        from ..search.evidence import names

        matched = {s.key: s.matched for s in ask.scored or ()}
        if (
            wants_answer(ask)
            and not rescue
            and found
            and "bm25f" not in found[0][2]
            and not next((s.covers for s in ask.scored or () if s.key == found[0][0]), True)
        ):
            # the memory that stands out by meaning is one the words find on the question's topic
            # only, not on what it asks (``ranker.covers_ask``): near the topic is not the answer
            return [], len(found)
        named = names(ask.text)
        out = []
        for key, score, methods in found:
            doc = detail_doc(ask.root, key)
            if doc is None:
                continue
            if named and not fill and "bm25f" not in methods and not _names_in(named, doc):
                continue  # a meaning match that names another product or person is no answer
            hit = Hit(
                self.name,
                Path(key).stem,
                doc.title,
                key,
                score,
                snip(doc.body, ask.text),
                doc.summary,
                doc.tags,
                tuple(matched.get(key, ())),
                tuple(methods),
            )
            out.append(Candidate(hit, score))
        return out, len(found)


def _names_in(named: list, doc) -> bool:
    """At least half of the query's names (``evidence.names``) appear in the memory, in any field
    and in either script (``evidence.name_forms``: 企业微信 or WeCom)."""
    from ..search.evidence import name_forms
    from ..search.tokenize import terms

    have = set(
        terms(
            "\n".join([doc.title, doc.summary, " ".join(map(str, doc.tags)), " ".join(map(str, doc.aliases)), doc.body])
        )
    )
    return 2 * sum(1 for n in named if any(set(terms(f)) <= have for f in name_forms(n))) >= len(named)


def _fills(ask: Ask) -> bool:
    """The best k, weak ones included (threshold 0): the layer fuses the words' order with the
    meaning's into the whole list."""
    return ask.threshold <= 0


def _weak(ask: Ask) -> bool:
    """The details layer answered, but with no hit that covers nearly all of the query."""
    from .layer import DECISIVE

    scored = ask.scored
    return bool(scored) and max(x.relevance for x in scored or ()) < DECISIVE
