"""What every recall layer is: one object with a name, a one-line description and a search.

A layer returns candidates: a hit, its relevance (0..1, the share of the query it covers) and
whether it is a real answer, one that may end the cascade. The cascade (``cascade.py``) decides
what to return; a layer only ranks its own corpus.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..model import Hit, Value


# A hit of a layer before the last ends the cascade only when it covers nearly all of the query:
# relevance is 0.75 * the weighted share of query terms matched (in a title, summary, tag or
# alias) + 0.25 * BM25, so this asks for every term, or nearly all with strong BM25 evidence.
DECISIVE = 0.75
# Without -k or --threshold, a hit stays beside the best one only with this share of its relevance.
COMPANION_SHARE = 0.9
# With them, the list is filled down to this relevance once the query is answered.
FILL_FLOOR = 0.05

# Two intents, two policies. An explicit question (`recall`, MCP `recall`, the Python API) gets
# the best candidates whenever real evidence relates them to it, each labelled with how sure it is:
# "candidates". Memory put into a prompt unasked (the hook, `context`) keeps the strict gate: only
# what to act on. The policy that ran is in `recall --json`.
CANDIDATES, STRICT = "candidates", "strict"
POLICIES = (CANDIDATES, STRICT)
# Under "candidates", when nothing reaches the strict bar, a lexical candidate that is evidence
# (``ranker.is_evidence``) relates to the question from this relevance (bilingual dev split).
RELATE = 0.25


def decisive(relevance: float) -> bool:
    return relevance >= DECISIVE


def wants_answer(ask: "Ask") -> bool:
    """The question was asked for its answer, not for a list (no -k, no --threshold): only a
    candidate that holds what it asks about, not only its topic, answers it or relates to it
    (``ranker.covers_ask``). Asked for the best k, the list is ranked as before."""
    return not ask.fill and ask.threshold > 0


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
        "floor",
        "scored",
        "answered",
        "skipped",
        "type",
        "min_success",
        "prior",
        "details",
        "text",
        "fill",
        "answered_by",
        "policy",
        "stated",
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
        fill: bool = False,
        policy: str = STRICT,
    ):
        self.root, self.query, self.session, self.scope = root, query, session, scope
        self.limit, self.threshold, self.now = limit, threshold, now
        self.warnings = [] if warnings is None else warnings
        # Set by the cascade for layers that read what earlier ones found: ``floor``, how far down
        # the details layer keeps its lexical candidates (``scored``, the ranker's Scored hits);
        # ``answered``, whether an earlier layer had a real answer; ``skipped``, the layers that
        # could not run (a warning says why); ``answered_by``, the first layer with a real answer.
        self.floor: float | None = None
        self.scored: list | None = None
        self.answered = False
        self.skipped: set = set()
        self.answered_by: str | None = None
        self.type = type  # only memories of this type (recall --type)
        self.min_success = min_success  # only memories whose smoothed success rate reaches this (--min-success)
        self.prior = prior  # (recall.freshness_weight, recall.half_life in days) for the ranker
        self.details: dict = {}  # path -> Detail (None: unreadable) of the memories a layer already read
        # What the layers rank by: the query without its framing ("上次…的问题", "last time", the
        # signal words; ``search.evidence.strip_framing``). ``query`` stays as asked: it is what an
        # echo of the question is recognised by.
        self.text = text or query
        # The caller asked for ``limit`` hits (``-k``) or a threshold: once the query is answered the
        # list is filled with weaker candidates. Otherwise weak companions of a strong answer are
        # left out (``COMPANION_SHARE``): the default output holds only what to act on.
        self.fill = fill
        # CANDIDATES (an explicit question) or STRICT (memory injected unasked): see POLICIES.
        self.policy = policy
        # Set by the session layer: the user's own statement covers the query (``decisive``). It is
        # no answer that ends the cascade (the memories are asked too), but what the words found:
        # a meaning match does not stand in for it, and it comes before what merely relates.
        self.stated = False


class Candidate(Value):
    """A layer's hit, its relevance, and whether it is a real answer (one that may end the cascade)."""

    FIELDS = ("hit", "relevance", "answer")
    __slots__ = FIELDS
    hit: Hit
    relevance: float
    answer: bool

    def __init__(self, hit: Hit, relevance: float, answer: bool = True):
        object.__setattr__(self, "hit", hit)
        object.__setattr__(self, "relevance", relevance)
        object.__setattr__(self, "answer", answer)


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
    evidence: float | None = None  # reads the details layer's candidates down to this relevance
    fallback = False  # runs only when no earlier layer had a real answer, --deep or not
    fills = False  # asked for a number of hits, its candidates fill a short answer of an earlier layer

    def active(self) -> bool:
        """Whether the layer can run here (a layer of an extra that is not installed cannot)."""
        return True

    def after_answer(self, ask: Ask) -> bool:
        """Whether the layer still runs once an earlier layer had a real answer (without --deep)."""
        return False

    def holds_answer(self, ask: Ask) -> bool:
        """Whether a fallback layer running after an answer returns that answer's candidates fused
        into its own list (then a filled list is the layer's alone; else the answer follows it)."""
        return False

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        """(candidates, best first; how many items the layer looked at)."""
        raise NotImplementedError


def rank(docs, ask: Ask, limit: int | None = None):
    """Rank in-memory SearchDocs for the query."""
    from ..search.ranker import MemoryIndex

    return MemoryIndex(docs).search(
        ask.text,
        limit=limit or ask.limit,
        threshold=ask.threshold,
        now=ask.now,
        floor=FILL_FLOOR if ask.fill else None,
        prior=ask.prior,
    )


def snip(body: str, query: str) -> str:
    from ..search.snippet import snippet

    return snippet(body, query)


_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def normal(text: str) -> str:
    """Text for comparing turns with a query: lower case, punctuation and spacing dropped."""
    return _PUNCT.sub(" ", text.casefold()).strip()


def holds_query(text: str, query: str) -> bool:
    """A turn that holds the query: one holds the other and is at least half of it (the question
    being asked, an earlier copy of it, or its first sentence). A longer turn that merely
    mentions the query's words does not."""
    q, t = normal(query), normal(text)
    if not q or not t:
        return False
    short, long = (q, t) if len(q) <= len(t) else (t, q)
    return short in long and 2 * len(short) >= len(long)
