"""Rank memories for a query: field-weighted BM25, typo correction, a fit score, the signals the
confidence of recall reads, and a blend with importance and freshness.

The scorer reads corpus statistics through the small ``Corpus`` protocol, so the same
code ranks an in-memory ``MemoryIndex`` and the persisted ``SearchCache``.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from datetime import datetime, timezone
from functools import lru_cache
from typing import Protocol
from collections.abc import Collection, Iterable, Mapping, Sequence

from memcli.dates import days
from memcli.model import Value, importance_of
from memcli.search.evidence import name_forms, names
from memcli.search.query import BODY_MATCH, FIT_PRIOR_DOCS, idf, plan_query
from memcli.search.tokenize import is_cjk, terms

FIELDS = ("title", "summary", "tags", "aliases", "body")
HEAD_FIELDS = 4  # title, summary, tags and aliases come before the body
FIELD_WEIGHTS = (3.0, 1.5, 2.5, 2.5, 1.0)
FIELD_B = (0.5, 0.5, 0.3, 0.3, 0.75)
K1 = 1.2

HALF_LIFE_DAYS = 90.0
FIT_SHARE = 0.75  # relevance = FIT_SHARE * fit + (1 - FIT_SHARE) * BM25 share
PRIOR_SHARE = 0.05  # score = relevance * (1 + PRIOR_SHARE * (2 * importance * freshness - 1))
# A text that only asks is weak evidence for a question about the same thing: its relevance is
# lowered by this share of it (a text half questions by half as much). Chosen on LoCoMo dev.
ASKING_PENALTY = 0.3


class SearchDoc(Value):
    """One memory as the search engine sees it (updated: an ISO date or date-time)."""

    FIELDS = ("key", "title", "summary", "tags", "aliases", "body", "importance", "updated")
    __slots__ = FIELDS
    key: str
    title: str
    summary: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    body: str
    importance: float
    updated: str | None

    def __init__(
        self,
        key: str,
        title: str = "",
        summary: str = "",
        tags: tuple = (),
        aliases: tuple = (),
        body: str = "",
        importance: float = 0.5,
        updated: str | None = None,
    ):
        for name, value in zip(self.FIELDS, (key, title, summary, tags, aliases, body, importance, updated)):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, d, key: str | None = None) -> SearchDoc:
        """A memory (a ``Detail``) as the engine sees it, under ``key`` (its id unless given); its
        freshness is its last update, else its creation."""
        return cls(
            key=d.id if key is None else key,
            title=d.title,
            summary=d.summary,
            tags=d.tags,
            aliases=d.aliases,
            body=d.body,
            importance=d.importance,
            updated=d.updated or d.created,
        )


class Scored(Value):
    """A ranked hit: ``score`` blends ``relevance`` with importance and freshness; ``units``, the
    informative query units it matches; ``signals``, what the confidence of recall reads of it
    (``SIGNALS``)."""

    FIELDS = ("key", "score", "relevance", "matched", "fuzzy", "units", "signals")
    __slots__ = FIELDS
    key: str
    score: float
    relevance: float
    matched: tuple[str, ...]
    fuzzy: tuple[str, ...]
    units: int
    signals: tuple[float, ...]

    def __init__(
        self,
        key: str,
        score: float,
        relevance: float,
        matched: tuple = (),
        fuzzy: tuple = (),
        units: int = 0,
        signals: tuple = (),
    ):
        for name, value in zip(self.FIELDS, (key, score, relevance, matched, fuzzy, units, signals)):
            object.__setattr__(self, name, value)

    def signal(self, name: str) -> float:
        return self.signals[SIGNALS.index(name)] if self.signals else 0.0

    @property
    def evidence(self) -> bool:
        """It names what the question names and is no single word beside a weightier one missed."""
        return not (self.signal("names") or self.signal("single"))


# What a hit tells of how well it answers, beyond its relevance (each 0..1): cover, the weighted
# share of the query's units it matches (in any field, a typo fix or a glossary form counting
# less); head, the share of that matched in its title, summary, tags or aliases; names, 1 when the
# query names a product, system or person it does not (``evidence.names``); single, 1 when it
# matches one informative unit while a weightier one goes unmatched (``one_term_ok``); stale, 1
# when it matches nothing of the last line of a query of several (the prompt after the turns before
# it). Measured one by one on the dev sets (benchmarks/fit_gate.py --ablate): whether a hit covers
# what the question asks rather than its topic, its share of questions, the best sentence it
# covers, the share it matches of the last line and the query's length added nothing the others
# did not say.
SIGNALS = ("cover", "head", "names", "single", "stale")


Lengths = tuple[int, int, int, int, int]
Norms = tuple[tuple[float, float, float], ...]  # per field: weight, 1 - b, b / average length
Posting = tuple[object, float, int]  # (doc ref, field-weighted term frequency, 1 if in a head field)

MAX_TF = 255  # a term frequency is stored in one byte


def _code_lengths() -> tuple[float, ...]:
    lengths = [float(n) for n in range(128)]
    lengths += [128.0 * 1.06 ** (c - 127) for c in range(128, 256)]
    return tuple(lengths)


CODE_LENGTH = _code_lengths()  # field length of each one-byte length code


def length_code(n: int) -> int:
    """A field length in one byte: exact below 128, then in steps of 6% (up to ~200k)."""
    if n < 128:
        return n
    return min(255, 127 + round(math.log(n / 128.0) / math.log(1.06)))


def asking(doc: SearchDoc) -> float:
    """How much of a document is questions (``evidence.asking_share`` of its text)."""
    from memcli.search.evidence import asking_share

    return asking_share("\n".join(p for p in (doc.title, doc.summary, doc.body) if p))


def field_terms(doc: SearchDoc) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """Terms of each field: title, summary, tags, aliases, body."""
    return (
        terms(doc.title),
        terms(doc.summary),
        terms("\n".join(map(str, doc.tags))),
        terms("\n".join(map(str, doc.aliases))),
        terms(doc.body),
    )


_KEPT: dict = {}  # (fields) -> (doc_terms, asking): what a long-lived process (memcli serve) worked out
_KEPT_MAX = 4096  # documents kept; then the memo starts over
_KEPT_TEXT = 65_536  # a document with more text than this is never kept


def _kept(doc: SearchDoc, what: int, work):
    """``work(doc)`` once per process for a document of the same fields (the index's entries are
    ranked on every recall); a large document is worked out each time."""
    key = (doc.title, doc.summary, tuple(doc.tags), tuple(doc.aliases), doc.body)
    if len(doc.body) + len(doc.summary) > _KEPT_TEXT:
        return work(doc)
    got = _KEPT.get(key)
    if got is None:
        if len(_KEPT) >= _KEPT_MAX:
            _KEPT.clear()
        got = _KEPT[key] = [None, None]
    if got[what] is None:
        got[what] = work(doc)
    return got[what]


def doc_terms(doc: SearchDoc) -> tuple[dict[str, tuple[int, ...]], Lengths]:
    """Term frequencies per field (each at most ``MAX_TF``) and field lengths (the dict is shared:
    read it, never change it)."""
    return _kept(doc, 0, _doc_terms)


def _doc_terms(doc: SearchDoc) -> tuple[dict[str, tuple[int, ...]], Lengths]:
    fields = field_terms(doc)
    zero = (0, 0, 0, 0, 0)
    counts: dict[str, tuple[int, ...]] = {
        t: (0, 0, 0, 0, c if c < MAX_TF else MAX_TF) for t, c in Counter(fields[4]).items()
    }
    for f in range(HEAD_FIELDS):
        if fields[f]:
            for t, c in Counter(fields[f]).items():
                row = list(counts.get(t, zero))
                row[f] = c if c < MAX_TF else MAX_TF
                counts[t] = tuple(row)
    lens = (len(fields[0]), len(fields[1]), len(fields[2]), len(fields[3]), len(fields[4]))
    return counts, lens


def is_fuzzy_candidate(term: str) -> bool:
    """Vocabulary words that typo correction may offer: plain words of three letters or more."""
    return len(term) >= 3 and term.isalpha() and not is_cjk(term)


def field_norms(n: int, totals: Sequence[int]) -> Norms:
    """BM25F constants for a corpus of ``n`` documents with these total field lengths."""
    return tuple(
        (FIELD_WEIGHTS[f], 1.0 - FIELD_B[f], FIELD_B[f] / ((totals[f] / n) if n and totals[f] else 1.0))
        for f in range(5)
    )


def weighted_tf(tfs: Sequence[int], codes: Sequence[int], norms: Norms) -> float:
    """BM25F pseudo-frequency: sum over fields of w * tf / (1 - b + b * len / avg_len),
    with each length taken from its one-byte code (both indexes store only the code)."""
    total = 0.0
    for f in range(5):
        if tfs[f]:
            w, c, d = norms[f]
            total = total + tfs[f] * w / (c + d * CODE_LENGTH[codes[f]])
    return total


class Corpus(Protocol):
    """What the scorer needs to know about a collection of documents (the interface ``MemoryIndex``
    and ``cache.SearchCache`` give)."""

    def size(self) -> tuple[int, tuple[int, ...]]:
        """Number of documents and the total length of each field."""

    def df(self, terms: Sequence[str]) -> Mapping[str, int]:
        """Document frequency of each term (absent terms may be left out)."""

    def postings(self, term: str, norms: Norms, docs: Collection[object] | None = None) -> Sequence[Posting]:
        """(ref, weighted tf, in head) of the documents holding ``term``, all or only ``docs``."""

    def fuzzy_candidates(self, first: str, min_len: int, max_len: int) -> Sequence[tuple[str, int, int]]:
        """(term, df, head df) of vocabulary words starting with ``first`` in a length range."""

    def doc_priors(self, refs: Collection[object]) -> dict[object, tuple[float, float, float]]:
        """(importance, ``updated_days``, asking share) of documents."""

    def doc_keys(self, refs: Collection[object]) -> Mapping[object, str]:
        """Keys of documents."""


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@lru_cache(maxsize=8192)
def updated_days(updated: str | None) -> float:
    """An ISO date or date-time as days since 1970 (UTC when no zone is given); NaN if unknown."""
    found = days(updated) if updated else None
    return math.nan if found is None else found


def importance_value(value: object) -> float:
    """A document's importance as a number in 0..1 (0.5 when it is not a number)."""
    return importance_of(value)


