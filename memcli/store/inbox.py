"""Proposals: memory/inbox/<id>.md, the memories reflection (or a gated write) suggests: a detail
file with more keys (git's memcli-detail driver merges it like a memory), the evidence turns
quoted verbatim under `## Evidence`, one block each, in the order of `evidence`:

    ---
    id: p-20261201-deploy-needs-the-vpn-3f2a1c
    title: Deploy needs the VPN
    ...                       # the other keys of a memory
    kind: new                 # new | update (of `target`)
    target: null
    engine: offline           # offline | extractor | agent | cli | mcp | hook | api
    confidence: 0.72
    evidence: [{episode: memory/episodes/2026-12-01.md, time: '2026-12-01T10:00:00Z'}]
    status: pending
    ---
    The proposed text.

    ## Evidence

    > **user** (2026-12-01T10:00:00Z):
    > the deploy timed out again; the fix was to connect the VPN first

A decided proposal moves to memory/inbox/archive/ with `status`, `decided` and (accepted)
`memory`: the record that makes a second accept of it, on another clone, a no-op.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..errors import FileError
from ..model import DEFAULT_IMPORTANCE, Detail, Problem, clean_tags, one_line
from . import details as dfile
from .frontmatter import key_line
from .fs import atomic_write, read_text, safe_join, state_dir
from .layout import check_id, slugify, valid_id
from .layout import INBOX, INBOX_ARCHIVE, md_entries

KINDS = ("new", "update")
_SHARED = ("title", "summary", "type", "created", "tags", "aliases", "importance", "pinned", "expires", "source")
STATUSES = ("pending", "accepted", "rejected")
EVIDENCE = "## Evidence"
_QUOTE_HEAD = re.compile(r"^> \*\*(?P<role>[^*]+)\*\* \((?P<time>[^()]*)\):$")


@dataclass(frozen=True)
class Quote:
    """One evidence turn: who said it, when, in which episode file (or session), verbatim."""

    role: str
    time: str
    episode: str
    text: str


@dataclass(frozen=True)
class Proposal:
    id: str
    kind: str
    title: str
    summary: str = ""
    type: str = "note"
    target: str | None = None
    engine: str = "offline"
    confidence: float = 0.5
    created: str | None = None
    tags: tuple = ()
    aliases: tuple = ()
    text: str = ""
    evidence: tuple = ()  # Quote, ...
    importance: float = DEFAULT_IMPORTANCE
    status: str = "pending"
    decided: str | None = None
    memory: str | None = None
    path: str = field(default="", compare=False)
    pinned: bool = False  # what a gated `remember` asked for, kept until the proposal is accepted
    expires: str | None = None
    source: str | None = None
    changes: tuple = ()  # an update's other changes, as (key, value) pairs of CHANGES' keys, kept until accepted

    def replace(self, **kw) -> "Proposal":
        return replace(self, **kw)

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(tags=list(self.tags), aliases=list(self.aliases), changes=dict(self.changes))
        out["evidence"] = [asdict(q) for q in self.evidence]
        return out


# What a gated `update` asks besides a summary, tags, aliases and text: kept in the proposal's
# `changes` key (written only when one is asked) and made when it is accepted.
CHANGES = ("title", "type", "untags", "importance", "pinned", "expires")


def changes_of(value) -> tuple:
    """A proposal's `changes` as read from its file: the known keys, in CHANGES' order, lists as tuples."""
    if not isinstance(value, dict):
        return ()
    out = []
    for key in CHANGES:
        v = value.get(key)
        if v is None or v == [] or v == ():
            continue
        if key == "untags":
            v = tuple(clean_tags(v if isinstance(v, (list, tuple)) else [v]))
        elif key == "pinned":
            v = bool(v)
        elif key in ("title", "type", "expires"):
            v = one_line(v)
        out.append((key, v))
    return tuple(out)


def normal_lines(text: str) -> str:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n")


def normal_text(text: str) -> str:
    """Line ends as \\n, no leading or trailing blank lines: how a proposal's text is kept."""
    return normal_lines(text).strip("\n")


def make(kind: str, title: str, *, id: str | None = None, evidence=(), changes=None, **fields) -> Proposal:
    """A pending proposal in its normal form (``fields``: the Proposal's); its id, unless given, is
    made from what it says and its evidence, so the same proposal made on two clones is one file."""
    quotes = tuple(
        Quote(one_line(q.role), one_line(q.time), one_line(q.episode), normal_lines(q.text)) for q in evidence
    )
    p = Proposal(id or "", kind, title, evidence=quotes, changes=changes_of(changes), **fields)
    p = p.replace(
        title=one_line(p.title),
        summary=one_line(p.summary),
        type=one_line(p.type),
        target=p.target or None,
        engine=one_line(p.engine),
        confidence=round(float(p.confidence), 3),
        tags=clean_tags(p.tags),
        aliases=tuple(dict.fromkeys(one_line(a) for a in p.aliases if one_line(a))),
        text=normal_text(p.text),
        importance=float(p.importance),
        pinned=bool(p.pinned),
        expires=p.expires or None,
        source=one_line(p.source) if p.source else None,
    )
    return p if id else p.replace(id=proposal_id(p))


