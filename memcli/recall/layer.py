"""What every recall layer is: one object with a name, a one-line description and a search.

A layer returns candidates: a hit, its relevance (0..1, the share of the query it covers) and what
the ranker saw of it. The cascade (``cascade.py``) rates each (``confidence.py``) and decides what
to return; a layer only ranks its own corpus.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from ..model import Hit, Value


# Two intents, two policies. An explicit question (`recall`, MCP `recall`, the Python API) gets
# the best hits whenever a memory shares an informative term with it, each labelled with how sure
# it is: "candidates". Memory put into a prompt unasked (the hook, `context`, `recall --strict`)
# gets only the hits whose confidence reaches the threshold: "strict". The policy that ran is in
# `recall --json`.
CANDIDATES, STRICT = "candidates", "strict"
POLICIES = (CANDIDATES, STRICT)
PEEK = 3  # a layer ranks at least this many, so the best hit's margin over the next is known


class Ask:
    """One recall, as every layer sees it (root: the store.Root asked)."""

    __slots__ = (
        "root",
        "query",
        "session",
        "scope",
        "limit",
        "threshold",
        "now",
        "warnings",
        "scored",
        "answered",
        "skipped",
        "type",
        "min_success",
        "prior",
        "details",
        "text",
    )

    def __init__(
        self,
        root,
        query: str,
        session: str,
        scope: str,
        limit: int,
        threshold: float,
        now: datetime,
        warnings: list | None = None,
        *,
        type: str | None = None,
        min_success: float | None = None,
        prior: tuple | None = None,
        text: str = "",
    ):
        self.root, self.query, self.session, self.scope = root, query, session, scope
        self.limit, self.threshold, self.now = limit, threshold, now
        self.warnings = [] if warnings is None else warnings
        # Set by the cascade for layers that read what earlier ones found: ``scored``, the details
        # layer's Scored hits (the semantic layer's lexical evidence); ``answered``, whether an
        # earlier layer found a sure answer (a confidence reaching gate.json's "strong"); ``skipped``,
        # the layers that could not run (a warning says why).
        self.scored: list | None = None
        self.answered = False
        self.skipped: set = set()
        self.type = type  # only memories of this type (recall --type)
        self.min_success = min_success  # only memories whose smoothed success rate reaches this (--min-success)
        self.prior = prior  # (recall.freshness_weight, recall.half_life in days) for the ranker
        self.details: dict = {}  # path -> Detail (None: unreadable) of the memories a layer already read
        # What the layers rank by: the query without its framing ("上次…的问题", "last time", the
        # signal words; ``search.evidence.strip_framing``). ``query`` stays as asked: it is what an
        # echo of the question is recognised by.
        self.text = text or query


class Candidate(Value):
    """A layer's hit and its relevance (0..1); ``kind``, what it is for the confidence of recall
    (``confidence.KINDS``: the layer's name, or "user" for a user's own turn, "episode" for the
    episode log); ``signals`` and ``units``, what the ranker saw of it (``ranker.SIGNALS``); ``echo``,
    the share of a user's turn the question repeats (``echo``). A layer that gives no signals (a
    plugin's) states its confidence as its relevance."""

    FIELDS = ("hit", "relevance", "kind", "signals", "units", "echo")
    __slots__ = FIELDS
    hit: Hit
    relevance: float
    kind: str
    signals: tuple
    units: int
    echo: float

    def __init__(
        self, hit: Hit, relevance: float, kind: str = "", signals: tuple = (), units: int = 0, echo: float = 0.0
    ):
        for name, value in zip(self.FIELDS, (hit, relevance, kind or hit.layer, signals, units, echo)):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, hit: Hit, s, kind: str = "", echo: float = 0.0) -> "Candidate":
        """A candidate from the ranker's Scored hit ``s``."""
        return cls(hit, s.relevance, kind, s.signals, s.units, echo)