def freshness(days: float, now_days: float, half_life: float = HALF_LIFE_DAYS) -> float:
    """1.0 for a memory updated now, halving every ``half_life`` days (``recall.half_life``); 0.5 when unknown."""
    if days != days:  # NaN: no usable date
        return 0.5
    return 0.5 ** (max(now_days - days, 0.0) / half_life)


def search_corpus(
    corpus: Corpus,
    query: str,
    *,
    limit: int = 5,
    threshold: float | None = None,
    now: datetime | None = None,
    prior: tuple[float, float] | None = None,
) -> list[Scored]:
    """The best ``limit`` documents of ``corpus`` that share an informative unit with ``query``
    (``query.Plan.info``: a common word or a lone CJK character alone reaches nothing), best first.

    relevance = 0.75 * fit + 0.25 * soft, where fit is the weighted share of the query's units the
    document matches (full in a head field, less in the body or through a typo correction or the
    glossary) and soft its BM25F score over the most the query could score; a document that only
    asks loses ``ASKING_PENALTY`` of it. Documents below ``threshold`` (a relevance the caller wants at
    least) are left out. They are ordered by relevance times
    1 + share * (2 * importance * freshness - 1): ``prior`` is (that share, the freshness half-life
    in days), ``recall.freshness_weight`` and ``recall.half_life``. Whether a hit answers is not
    decided here: each carries its ``signals`` for the confidence of recall (``recall.confidence``).
    """
    share, half_life = prior if prior is not None else (PRIOR_SHARE, HALF_LIFE_DAYS)
    n, totals = corpus.size()
    if n == 0 or limit <= 0:
        return []
    floor = threshold or 0.0
    named = names(query)
    plan = plan_query(query, corpus, n, [name_forms(name) for name in named])
    entries = plan.entries
    total_weight = sum(plan.weights)
    total_idf = sum(plan.idfs)
    if not entries or total_weight <= 0 or not plan.info:
        return []
    norms = field_norms(n, totals)
    # Terms that reach only units counting for nothing alone are looked up only for the documents
    # an informative term found.
    optional = {i for i, e in enumerate(entries) if plan.info.isdisjoint(e.units)}
    postings: dict[int, Sequence[Posting]] = {}
    for i, e in enumerate(entries):
        if i not in optional:
            postings[i] = corpus.postings(e.term, norms)
    found: set[object] = set()
    for posts in postings.values():
        found.update(p[0] for p in posts)
    for i in optional:
        postings[i] = corpus.postings(entries[i].term, norms, found) if found else ()

    # A query unit reached by one entry adds its weight straight to the document's fit;
    # one reached by several (a word, its typo fix, a compound) counts once, at its best.
    reach_count = Counter(u for e in entries for u in e.units)
    bm: dict[object, float] = {}
    fit: dict[object, float] = {}
    head_fit: dict[object, float] = {}
    best: dict[object, dict[int, float]] = {}
    mask: dict[object, int] = {}
    for i, e in enumerate(entries):  # in query order: float sums do not depend on storage
        term_idf = idf(n + FIT_PRIOR_DOCS, e.df) * e.factor * max(plan.recent[u] for u in e.units)
        solo = [u for u in e.units if reach_count[u] == 1]
        shared = [u for u in e.units if reach_count[u] > 1]
        head_add = sum(plan.weights[u] for u in solo) * e.factor
        body_add = head_add * BODY_MATCH
        bit = 1 << i
        bm_get, fit_get, mask_get = bm.get, fit.get, mask.get
        # a glossary form adds no BM25 where an earlier entry for its units already did
        overlap = sum(1 << j for j in range(i) if not set(entries[j].units).isdisjoint(e.units)) if e.bridge else 0
        for ref, tf, head in postings[i]:
            if not (overlap and mask_get(ref, 0) & overlap):
                bm[ref] = bm_get(ref, 0.0) + term_idf * tf / (K1 + tf)
            fit[ref] = fit_get(ref, 0.0) + (head_add if head else body_add)
            if head:
                head_fit[ref] = head_fit.get(ref, 0.0) + head_add
            mask[ref] = mask_get(ref, 0) | bit
            if shared:
                level = e.factor if head else e.factor * BODY_MATCH
                units = best.setdefault(ref, {})
                for u in shared:
                    if level > units.get(u, 0.0):
                        units[u] = level
    relevance: dict[object, float] = {}
    for ref, solo_fit in fit.items():
        levels = best.get(ref)
        if levels:
            solo_fit += sum(plan.weights[u] * levels[u] for u in sorted(levels))
            head_fit[ref] = head_fit.get(ref, 0.0) + sum(plan.weights[u] for u in sorted(levels) if levels[u] >= 0.85)
            fit[ref] = solo_fit
        rel = FIT_SHARE * (solo_fit / total_weight) + (1.0 - FIT_SHARE) * min(1.0, bm[ref] / total_idf)
        if rel >= floor:
            relevance[ref] = rel

    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    now_days = (now - _EPOCH).total_seconds() / 86400.0
    # Blend in order of relevance, fetching importance and dates block by block, and stop
    # once even a perfect importance * freshness (1.0) could not reach the current top.
    ordered = sorted(relevance.items(), key=lambda item: -item[1])
    priors: dict = {}
    scored: list[tuple[float, object]] = []
    kth = -1.0
    start, block = 0, max(limit * 8, 64)
    while start < len(ordered):
        if len(scored) >= limit and round(ordered[start][1] * (1.0 + share), 6) < kth:
            break
        chunk = ordered[start : start + block]
        priors.update(corpus.doc_priors([ref for ref, _ in chunk]))
        for ref, rel in chunk:
            importance, days, asks = priors[ref]
            rel = relevance[ref] = _asked(rel, asks)
            if rel < floor:
                continue
            blend = importance * freshness(days, now_days, half_life)
            scored.append((round(rel * (1.0 + share * (2.0 * blend - 1.0)), 6), ref))
        if scored:
            kth = heapq.nlargest(limit, (s[0] for s in scored))[-1]
        start += len(chunk)
        block *= 2
    # Ties at the cut are broken by key, so every backend agrees.
    top = [s for s in scored if s[0] >= kth]
    keys = corpus.doc_keys([ref for _, ref in top])
    top.sort(key=lambda s: (-s[0], keys[s[1]]))
    hits = []
    for score, ref in top[:limit]:
        terms_matched = tuple(dict.fromkeys(e.term for i, e in enumerate(entries) if mask[ref] >> i & 1))
        matched = _matched_units(mask[ref], entries)
        signals = (
            min(1.0, fit[ref] / total_weight),
            min(1.0, head_fit.get(ref, 0.0) / fit[ref]) if fit[ref] else 0.0,
            float(_misses_names(matched, plan)),
            float(not one_term_ok(matched & plan.info, plan.weights, sorted(plan.info))),
            float(all(plan.recent[u] < 1.0 for u in matched)),
        )
        hits.append(
            Scored(
                key=keys[ref],
                score=score,
                relevance=round(relevance[ref], 6),
                matched=terms_matched,
                fuzzy=tuple(f for f in plan.fuzzy if f[1] in terms_matched),
                units=len(matched & plan.info),
                signals=tuple(round(x, 4) for x in signals),
            )
        )
    return hits


