"""Plain values shared by every layer: memories and index entries, findings, recall hits, and
the results every operation returns (data for the JSON envelope, warnings apart from it)."""

from __future__ import annotations

import re

from .errors import UsageError
from .paths import detail_rel, id_of

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

_WS = re.compile(r"\s+")
_TAG_BAD = re.compile(r"[\s|#,\[\]]+")

DETAIL_KEYS = (  # a detail file's frontmatter: what a memory says, then when and whence
    *("id", "title", "summary", "tags", "aliases", "type", "importance", "pinned"),
    *("created", "updated", "expires", "source"),
)
TYPES = ("fact", "preference", "lesson", "procedure", "event", "note")
# The defaults of a new memory: the one place every front end takes them from.
DEFAULT_TYPE = "note"
DEFAULT_IMPORTANCE = 0.5
CONTEXT_BUDGET, MIN_BUDGET = 2000, 50  # tokens of a context block unless asked otherwise; the least


def importance_of(value, *, strict: bool = False) -> float:
    """Importance from 0 to 1: read from a file, not a number is the default and the rest the nearest
    bound; given for a write (strict), either is refused."""
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        if strict:
            raise UsageError(f"importance must be a number from 0 to 1, got {value!r}") from None
        return DEFAULT_IMPORTANCE
    if not 0 <= v <= 1:
        if strict:
            raise UsageError(f"--importance must be from 0 to 1, got {value}")
        return DEFAULT_IMPORTANCE if v != v else min(1.0, max(0.0, v))
    return v


INDEX_SUMMARY = 160  # characters of the summary shown on an index line


