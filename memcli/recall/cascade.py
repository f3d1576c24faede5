"""The cascade: ask each layer in turn, cheapest first, and stop at the first real answer.
Returns hits, never prints.

Each layer says which of its candidates are real answers (see the layers: a user's own turn
is not, a weak match in MEMORY.md is not). Without ``deep`` the result is the first layer
with a real answer, or, when no layer has one, the deepest layer that found anything.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from ..errors import UsageError
from ..model import LayerTrace
from .layer import Ask, Candidate
from .registry import layer_names, layers


@dataclass
class Recall:
    query: str
    hits: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    methods: list = field(default_factory=list)  # the ranking methods of the layers that ran

    def to_dict(self) -> dict:
        return {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                "layer": self.hits[0].layer if self.hits else None, "methods": list(self.methods),
                "trace": [t.to_dict() for t in self.trace]}


def when(now: str | datetime | None) -> datetime:
    """The moment freshness is measured from: an ISO time, or now."""
    if isinstance(now, datetime):
        return now
    if now:
        return datetime.fromisoformat(now.replace("Z", "+00:00"))
    return datetime.now(timezone.utc)


def _same(c: Candidate) -> tuple:
    """What a hit is, whichever layer found it: a memory found in the index and in the details is one."""
    return (c.hit.path, c.hit.id)


def _merge(found: list[Candidate], limit: int, answers_first: bool) -> list[Candidate]:
    """Best first (real answers before the rest when asked), each item once, at its best score."""
    seen, out = set(), []
    for c in sorted(found, key=lambda c: (answers_first and not c.answer, -c.hit.score)):
        if _same(c) not in seen:
            seen.add(_same(c))
            out.append(c)
    return out[:limit]


def run(mem, query: str, *, session: str, scope: str, limit: int, threshold: float, now=None, deep: bool = False,
        only: list | None = None, type: str | None = None, min_success: float | None = None) -> Recall:
    """The cascade over ``only`` (names of layers, default all): the first real answer, or with
    ``deep`` every layer merged. ``type`` and ``min_success`` keep only such memories."""
    from .procedures import weigh

    ask = Ask(mem, query, session, scope, limit, threshold, when(now), type=type, min_success=min_success,
              prior=(float(mem.config["recall.freshness_weight"]), mem.config.seconds("recall.half_life") / 86400))
    result = Recall(query, warnings=ask.warnings)
    chosen = [x for x in layers() if only is None or x.name in only]
    floors = [x.evidence for x in chosen if x.evidence is not None and x.active()]
    ask.floor = min(floors) if floors else None
    pool: list[Candidate] = []
    last: list[Candidate] = []
    for layer in chosen:
        if ask.answered and (not deep or layer.fallback) and not layer.after_answer(ask):
            break
        if not layer.active():
            continue
        t0 = time.perf_counter()
        found, n = layer.search(ask)
        found = weigh(ask, layer, found)  # success rates of procedures; --type, --min-success
        result.trace.append(LayerTrace(layer.name, n, len(found), (time.perf_counter() - t0) * 1000))
        found = [c if c.hit.methods else replace(c, hit=replace(c.hit, methods=(layer.method,))) for c in found]
        if layer.method not in result.methods and layer.name not in ask.skipped:
            result.methods.append(layer.method)
        pool += found
        last = found or last
        ask.answered = ask.answered or any(c.answer for c in found)
    # Without --deep: the first layer with a real answer; when none has one, the deepest layer
    # that found anything (it searched more than the layers before it).
    result.hits = [c.hit for c in _merge(pool if deep else last, limit, not deep)]
    return result


def recall(mem, query: str, *, session: str = "default", scope: str = "default", limit: int | None = None,
           deep: bool = False, layer: str | None = None, threshold: float | None = None,
           now: str | None = None, type: str | None = None, min_success: float | None = None) -> Recall:
    from ..model import TYPES
    from .trace import record

    if type is not None and type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
    if min_success is not None and not 0 <= min_success <= 1:
        raise UsageError(f"--min-success must be from 0 to 1, got {min_success!r}")

    if not query or not query.strip():
        raise UsageError("the query is empty")
    names = layer_names()
    if layer is not None and layer not in names:
        from .registry import get

        known = get(layer)
        if known is not None and getattr(known, "extra", None):
            raise UsageError(f"--layer {layer} needs the {known.extra} extra: pip install 'memcli[{known.extra}]'")
        raise UsageError(f"--layer must be one of {', '.join(names)}, got {layer!r}")
    if deep and layer is not None:
        raise UsageError("--deep searches every layer and --layer only one: give one of them")
    if threshold is not None and not 0 <= threshold <= 1:
        raise UsageError(f"--threshold must be a number from 0 to 1, got {threshold!r}")
    limit = int(mem.config["recall.limit"]) if limit is None else limit
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    threshold = float(mem.config["recall.threshold"]) if threshold is None else threshold
    result = run(mem, query, session=session, scope=scope, limit=limit, threshold=threshold, now=now, deep=deep,
                 only=[layer] if layer else None, type=type, min_success=min_success)
    record(mem, "recall", query, result, now)
    return result