def _asked(relevance: float, asks: float) -> float:
    return relevance * (1.0 - ASKING_PENALTY * asks) if asks else relevance


def _matched_units(mask: int, entries) -> set[int]:
    """The distinct query units the entries in ``mask`` satisfy."""
    return {u for i, e in enumerate(entries) if mask >> i & 1 for u in e.units}


def _misses_names(matched: set[int], plan) -> bool:
    return bool(plan.names) and 2 * sum(1 for units in plan.names if not matched.isdisjoint(units)) < len(plan.names)


def one_term_ok(matched: set[int], weights, units) -> bool:
    """More than one of ``units`` matched, or the one matched weighs the most of them."""
    mine = [u for u in units if u in matched]
    if len(mine) != 1:
        return bool(mine)
    (only,) = mine
    return all(weights[u] <= weights[only] for u in units if u != only)


_BUILT: dict = {}  # a few indexes a long-lived process built, by what they were built from (read only)


def _index_key(by_key: dict) -> tuple | None:
    """What an index is built from (None when its documents hold too much text to be kept)."""
    if sum(len(d.body) for d in by_key.values()) > 4 * _KEPT_TEXT:
        return None
    return tuple(
        (k, d.title, d.summary, tuple(d.tags), tuple(d.aliases), d.body, d.importance, d.updated)
        for k, d in sorted(by_key.items())
    )


