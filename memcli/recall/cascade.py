"""The cascade: ask each layer in turn, cheapest first, rate every candidate (``confidence``)
and return the best. Returns hits, never prints.

A layer with a sure answer ends the cascade; a fallback layer (the semantic extra's) is asked only
when no hit reached the threshold, or with ``deep``. The candidates of all layers are ordered by their probability of
answering, each memory once, at its best; a question asked gets the best ``limit``, memory injected
unasked (the strict policy) only those reaching the threshold.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

from ..dates import now_of
from ..errors import UsageError
from ..model import LayerTrace
from .layer import CANDIDATES, POLICIES, STRICT, Ask, Candidate
from .registry import layer_names, layers


class Recall:
    """What a recall found: its hits best first, the trace of the layers it asked, the warnings,
    the ranking methods of the layers that ran, the other phrasings fused with the query (``also``),
    hits from outside the cascade listed after its own (the inbox's) and the policy that chose the
    hits (``layer.POLICIES``: candidates for a question asked, strict for memory injected unasked)."""

    __slots__ = ("query", "hits", "trace", "warnings", "methods", "appended", "also", "policy")

    def __init__(
        self,
        query: str,
        hits: list | None = None,
        trace: list | None = None,
        warnings: list | None = None,
        methods: list | None = None,
        appended: list | None = None,
        also: list | None = None,
        policy: str = STRICT,
    ):
        self.query = query
        self.hits = [] if hits is None else hits
        self.trace = [] if trace is None else trace
        self.warnings = [] if warnings is None else warnings
        self.methods = [] if methods is None else methods
        self.appended = [] if appended is None else appended
        self.also = [] if also is None else also
        self.policy = policy

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "also": list(self.also),
            "policy": self.policy,
            "hits": [flagged(h.to_dict()) for h in self.hits + self.appended],
            "layer": self.hits[0].layer if self.hits else None,
            "methods": list(self.methods),
            "trace": [t.to_dict() for t in self.trace],
        }


def flagged(hit: dict) -> dict:
    """A hit's dict with ``injection``: the kinds of prompt injection its text may hold (title,
    summary, tags, snippet: what an agent is handed), when there are any."""
    from ..safety.scanner import injection_kinds

    kinds = injection_kinds("\n".join((hit["title"], hit["summary"], " ".join(hit["tags"]), hit["snippet"])))
    if kinds:
        hit["injection"] = kinds
    return hit


def when(now: str | datetime | None) -> datetime:
    """The moment freshness is measured from: an ISO time, or now."""
    if isinstance(now, datetime):
        return now
    return now_of(now) if now else datetime.now(timezone.utc)


def _same(c: Candidate) -> tuple:
    """What a hit is, whichever layer found it: a memory found in the index and in the details is one."""
    return (c.hit.path, c.hit.id)


def run(
    root,
    query: str,
    *,
    session: str,
    scope: str,
    limit: int,
    threshold: float,
    now=None,
    deep: bool = False,
    only: list | None = None,
    type: str | None = None,
    min_success: float | None = None,
    policy: str = STRICT,
    fill: bool = False,
    rated: list | None = None,
) -> Recall:
    """The cascade over ``only`` (names of layers, default all): every candidate rated, the best
    ``limit`` (under STRICT, only those whose confidence reaches ``threshold``). A layer with a
    sure answer (``confidence`` strong) ends it: the layers after it run only to fill a list asked
    for (``fill``: -k), after its hits; the index's unsure hits give way to the details layer, which
    ranks every memory it lists (``Layer.within``); with ``deep`` every layer runs and all are
    merged. ``type`` and ``min_success`` keep only such memories. ``rated``, when given, receives
    (probability, features, candidate) of every candidate (``benchmarks/fit_gate.py`` fits the
    model on them)."""
    from ..search.evidence import strip_framing
    from . import confidence
    from .procedures import weigh

    signals = list(root.config["recall.signals.explicit"]) + list(root.config["recall.signals.implicit"])
    ask = Ask(
        root,
        query,
        session,
        scope,
        limit,
        threshold,
        when(now),
        text=strip_framing(query, signals),
        type=type,
        min_success=min_success,
        prior=(float(root.config["recall.freshness_weight"]), root.config.seconds("recall.half_life") / 86400),
    )
    result = Recall(query, warnings=ask.warnings, policy=policy)
    chosen = [x for x in layers() if (only is None or x.name in only) and x.active()]
    names = {x.name for x in chosen}
    if any(x.evidence for x in chosen):
        ask.scored = []  # the details layer keeps its lexical candidates for the layer that reads them
    pool: list = []
    tail: list = []  # asked for a number of hits after a sure answer: the list filled after it
    sure = float(confidence.model()["strong"])
    found_answer = False  # a hit reaching the threshold: a fallback layer (the semantic extra's) is not asked
    for layer in chosen:
        if layer.fallback and found_answer and not deep:
            continue
        if ask.answered and not deep and not (fill and layer.fills):
            continue
        t0 = time.perf_counter()
        found, n = layer.search(ask)
        got = confidence.rate(found)
        if rated is not None:
            rated += got
        # the score of a hit is its probability; success rates of procedures weigh in; --type, --min-success
        found = weigh(ask, layer, [c.replace(hit=c.hit.replace(score=round(p, 4))) for p, _, c in got])
        result.trace.append(LayerTrace(layer.name, n, len(found), (time.perf_counter() - t0) * 1000))
        found = [c if c.hit.methods else c.replace(hit=c.hit.replace(methods=(layer.method,))) for c in found]
        if layer.method not in result.methods and layer.name not in ask.skipped:
            result.methods.append(layer.method)
        if ask.answered and not deep:
            tail += found
            continue
        found_answer = found_answer or any(p >= threshold and c.kind != "user" for p, _, c in got)
        if any(p >= sure and c.kind != "user" for p, _, c in got):  # a user's own turn asks the memories too
            ask.answered = True
        elif layer.within in names and not deep:
            continue  # its memories are ranked again among all the others by the layer it is within
        pool += found
    ordered = episodes_last(sorted(pool, key=lambda c: (-c.hit.score, -c.relevance)), threshold)
    ordered += episodes_last(sorted(tail, key=lambda c: -c.hit.score), threshold)
    seen, hits = set(), []
    for c in ordered:
        if _same(c) in seen or (policy == STRICT and c.hit.score < threshold):
            continue
        seen.add(_same(c))
        hits.append(c.hit.replace(sure=confidence.word(c.hit.score, threshold)))
    result.hits = hits[:limit]
    return result


def episodes_last(found: list[Candidate], threshold: float) -> list[Candidate]:
    """Episodes answer last: an episode section comes after every memory as sure as it (both
    reaching the threshold, or both not), since a memory says what the log recorded; memories keep
    their order."""

    def tier(c: Candidate) -> bool:
        return c.hit.score >= threshold

    def episode(c: Candidate) -> bool:
        return c.hit.id.startswith("episode:")

    last: dict = {}
    for i, c in enumerate(found):
        if not episode(c):
            last[tier(c)] = i
    place = {
        id(c): (last[tier(c)] + 0.5 if episode(c) and last.get(tier(c), -1) > i else i) for i, c in enumerate(found)
    }
    return sorted(found, key=lambda c: place[id(c)])


def fuse(results: list, limit: int) -> list:
    """Hits of several phrasings of one question, fused by rank: each memory scores
    sum(1 / (RRF_K + rank)) over the lists that hold it, so agreement counts; ties go to the
    surer hit, then to the earlier phrasing. A weak hit (below the threshold) that only another
    phrasing found, and only one, is left out."""
    order = {"strong": 0, "good": 1, "weak": 2}
    score: dict = {}
    best: dict = {}
    for n, res in enumerate(results):
        for rank, h in enumerate(res.hits):
            key = (h.path, h.id)
            score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
            if key not in best or (order.get(h.sure, 3), n, rank) < best[key][0]:
                best[key] = ((order.get(h.sure, 3), n, rank), h)
    lists = {k: sum(1 for res in results if any((h.path, h.id) == k for h in res.hits)) for k in score}
    # a weak hit found by one other phrasing alone is left out: a translation that merely shares a
    # word or two with a note on a neighbouring topic is no answer
    ranked = sorted(
        (k for k in score if lists[k] > 1 or best[k][0][1] == 0 or best[k][1].sure != "weak"),
        key=lambda k: (-score[k], best[k][0]),
    )
    return [best[k][1] for k in ranked[:limit]]


RRF_K = 10  # lists are short: the rank counts more than in a long web result list


def recall(
    root,
    query: str,
    *,
    session: str = "default",
    scope: str = "default",
    limit: int | None = None,
    deep: bool = False,
    layer: str | None = None,
    threshold: float | None = None,
    now: str | None = None,
    type: str | None = None,
    min_success: float | None = None,
    also: list | tuple = (),
    policy: str = CANDIDATES,
) -> Recall:
    """The cascade for ``query``; with ``also``, other phrasings of the same question (a
    translation into the other language, a paraphrase), each run through the cascade and fused
    by rank (``fuse``). ``threshold``: the confidence a hit needs to count as an answer (default
    ``recall.threshold``). ``policy``: CANDIDATES for a question someone asked (the default: the
    best ``limit``, each labelled), STRICT for memory put into a prompt unasked (only what reaches
    the threshold: ``layer.POLICIES``)."""
    from ..model import TYPES
    from .trace import record

    if type is not None and type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
    if min_success is not None and not 0 <= min_success <= 1:
        raise UsageError(f"--min-success must be from 0 to 1, got {min_success!r}")

    if not query or not query.strip():
        raise UsageError("the query is empty")
    also = [q for q in (also or ()) if q is not None]
    if any(not q.strip() for q in also):
        raise UsageError("an --also phrasing is empty")
    names = layer_names()
    if layer is not None and layer not in names:
        from .registry import get

        known = get(layer)
        extra = getattr(known, "extra", None)
        if extra:
            from ..errors import add_extra

            raise UsageError(f"--layer {layer} needs the {extra} extra: {add_extra(extra)}")
        raise UsageError(f"--layer must be one of {', '.join(names)}, got {layer!r}")
    if deep and layer is not None:
        raise UsageError("--deep searches every layer and --layer only one: give one of them")
    if threshold is not None and not 0 <= threshold <= 1:
        raise UsageError(f"--threshold must be a number from 0 to 1, got {threshold!r}")
    if policy not in POLICIES:
        raise UsageError(f"the policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    fill = limit is not None
    limit = int(root.config["recall.limit"]) if limit is None else limit
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    from .confidence import threshold as gate

    threshold = gate(root.config["recall.threshold"]) if threshold is None else threshold
    runs = [
        run(
            root,
            q,
            session=session,
            scope=scope,
            limit=limit,
            threshold=threshold,
            now=now,
            deep=deep,
            only=[layer] if layer else None,
            fill=fill,
            type=type,
            min_success=min_success,
            policy=policy,
        )
        for q in dict.fromkeys([query, *also])
    ]
    result = runs[0]
    if len(runs) > 1:
        result = Recall(
            query,
            fuse(runs, limit),
            [t for r in runs for t in r.trace],
            list(dict.fromkeys(w for r in runs for w in r.warnings)),
            list(dict.fromkeys(m for r in runs for m in r.methods)),
            also=list(also),
            policy=policy,
        )
    record(root, "recall", query, result, now)
    return result