def index_summary(summary: str, limit: int = INDEX_SUMMARY) -> str:
    """The summary as MEMORY.md shows it: whole when short, else cut on a word boundary with '…'."""
    if len(summary) <= limit:
        return summary
    cut = summary[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—，。；：") + "…"


def one_line(text: object) -> str:
    """Collapse any whitespace run (newlines included) into one space."""
    return _WS.sub(" ", str(text)).strip()


def short(value, n: int = 60) -> str:
    """A value on one line, cut to n characters with '…' (for messages)."""
    text = " ".join(str(value or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


LISTED_IDS = 8  # ids a message names; past that, a few, the count and where to see them all


def listed_ids(ids, hint: str = "`memcli list` shows every memory") -> str:
    """Ids for a one-line message: all when few, else the first three, how many more and a hint."""
    ids = list(ids)
    if len(ids) <= LISTED_IDS:
        return ", ".join(ids)
    return f"{', '.join(ids[:3])} and {len(ids) - 3:,} more ({hint})"


def clean_tag(tag: object) -> str:
    """A tag as stored: no leading '#', no spaces or separators, lower case."""
    t = _TAG_BAD.sub("-", one_line(tag).lstrip("#")).strip("-")
    return t.lower()


def clean_tags(tags) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for c in map(clean_tag, tags or ()) if c))


class Value:
    """A plain value class (a dataclass costs a cold per-turn command milliseconds to make and
    import): equal by the COMPARE fields (else all FIELDS), hashable and immutable when FROZEN.
    A subclass names its FIELDS in __init__'s order and annotates each in the same order."""

    __slots__ = ()
    FIELDS: tuple[str, ...] = ()
    COMPARE: tuple[str, ...] | None = None
    FROZEN = True

    def _key(self) -> tuple:
        return tuple(getattr(self, f) for f in (self.COMPARE or self.FIELDS))

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        if not self.FROZEN:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in (self.COMPARE or self.FIELDS))
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name, value):
        if self.FROZEN:
            raise AttributeError(f"{type(self).__name__} is immutable: use replace()")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        return (self.__class__, tuple(getattr(self, f) for f in self.FIELDS))

    def _fill(self, values: dict) -> None:
        """Set each field from the __init__ argument of its name (``locals()``)."""
        for f in self.FIELDS:
            object.__setattr__(self, f, values[f])

    def asdict(self) -> dict:
        return {f: getattr(self, f) for f in self.FIELDS}

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed."""
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        return self.__class__(*(changes[f] if f in changes else getattr(self, f) for f in self.FIELDS))


_set = object.__setattr__


class Entry(Value):
    """One index line of MEMORY.md (raw: the line as written, not compared)."""

    FIELDS = ("title", "summary", "tags", "path", "raw")
    COMPARE = ("title", "summary", "tags", "path")
    __slots__ = FIELDS
    title: str
    summary: str
    tags: tuple[str, ...]
    path: str
    raw: str | None

    def __init__(self, title: str, summary: str = "", tags=(), path: str = "", raw: str | None = None):
        _set(self, "title", one_line(title))
        _set(self, "summary", one_line(summary))
        _set(self, "tags", clean_tags(tags))
        _set(self, "path", path)
        _set(self, "raw", raw)

    @property
    def id(self) -> str | None:
        """The memory the line links (memory/<id>.md); None for a link to anything else."""
        return id_of(self.path, archived=False)


class Detail(Value):
    """One memory: a detail file's frontmatter, normalised, and its body (extra: the other
    frontmatter keys; extra and path are not compared)."""

    FIELDS = (*DETAIL_KEYS, "extra", "body", "path")
    COMPARE = (*DETAIL_KEYS, "body")
    __slots__ = FIELDS
    id: str
    title: str
    summary: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    type: str
    importance: float
    pinned: bool
    created: str | None
    updated: str | None
    expires: str | None
    source: str | None
    extra: dict
    body: str
    path: str

    def __init__(
        self,
        id: str,
        title: str,
        summary: str = "",
        tags: tuple = (),
        aliases: tuple = (),
        type: str = DEFAULT_TYPE,
        importance: float = DEFAULT_IMPORTANCE,
        pinned: bool = False,
        created: str | None = None,
        updated: str | None = None,
        expires: str | None = None,
        source: str | None = None,
        extra: dict | None = None,
        body: str = "",
        path: str = "",
    ):
        self._fill(locals())
        if extra is None:
            _set(self, "extra", {})

    @property
    def entry(self) -> Entry:
        """The index line's content: the summary cut short on a word boundary, the rest is here."""
        return Entry(self.title, index_summary(one_line(self.summary)), self.tags, detail_rel(self.id))

    def rank_key(self) -> tuple:
        """Index order: pinned, then importance, then last update (newest first), then id."""
        stamp = self.updated or self.created or ""
        return (not self.pinned, -self.importance, stamp == "", _neg_str(stamp), self.id)

    def to_dict(self, body: bool = True) -> dict:
        d = {k: getattr(self, k) for k in DETAIL_KEYS}
        d["tags"], d["aliases"] = list(self.tags), list(self.aliases)
        d.update({k: v for k, v in self.extra.items() if k not in d})
        d["path"] = self.path
        if body:
            d["body"] = self.body
        return d


def _neg_str(s: str) -> tuple:
    """Sort key that orders strings descending inside an ascending tuple sort."""
    return tuple(-ord(c) for c in s)


class Problem(Value):
    """A file that could not be read as a memory."""

    FIELDS = ("path", "line", "message")
    __slots__ = FIELDS
    path: str
    line: int | None
    message: str

    def __init__(self, path: str, line: int | None, message: str):
        self._fill(locals())

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class Finding(Value):
    """One problem: a stable code, a severity, where it is and what to do about it."""

    FIELDS = ("code", "severity", "path", "line", "message", "fix")
    __slots__ = FIELDS
    code: str
    severity: str
    path: str
    line: int | None
    message: str
    fix: str

    def __init__(self, code: str, severity: str, path: str, line: int | None, message: str, fix: str):
        self._fill(locals())

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return self.asdict()

    def __str__(self) -> str:
        return f"{self.severity} {self.code} {self.where} {self.message} (fix: {self.fix})"


