"""Procedures that keep score, in recall: the one place the cascade weighs a memory's success
rate into its hits, and the `--type` / `--min-success` filter.

A memory with recorded outcomes (`memcli outcome`) has a smoothed success rate
(successes + 1) / (uses + 2) (`store/outcomes.py`). Among the candidates of a layer its score is
multiplied by 1 + WEIGHT × (rate − 0.5): a procedure that worked 9 times of 10 gains 6.7%, one
that failed 4 times of 5 loses 5.7%, one never tried is unchanged. Relevance, and so whether
recall answers at all, is untouched: the rate orders candidates for a task, it does not make a
weak match an answer.
"""

from __future__ import annotations

from dataclasses import replace

WEIGHT = 0.2


def factor(rate: float | None) -> float:
    """The score multiplier of a memory with this smoothed success rate (1.0 without outcomes)."""
    return 1.0 if rate is None else 1.0 + WEIGHT * (rate - 0.5)


def weigh(ask, layer, found: list) -> list:
    """The layer's candidates with success rates weighed in, and only those of `ask.type` with at
    least `ask.min_success` when asked (a memory without outcomes counts as 0.5)."""
    if not found:
        return found
    from ..store.outcomes import success_rate

    filtering = ask.type is not None or ask.min_success is not None
    out = []
    for c in found:
        d = _detail(ask, layer, c.hit)
        if filtering:
            if d is None or (ask.type is not None and d.type != ask.type):
                continue
            if ask.min_success is not None and (success_rate(d) or 0.5) < ask.min_success:
                continue
        rate = success_rate(d) if d is not None else None
        if rate is not None:
            c = replace(c, hit=replace(c.hit, score=round(c.hit.score * factor(rate), 6)))
        out.append(c)
    return out


def _detail(ask, layer, hit):
    """The memory behind a hit (None for turns, scope keys, episodes and unreadable files)."""
    if not getattr(layer, "memories", False) or not hit.path.startswith("memory/") or hit.id.startswith("episode:"):
        return None
    memo = ask.__dict__.setdefault("_details", {})
    if hit.path not in memo:
        try:
            memo[hit.path] = ask.mem.load(ask.mem.root / hit.path)
        except Exception:  # noqa: BLE001 - an unreadable file keeps its hit as it is
            memo[hit.path] = None
    return memo[hit.path]