def proposal_id(p: Proposal) -> str:
    """p-YYYYMMDD-<slug of the title>-<hash of kind, target, title, summary and evidence>, the day
    that of the earliest turn quoted (else its creation): one id on every clone and every day."""
    h = hashlib.sha1(
        "\x1f".join(
            [p.kind, p.target or "", p.title, p.summary, *(f"{q.episode}@{q.time}" for q in p.evidence)]
        ).encode("utf-8")
    ).hexdigest()[:6]
    quoted = sorted(q.time for q in p.evidence if re.match(r"\d{4}-\d{2}-\d{2}", q.time or ""))
    day = re.sub(r"\D", "", (quoted[0] if quoted else p.created or "")[:10]) or "0"
    slug = slugify(p.title)[:40].strip("-") or "proposal"
    return f"p-{day}-{slug}-{h}"


# ---------------------------------------------------------------- the file format


def render(p: Proposal) -> str:
    extra: dict = {
        "kind": p.kind,
        "target": p.target,
        "engine": p.engine,
        "confidence": p.confidence,
        "evidence": [{"episode": q.episode, "time": q.time} for q in p.evidence],
        "status": p.status,
    }
    if p.decided:
        extra["decided"] = p.decided
    if p.memory:
        extra["memory"] = p.memory
    if p.changes:
        extra["changes"] = {k: list(v) if isinstance(v, tuple) else v for k, v in p.changes}
    body = (p.text + "\n\n" if p.text else "") + EVIDENCE + "\n"
    for q in p.evidence:
        body += (
            f"\n> **{q.role}** ({q.time}):\n"
            + "\n".join(("> " + ln) if ln else ">" for ln in q.text.split("\n"))
            + "\n"
        )
    shared: dict = {k: getattr(p, k) for k in _SHARED}
    return dfile.render(Detail(id=p.id, updated=p.decided or p.created, extra=extra, body=body, **shared))


def parse(text: str, pid: str, rel: str = "") -> Proposal:
    """A Proposal from a file's text; FrontmatterError (path and line) when it is broken."""
    rel = rel or f"{INBOX}/{pid}.md"
    d = dfile.parse(text, pid, rel)
    x = d.extra
    kind = str(x.get("kind") or "new")
    if kind not in KINDS:
        raise dfile.FrontmatterError(rel, key_line(text, "kind"), f"kind must be new or update, got {kind!r}")
    status = str(x.get("status") or "pending")
    if status not in STATUSES:
        raise dfile.FrontmatterError(rel, key_line(text, "status"), f"status must be one of {', '.join(STATUSES)}")
    try:
        confidence = min(1.0, max(0.0, float(x.get("confidence", 0.5))))
    except (TypeError, ValueError):
        raise dfile.FrontmatterError(rel, key_line(text, "confidence"), "confidence must be a number from 0 to 1")
    refs = x.get("evidence") or []
    if not isinstance(refs, list):
        refs = []
    body, quotes = _split_body(d.body)
    evidence = []
    for i, (role, time, said) in enumerate(quotes):
        ref = refs[i] if i < len(refs) and isinstance(refs[i], dict) else {}
        evidence.append(Quote(role, str(ref.get("time") or time), str(ref.get("episode") or ""), said))
    target = x.get("target")
    return Proposal(
        d.id,
        kind,
        **{k: getattr(d, k) for k in _SHARED} | {"expires": d.expires or None, "source": d.source or None},
        target=None if target in (None, "") else one_line(target),
        engine=one_line(x.get("engine") or ""),
        confidence=confidence,
        text=body,
        evidence=tuple(evidence),
        status=status,
        decided=dfile.stamp_of(x.get("decided")),
        memory=None if x.get("memory") in (None, "") else one_line(x.get("memory")),
        path=rel,
        changes=changes_of(x.get("changes")),
    )


def _split_body(body: str) -> tuple[str, list]:
    """(the proposed text, [(role, time, text)] of the quotes under the last ## Evidence)."""
    lines = body.replace("\r\n", "\n").split("\n")
    at = max((i for i, ln in enumerate(lines) if ln.rstrip() == EVIDENCE), default=None)
    if at is None:
        return normal_text(body), []
    quotes: list = []
    current: list | None = None
    for ln in lines[at + 1 :]:
        m = _QUOTE_HEAD.match(ln)
        if m:
            current = [m.group("role"), m.group("time"), []]
            quotes.append(current)
        elif current is not None and ln.startswith(">"):
            current[2].append(ln[2:] if ln.startswith("> ") else ln[1:])
        elif ln.strip():
            current = None  # text a person added under the quotes: not part of one
    return normal_text("\n".join(lines[:at])), [(r, t, "\n".join(said)) for r, t, said in quotes]