class MemoryIndex:
    """An in-memory index over a set of documents; build it, then ``search`` it."""

    def __init__(self, docs: Iterable[SearchDoc] = ()) -> None:
        by_key: dict[str, SearchDoc] = {}
        for doc in docs:
            by_key[doc.key] = doc
        memo = _index_key(by_key)
        built = _BUILT.get(memo) if memo is not None else None
        if built is None:
            built = self._build(by_key)
            if memo is not None:
                if len(_BUILT) >= 8:
                    _BUILT.pop(next(iter(_BUILT)))
                _BUILT[memo] = built
        self._keys, self._priors, self._totals, self._norms, self._postings, self._fuzzy = built

    @staticmethod
    def _build(by_key: dict) -> tuple:
        keys: list[str] = []
        priors: list[tuple[float, float, float]] = []
        raw: dict[str, list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = {}
        totals = [0, 0, 0, 0, 0]
        for ref, key in enumerate(sorted(by_key)):
            doc = by_key[key]
            tfs, lens = doc_terms(doc)
            keys.append(key)
            priors.append((importance_value(doc.importance), updated_days(doc.updated), _kept(doc, 1, asking)))
            for f in range(5):
                totals[f] += lens[f]
            codes = tuple(length_code(n) for n in lens)
            for term, row in tfs.items():
                raw.setdefault(term, []).append((ref, row, codes))
        norms = field_norms(len(keys), tuple(totals))
        postings: dict[str, list[Posting]] = {
            term: [(ref, weighted_tf(row, codes, norms), int(any(row[:HEAD_FIELDS]))) for ref, row, codes in rows]
            for term, rows in raw.items()
        }
        fuzzy: dict[str, list[tuple[str, int, int]]] = {}
        for term in sorted(postings):
            if is_fuzzy_candidate(term):
                posts = postings[term]
                fuzzy.setdefault(term[0], []).append((term, len(posts), sum(p[2] for p in posts)))
        return keys, priors, tuple(totals), norms, postings, fuzzy

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def vocabulary(self) -> Mapping[str, int]:
        """Every indexed term and its document frequency."""
        return {t: len(p) for t, p in self._postings.items()}

    def size(self) -> tuple[int, tuple[int, ...]]:
        return len(self._keys), self._totals

    def df(self, terms: Sequence[str]) -> Mapping[str, int]:
        return {t: len(self._postings[t]) for t in terms if t in self._postings}

    def postings(self, term: str, norms: Norms, docs: Collection[object] | None = None) -> Sequence[Posting]:
        posts = self._postings.get(term, ())
        if norms != self._norms:  # cannot happen through search(); kept honest for other callers
            raise ValueError("norms do not belong to this index")
        return posts if docs is None else [p for p in posts if p[0] in docs]

    def fuzzy_candidates(self, first: str, min_len: int, max_len: int) -> Sequence[tuple[str, int, int]]:
        return [c for c in self._fuzzy.get(first, ()) if min_len <= len(c[0]) <= max_len]

    def doc_priors(self, refs: Collection[object]) -> dict[object, tuple[float, float, float]]:
        return {ref: self._priors[ref] for ref in refs}

    def doc_keys(self, refs: Collection[object]) -> Mapping[object, str]:
        return {ref: self._keys[ref] for ref in refs}

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        threshold: float | None = None,
        now: datetime | None = None,
        prior: tuple[float, float] | None = None,
    ) -> list[Scored]:
        """The best ``limit`` documents for ``query``; empty when none fits."""
        return search_corpus(self, query, limit=limit, threshold=threshold, now=now, prior=prior)