class Hit(Value):
    """One recalled item: which layer found it, what it is, how well it fits; methods: how it was
    found, "bm25f" (words) and/or "embedding" (meaning); sure: how sure, "strong", "good" or "weak"
    (set by the cascade)."""

    FIELDS = ("layer", "id", "title", "path", "score", "snippet", "summary", "tags", "matched", "methods", "sure")
    __slots__ = FIELDS
    layer: str
    id: str
    title: str
    path: str
    score: float
    snippet: str
    summary: str
    tags: tuple[str, ...]
    matched: tuple[str, ...]
    methods: tuple[str, ...]
    sure: str

    def __init__(
        self,
        layer: str,
        id: str,
        title: str,
        path: str,
        score: float,
        snippet: str = "",
        summary: str = "",
        tags: tuple = (),
        matched: tuple = (),
        methods: tuple = (),
        sure: str = "",
    ):
        self._fill(locals())

    def to_dict(self) -> dict:
        d = self.asdict()
        d.update(
            score=round(self.score, 4), tags=list(self.tags), matched=list(self.matched), methods=list(self.methods)
        )
        return d


def how_found(h: dict) -> str:
    """One short line: how a hit was found and how sure it is ("words: utf8mb4 charset · strong 0.91")."""
    methods = h.get("methods") or []
    words = " ".join(h.get("matched") or [])[:60]
    how = ("words" + (f": {words}" if words else "")) if "bm25f" in methods or not methods else ""
    if "embedding" in methods:
        how = f"{how} + meaning" if how else "meaning"
    sure = h.get("sure") or ""
    return f"{how} · {sure + ' ' if sure else ''}{h['score']:.2f}"


class LayerTrace(Value):
    """What one layer of a recall looked at, found, and took."""

    FIELDS = ("layer", "candidates", "hits", "ms")
    __slots__ = FIELDS
    layer: str
    candidates: int
    hits: int
    ms: float

    def __init__(self, layer: str, candidates: int, hits: int, ms: float):
        self._fill(locals())

    def to_dict(self) -> dict:
        return {**self.asdict(), "ms": round(self.ms, 2)}


class Result(dict):
    """What an operation returns: its data (what `--json` prints as ``data``) and, apart from it,
    the warnings a front end shows on stderr or in the envelope's ``warnings``. Read it as the
    dict it is (``res["kind"]``); ``to_dict()`` gives the data, as every result's does."""

    def __init__(self, data=None, warnings=()):
        super().__init__(data or {})
        self.warnings = [w for w in warnings if w]

    def to_dict(self) -> dict:
        return dict(self)


class WriteResult(Value):
    """A memory written: what was done (remembered, updated, unchanged, forgotten, edited, merged,
    restored), its id, file and index line, what was demoted or redacted, and the warnings."""

    FIELDS = ("action", "id", "path", "indexed", "line", "demoted", "redacted", "warnings")
    FROZEN = False
    __slots__ = FIELDS
    action: str
    id: str
    path: str
    indexed: bool
    line: str | None
    demoted: list
    redacted: list
    warnings: list

    def __init__(
        self,
        action: str,
        id: str,
        path: str,
        indexed: bool = False,
        line: str | None = None,
        demoted: list | None = None,
        redacted: list | None = None,
        warnings: list | None = None,
    ):
        self.action, self.id, self.path, self.indexed, self.line = action, id, path, indexed, line
        self.demoted = [] if demoted is None else demoted
        self.redacted = [] if redacted is None else redacted
        self.warnings = [] if warnings is None else warnings

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in self.FIELDS if f != "warnings"}


LISTED = ("id", "title", "summary", "type", "importance", "pinned", "tags", "updated", "path")  # a listing's row


class Listing(Value):
    """Memories in index order, the files that could not be read, and the ids MEMORY.md lists."""

    FIELDS = ("details", "problems", "indexed", "warnings")
    FROZEN = False
    __slots__ = FIELDS
    details: list[Detail]
    problems: list[Problem]
    indexed: set[str]
    warnings: list

    def __init__(self, details: list, problems: list, indexed: set, warnings: list | None = None):
        self.details, self.problems, self.indexed = details, problems, indexed
        self.warnings = [] if warnings is None else warnings

    def to_dict(self) -> dict:
        rows = []
        for d in self.details:
            archived = "/archive/" in d.path
            row = {k: getattr(d, k) for k in LISTED}
            row.update(tags=list(d.tags), indexed=d.id in self.indexed and not archived, archived=archived)
            rows.append(row)
        return {"memories": rows, "problems": [str(p) for p in self.problems]}
