"""How sure recall is that a hit answers: a probability from a logistic regression over what the
ranker saw of the hit (its relevance, the share of the query it covers, where it matched, its
margin over the next hit of its layer, the kind of hit it is …: ``FEATURES``).

The coefficients are data, ``gate.json`` beside this module, fitted on the dev sets by
``benchmarks/fit_gate.py`` (which also chooses the threshold for precision, ``recall.threshold``'s
default); read once a process, with no numpy. Every hit of a recall carries its probability as its
score: the cascade orders by it, the hook, ``context`` and ``recall --strict`` keep only the hits
reaching the threshold, and a hit's word says where it stands (strong, good, weak).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from ..search.ranker import SIGNALS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .layer import Candidate

# What a hit is, beside a memory's detail file (the base): an entry of MEMORY.md, a section of the
# episode log, a reply or the summary in the session, a user's own turn, a scope key, a match by
# meaning (the semantic extra).
KINDS = ("index", "episode", "session", "user", "scope", "semantic")
FEATURES = ("relevance", *SIGNALS, "margin", "units", *KINDS, "echo", "meaning")


@lru_cache(maxsize=1)
def model() -> dict:
    """gate.json: features, weights, bias, threshold (chosen for precision on dev) and strong."""
    data = json.loads((Path(__file__).with_name("gate.json")).read_text(encoding="utf-8"))
    weights = dict(zip(data["features"], data["weights"]))
    data["by"] = tuple(weights.get(f, 0.0) for f in FEATURES)
    return data


def threshold(configured: float | None = None) -> float:
    """The confidence a hit needs to be injected unasked: ``recall.threshold``, by default the one
    chosen for precision on dev."""
    return float(model()["threshold"] if configured is None else configured)


def vector(c, margin: float, meaning: float = 0.0) -> tuple[float, ...]:
    """The features of candidate ``c`` (``layer.Candidate``)."""
    signals = c.signals or (0.0,) * len(SIGNALS)
    kinds = tuple(float(c.kind == k) for k in KINDS)
    return (c.relevance, *signals, margin, math.log1p(c.units), *kinds, c.echo, meaning)


def probability(x: tuple[float, ...]) -> float:
    m = model()
    z = m["bias"] + sum(w * v for w, v in zip(m["by"], x))
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def rate(found: list) -> list[tuple[float, tuple, Candidate]]:
    """(probability, features, candidate) for a layer's candidates, best first by the ranker: the
    margin of each is its relevance over the best other one of the layer. A candidate without
    signals (a plugin layer's) has its relevance as its probability."""
    rels = [c.relevance for c in found]
    out = []
    for i, c in enumerate(found):
        other = max((r for j, r in enumerate(rels) if j != i), default=0.0)
        meaning = c.hit.score if c.kind == "semantic" else 0.0
        x = vector(c, c.relevance - other, meaning)
        out.append((probability(x) if c.signals or c.kind in KINDS else c.relevance, x, c))
    return out


def word(p: float, threshold: float) -> str:
    """strong (the model is sure), good (it reaches the threshold) or weak (a candidate)."""
    if p >= max(threshold, float(model()["strong"])):
        return "strong"
    return "good" if p >= threshold else "weak"