def conflicted(ask: Ask | None, rel: str, text: str | None = None, path=None) -> bool:
    """True when a file (its text, or the file at path) holds unresolved git conflict markers and
    the layer leaves it out; a memory whose text could be read is kept, both sides shown. The recall
    (when there is one) says so once a file, with the line of its first conflict and the way out.
    text may be part of the file (a body): path then gives the file's own line number."""
    from ..store import layout, markers

    if text is None:
        line = markers.file_conflict(path)
    else:
        line = markers.text_conflict(text, path if path is not None else ask.root.path / rel if ask else rel)
    if line is None:
        return False
    kept = text is not None and layout.kind_of(rel) in (layout.DETAIL, layout.ARCHIVED)
    head = f"{'' if kept else 'skipped '}{rel}{' holds' if kept else ':'} unresolved git conflict markers"
    if ask is not None and not any(w.startswith(head) for w in ask.warnings):
        if text is not None and path is not None:
            line = markers.file_conflict(path) or line
        ask.warnings.append(f"{head} (line {line}){': both sides are shown' if kept else ''}; {markers.way_out(rel)}")
    return not kept


class Layer:
    """One layer of the cascade. Subclasses set ``name``, ``help`` and implement ``search``."""

    name = ""
    help = ""
    memories = False  # hits are memories: counted as accesses, rendered by `context`
    method = "bm25f"  # how the layer ranks: its hits' ``methods`` unless they say otherwise
    fallback = False  # runs only when no earlier layer found a sure answer (or with --deep)
    evidence = False  # reads the details layer's lexical candidates (``Ask.scored``)
    within: str | None = None  # a later layer ranks this one's items among all of its own: unsure, it gives way
    fills = False  # after a sure answer of an earlier layer, it runs to fill a list asked for (-k)

    def active(self) -> bool:
        """Whether the layer can run here (a layer of an extra that is not installed cannot)."""
        return True

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        """(candidates, best first; how many items the layer looked at)."""
        raise NotImplementedError


def rank(docs, ask: Ask):
    """Rank in-memory SearchDocs for the query."""
    from ..search.ranker import MemoryIndex

    return MemoryIndex(docs).search(ask.text, limit=max(ask.limit, PEEK), now=ask.now, prior=ask.prior)


def snip(body: str, query: str) -> str:
    from ..search.snippet import snippet

    return snippet(body, query)


_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


@lru_cache(maxsize=8192)
def normal(text: str) -> str:
    """Text for comparing turns with a query: lower case, punctuation and spacing dropped (kept for
    the turns a server meets again, recall after recall)."""
    return _PUNCT.sub(" ", text.casefold()).strip()


@lru_cache(maxsize=8192)
def informative(text: str) -> frozenset:
    """The informative terms of a text: neither common words nor lone CJK characters (kept, as
    ``normal``: the query for each turn it is compared with, the turns recall after recall)."""
    from ..search.query import COMMON_WORDS
    from ..search.tokenize import CJK_CHAR, COMPOUND, analyze

    return frozenset(t for t, kind in analyze(text) if kind not in (CJK_CHAR, COMPOUND) and t not in COMMON_WORDS)


def echo(text: str, query: str) -> float:
    """The share of a text's informative terms the query holds: 1 for a user's turn the question
    restates ("redis 连不上了" for "redis 连不上是什么原因"), less for one that says more."""
    mine = informative(text)
    return round(len(mine & informative(query)) / len(mine), 3) if mine else 0.0


def holds_query(text: str, query: str) -> bool:
    """A turn that holds the query: one holds the other and is at least half of it (the question
    being asked, an earlier copy of it, or its first sentence). A longer turn that merely
    mentions the query's words does not."""
    q, t = normal(query), normal(text)
    if not q or not t:
        return False
    short, long = (q, t) if len(q) <= len(t) else (t, q)
    return short in long and 2 * len(short) >= len(long)
