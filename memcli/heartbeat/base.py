"""What every part of the heartbeat shares: the audit's state, the memo of one memory, time."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..model import Detail
from ..store import indexrules
from ..store.fs import MAX_READ, decode
from ..store.index import IndexDoc

if TYPE_CHECKING:
    from ..store.root import Root

SEVERITIES = ("error", "warning", "info")
TEMP_MIN_AGE = 120.0  # seconds a temp file must be untouched before it counts as left behind


class Memo(NamedTuple):
    """What the audit keeps of one memory: a Detail without its body, small enough for 100k of them."""

    id: str
    path: str
    title: str
    summary: str
    tags: tuple
    importance: float
    pinned: bool
    created: str | None
    updated: str | None
    expires: str | None

    @property
    def detail(self) -> Detail:
        return Detail(
            self.id,
            self.title,
            self.summary,
            self.tags,
            importance=self.importance,
            pinned=self.pinned,
            created=self.created,
            updated=self.updated,
            expires=self.expires,
            path=self.path,
        )

    @classmethod
    def of(cls, d: Detail) -> "Memo":
        return cls(d.id, d.path, d.title, d.summary, d.tags, d.importance, d.pinned, d.created, d.updated, d.expires)


def rank(m: Memo) -> tuple:
    return m.detail.rank_key()


@dataclass
class State:
    """What the audit learnt of the root: what the root checks read and ``plan`` acts on."""

    root: Root | None = None  # the root audited
    when: datetime | None = None
    index: IndexDoc | None = None
    index_error: str | None = None  # why MEMORY.md could not be read
    details: dict = field(default_factory=dict)  # id -> Memo of each readable memory/*.md
    broken: set = field(default_factory=set)  # ids of memory/*.md that cannot be read
    archived: set = field(default_factory=set)  # ids in memory/archive/
    hashes: dict = field(default_factory=dict)  # id -> body hash (None for a short body)
    fingerprints: dict = field(default_factory=dict)  # relative path -> layout fingerprint
    expired: dict = field(default_factory=dict)  # id -> expires
    temps: list = field(default_factory=list)  # (relative path, age in seconds)
    max_lines: int = 40

    _plan: indexrules.Plan | None = field(default=None, repr=False)

    def listed(self) -> dict:
        """The memories MEMORY.md lists (readable, not expired), in index order."""
        return {
            e.id: self.details[e.id]
            for e in (self.index.entries if self.index is not None else ())
            if e.id in self.details and e.id not in self.expired
        }

    def index_plan(self) -> indexrules.Plan | None:
        """What a repair makes of MEMORY.md (``indexrules.plan``, tidy and fitted, free lines offered to
        the memories it does not list); None when MEMORY.md cannot be read."""
        if self._plan is None and self.index is not None:
            memories: dict = {mid: indexrules.UNREADABLE for mid in self.broken}
            memories.update((mid, indexrules.EXPIRED if mid in self.expired else m) for mid, m in self.details.items())
            activity = self.root.activity() if self.root is not None else None
            self._plan = indexrules.plan(
                self.index,
                memories,
                max_lines=self.max_lines,
                tidy=True,
                fit=True,
                promote=(m for mid, m in self.details.items() if mid not in self.expired),
                activity=activity,
            )
        return self._plan


@dataclass
class Report:
    """What ``audit`` found: findings sorted by severity, then path and line."""

    root: str
    now: str
    findings: list
    files: int
    state: State = field(default_factory=State, repr=False)
    not_indexed: int = 0  # memories MEMORY.md does not list (reported one by one only when they belong there)

    def counts(self) -> dict:
        c = Counter(f.severity for f in self.findings)
        return {s: c.get(s, 0) for s in SEVERITIES}

    @property
    def needs_attention(self) -> bool:
        """A warning or an error remains (what `heartbeat --check` fails on)."""
        return any(f.severity != "info" for f in self.findings)

    def to_dict(self) -> dict:
        return {
            "root": self.root,
            "now": self.now,
            "findings": [f.to_dict() for f in self.findings],
            "summary": {**self.counts(), "files": self.files, "not_indexed": self.not_indexed},
        }


# ---------------------------------------------------------------- time


def age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"


# ---------------------------------------------------------------- text


def read_file(path: Path, rel: str) -> str:
    with open(path, "rb") as f:
        data = f.read(MAX_READ + 1)
    return decode(data, rel, MAX_READ)