# ---------------------------------------------------------------- the folder


def folder(root: Path, archived: bool = False) -> Path:
    return safe_join(root, *(INBOX_ARCHIVE if archived else INBOX).split("/"))


def path(root: Path, pid: str, archived: bool = False) -> Path:
    check_id(pid)
    return folder(root, archived) / f"{pid}.md"


def rel(pid: str, archived: bool = False) -> str:
    return f"{INBOX_ARCHIVE if archived else INBOX}/{pid}.md"


def read(root: Path, pid: str, archived: bool = False) -> Proposal:
    return parse(read_text(path(root, pid, archived), rel(pid, archived)), pid, rel(pid, archived))


def pending(root: Path) -> tuple[list, list]:
    """(the pending proposals, oldest first; Problems for files that cannot be read)."""
    found, problems = _read_folder(root)
    found.sort(key=lambda p: (p.created or "", p.id))
    return found, problems


def _read_folder(root: Path, archived: bool = False) -> tuple[list, list]:
    """(the proposals of the inbox or its archive, by file name; Problems for files that cannot be read)."""
    from . import markers

    found, problems = [], []
    for de in md_entries(folder(root, archived)):
        pid = de.name[:-3]
        r = rel(pid, archived)
        if not valid_id(pid) or de.is_symlink():
            problems.append(Problem(r, None, "not a proposal file (the name is not an id, or a symlink)"))
            continue
        try:
            text = read_text(Path(de.path), r)
            line = markers.first_conflict(text)
            if line is not None:
                problems.append(Problem(r, line, f"unresolved git conflict markers; {markers.way_out(r)}"))
                continue
            found.append(parse(text, pid, r))
        except FileError as e:
            problems.append(getattr(e, "problem", None) or Problem(r, None, e.message))
    return found, problems


def decided(root: Path, pid: str) -> Proposal | None:
    """The archived record of a proposal already accepted or rejected, or None."""
    p = path(root, pid, archived=True)
    if not p.is_file():
        return None
    try:
        return read(root, pid, archived=True)
    except FileError:
        return Proposal(pid, "new", pid, status="accepted", path=rel(pid, True))


def known_ids(root: Path) -> set:
    """Every proposal id pending or decided (what reflection must not propose again)."""
    out = set()
    for archived in (False, True):
        out |= {de.name[:-3] for de in md_entries(folder(root, archived))}
    return out


def quote_key(q: Quote) -> tuple:
    """What identifies a quoted turn across proposals: its episode, its time and its words."""
    return q.episode, q.time, hashlib.sha1(q.text.encode("utf-8")).hexdigest()[:16]


def quoted(root: Path) -> dict:
    """{quote_key: (proposal id, status)} of every turn a pending or decided (winning) proposal quotes."""
    return {quote_key(q): (p.id, p.status) for p in [*pending(root)[0], *records(root)] for q in p.evidence}


def records(root: Path) -> list:
    """The readable decided proposals of the archive, by file name."""
    return _read_folder(root, archived=True)[0]


def write(root: Path, p: Proposal) -> str:
    """Write a pending proposal, new or edited (the caller holds the root lock). Returns its relative path."""
    atomic_write(path(root, p.id), render(p))
    return rel(p.id)


def archive(root: Path, record: Proposal) -> str:
    """Move a decided proposal's record into the archive, then remove the pending file (under the root lock)."""
    atomic_write(path(root, record.id, archived=True), render(record))
    try:
        path(root, record.id).unlink(missing_ok=True)
    except OSError as e:
        raise FileError(f"cannot remove {rel(record.id)}: {e.strerror or e}")
    return rel(record.id, archived=True)


def draft(root: Path, pid: str, text: str) -> Path:
    """A copy of a proposal under .memcli/edits/ for an editor."""
    import tempfile

    fd, name = tempfile.mkstemp(".md", f"{pid}-", state_dir(root, "edits"))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return Path(name)


def waiting(root: Path, max_age: float, now=None) -> list:
    """Pending proposals older than max_age seconds: [(proposal, age in seconds)]."""
    from ..dates import now_of, parse

    t = now_of(now)
    out = []
    for p in pending(root)[0]:
        made = parse(p.created)
        if made is not None and (t - made).total_seconds() > max_age:
            out.append((p, (t - made).total_seconds()))
    return out
