"""Plain values shared by every layer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

_WS = re.compile(r"\s+")
_TAG_BAD = re.compile(r"[\s|#,\[\]]+")

DETAIL_KEYS = (
    "id", "title", "summary", "tags", "aliases", "type", "importance",
    "pinned", "created", "updated", "expires", "source",
)
TYPES = ("fact", "preference", "lesson", "procedure", "event", "note")
# The defaults of a new memory: the one place every front end takes them from.
DEFAULT_TYPE = "note"
DEFAULT_IMPORTANCE = 0.5


def one_line(text: object) -> str:
    """Collapse any whitespace run (newlines included) into one space."""
    return _WS.sub(" ", str(text)).strip()


def clean_tag(tag: object) -> str:
    """A tag as stored: no leading '#', no spaces or separators, lower case."""
    t = _TAG_BAD.sub("-", one_line(tag).lstrip("#")).strip("-")
    return t.lower()


def clean_tags(tags) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for t in tags or ():
        c = clean_tag(t)
        if c:
            seen.setdefault(c, None)
    return tuple(seen)


@dataclass(frozen=True)
class Entry:
    """One index line of MEMORY.md."""

    title: str
    summary: str = ""
    tags: tuple[str, ...] = ()
    path: str = ""
    raw: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "title", one_line(self.title))
        object.__setattr__(self, "summary", one_line(self.summary))
        object.__setattr__(self, "tags", clean_tags(self.tags))

    @property
    def id(self) -> str | None:
        m = re.fullmatch(r"memory/([^/\\]+)\.md", self.path)
        return m.group(1) if m else None


@dataclass(frozen=True)
class Detail:
    """One memory: a detail file's frontmatter, normalised, and its body."""

    id: str
    title: str
    summary: str = ""
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    type: str = DEFAULT_TYPE
    importance: float = DEFAULT_IMPORTANCE
    pinned: bool = False
    created: str | None = None
    updated: str | None = None
    expires: str | None = None
    source: str | None = None
    extra: dict = field(default_factory=dict, compare=False)
    body: str = ""
    path: str = field(default="", compare=False)

    def replace(self, **kw) -> "Detail":
        return replace(self, **kw)

    @property
    def entry(self) -> Entry:
        """The index line's content: the summary cut short on a word boundary, the rest is here."""
        from .textcheck import index_summary

        return Entry(self.title, index_summary(one_line(self.summary)), self.tags, f"memory/{self.id}.md")

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


@dataclass(frozen=True)
class Problem:
    """A file that could not be read as a memory."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a stable code, a severity, where it is and what to do about it."""

    code: str
    severity: str
    path: str
    line: int | None
    message: str
    fix: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message, "fix": self.fix}

    def __str__(self) -> str:
        return f"{self.severity} {self.code} {self.where} {self.message} (fix: {self.fix})"


@dataclass(frozen=True)
class Hit:
    """One recalled item: which layer found it, what it is, how well it fits."""

    layer: str
    id: str
    title: str
    path: str
    score: float
    snippet: str = ""
    summary: str = ""
    tags: tuple[str, ...] = ()
    matched: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()  # how it was found: "bm25f" (words), "embedding" (meaning)
    sure: str = ""  # how sure: "strong", "good" or "weak" (set by the cascade)

    def to_dict(self) -> dict:
        return {"layer": self.layer, "id": self.id, "title": self.title, "path": self.path,
                "score": round(self.score, 4), "snippet": self.snippet, "summary": self.summary,
                "tags": list(self.tags), "matched": list(self.matched), "methods": list(self.methods),
                "sure": self.sure}


@dataclass(frozen=True)
class LayerTrace:
    layer: str
    candidates: int
    hits: int
    ms: float

    def to_dict(self) -> dict:
        return {"layer": self.layer, "candidates": self.candidates, "hits": self.hits, "ms": round(self.ms, 2)}
