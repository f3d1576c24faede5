"""Repairs that need no person: plan them from an audit, apply them under the root lock.

Nothing here deletes a memory: an expired one moves to ``memory/archive/``, a demoted one
loses only its index line. The only files removed are temp files of a crashed writer, and
only when no memcli writer can own them: the root lock is held, and the file has not been
touched for ``TEMP_MIN_AGE`` seconds (a writer that never takes the lock, such as ``init``,
still keeps writing within that time).
"""

from __future__ import annotations

import os
import stat
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..errors import FileError, MemcliError, UnsafePathError, UsageError
from ..model import Detail, Entry
from ..store import details as dfile
from ..store import indexrules
from ..store.fs import TMP_PREFIX, atomic_write, read_text
from ..store.index import IndexDoc, render_line
from .base import TEMP_MIN_AGE, Memo, Report, age, now_of, rank
from .base import when as parse_when


@dataclass(frozen=True)
class Action:
    """One safe repair. ``message`` says what it will do; ``apply`` says what it did."""

    kind: str  # remove-temp | archive | rebuild-index | drop-line | carry | rerender | demote | promote
    #            | swap-out | swap-in (index.rank: activity: the index follows recalls)
    path: str
    id: str | None
    message: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "id": self.id, "message": self.message}


def plan(report: Report) -> list[Action]:
    """The repairs that are safe without a person, in the order ``apply`` makes them."""
    st = report.state
    actions = [Action("remove-temp", rel, None, f"remove {rel} (left by a crashed writer, {age(seconds)} old)")
               for rel, seconds in st.temps if seconds >= TEMP_MIN_AGE]
    for mid in sorted(st.expired):
        actions.append(Action("archive", f"memory/{mid}.md", mid,
                              f"archive {mid} (expired {st.expired[mid]}): memory/{mid}.md -> memory/archive/{mid}.md"
                              + " and drop its index line"))
    if any(f.code == "conflict-markers" and f.path == "MEMORY.md" for f in report.findings):
        # every other index repair would read the markers as lines: the rebuild does them all
        actions.append(Action("rebuild-index", "MEMORY.md", None,
                              "rebuild MEMORY.md from both sides of its git conflict and the detail files"))
        return actions
    doc = st.index
    if doc is None:
        return actions
    live: dict[str, Memo] = {}
    fixed = doc.fixed_lines()
    for n, x in enumerate(doc.lines, 1):
        if not isinstance(x, Entry):
            continue
        mid = x.id
        if mid is None or not indexrules.is_safe_id(mid):
            fixed += 1
        elif mid in live:
            actions.append(Action("drop-line", "MEMORY.md", mid, f"drop MEMORY.md line {n}: {mid} is listed twice"))
        elif mid in st.expired:
            continue
        elif mid in st.details:
            d = st.details[mid]
            live[mid] = d
            if d.detail.entry != x and _line_is_newer(st, d.path):
                what = " and ".join(k for k in ("title", "summary", "tags") if getattr(x, k) != getattr(d.detail.entry, k))
                actions.append(Action("carry", d.path, mid,
                                      f"carry the hand edit of MEMORY.md line {n} ({what}) into {d.path} "
                                      "(the old text goes under its ## History)"))
            elif d.detail.entry != x:
                actions.append(Action("rerender", "MEMORY.md", mid,
                                      f"re-render the MEMORY.md line of {mid} from memory/{mid}.md"))
        elif mid in st.broken:
            fixed += 1  # a broken detail file: its line stays as written
        else:
            actions.append(Action("drop-line", "MEMORY.md", mid,
                                  f"drop MEMORY.md line {n}: memory/{mid}.md does not exist"))
    room = indexrules.free_room(st.max_lines, fixed)
    act = st.mem.activity() if st.mem is not None else None
    if act is not None and room > 0:
        return actions + _follow_use(st, live, room, act)
    if len(live) > room > 0:
        _, drop = indexrules.demote(indexrules.rank(live.values()), room)
        for d in drop:
            actions.append(Action("demote", "MEMORY.md", d.id,
                                  f"demote {d.id}: drop its MEMORY.md line to fit {st.max_lines} lines "
                                  f"(memory/{d.id}.md stays)"))
    elif len(live) < room:
        # a free line belongs to a memory (as `remember` would list it): pinned and important
        # ones first, then by rank; a memory a merge brought back is listed again this way
        candidates = sorted((d for mid, d in st.details.items()
                             if mid not in live and mid not in st.expired), key=rank)
        for d in candidates[:room - len(live)]:
            why = "pinned" if d.pinned else f"importance {d.importance:g}"
            actions.append(Action("promote", "MEMORY.md", d.id, f"promote {d.id} ({why}) into a free MEMORY.md line"))
    return actions


def _follow_use(st, live: dict, room: int, act) -> list[Action]:
    """index.rank: activity: the listed memories and the others compete for the room by retention
    (a free line belongs to a memory, as with importance); the losers leave, the winners come in."""
    rivals = [d for mid, d in st.details.items() if mid not in live and mid not in st.expired]
    keep, _ = indexrules.demote(indexrules.rank([*live.values(), *rivals], act), room)
    kept = {d.id for d in keep}
    out = [Action("swap-out", "MEMORY.md", d.id, f"demote {d.id}: less in use than what replaces it "
                  f"(memory/{d.id}.md stays)") for d in indexrules.rank(live.values()) if d.id not in kept]
    for d in indexrules.file_order(d for d in rivals if d.id in kept):
        n = (act.access.get(d.id) or {}).get("count", 0)
        out.append(Action("swap-in", "MEMORY.md", d.id, f"promote {d.id} into MEMORY.md (recalled {n} times)"))
    return out


# ---------------------------------------------------------------- apply

def apply(mem, actions: list[Action], now=None) -> list[str]:
    """Make the planned repairs under the root lock; each is checked again first.
    Returns one line per repair made (or skipped, with the reason)."""
    if not actions:
        return []
    when = now_of(now)
    done: list[str] = []
    by_kind = defaultdict(list)
    for a in actions:
        by_kind[a.kind].append(a)
    with mem.lock():
        for a in by_kind["remove-temp"]:
            done.append(_remove_temp(mem.root, a.path))
        archived = []
        for a in by_kind["archive"]:
            msg, ok = _archive(mem, a.id, when)
            done.append(msg)
            if ok:
                archived.append(a.id)
        if by_kind["rebuild-index"]:
            done.append(_rebuild_conflicted(mem))
            return done
        for a in by_kind["carry"]:
            done.append(_carry(mem, a.id, when))
        index_kinds = ("drop-line", "rerender", "carry", "demote", "promote", "swap-out", "swap-in")
        if archived or any(by_kind[k] for k in index_kinds):
            done += _rewrite_index(mem, by_kind, set(archived), when)
    return done


def _rebuild_conflicted(mem) -> str:
    """MEMORY.md left with git conflict markers: both sides' lines, then ranked from the detail
    files (`Memory.reconcile_index`; the lines of archived memories drop out with their files)."""
    from ..store import markers

    if markers.file_conflict(mem.index_path) is None:
        return "skipped rebuilding MEMORY.md: its conflict is already settled"
    mem.reconcile_index()
    return "rebuilt MEMORY.md from both sides of its git conflict"


def _line_is_newer(st, rel: str) -> bool:
    """MEMORY.md was written after the detail file: a line that differs was edited by hand
    (memcli writes a line from its detail file in the same step as the file)."""
    try:
        index_time = os.stat(st.mem.index_path).st_mtime_ns
        detail_time = int(st.fingerprints[rel].split(":")[0])
    except (OSError, KeyError, ValueError, AttributeError):
        return False
    return index_time > detail_time


def _carry(mem, mid: str, when: datetime) -> str:
    """Write a hand-edited index line's title, summary and tags into the detail file; what they
    replace goes under its ## History, the old title becomes an alias (as `update` does)."""
    try:
        x = next((e for e in mem.read_index().entries if e.id == mid), None)
        path = mem.detail_path(mid)
        raw = read_text(path, mem.rel(path))
        d = dfile.parse(raw, mid, mem.rel(path))
    except MemcliError as e:
        return f"skipped carrying the MEMORY.md line of {mid} into memory/{mid}.md: {e.message}"
    if x is None or x == d.entry:
        return f"skipped carrying the MEMORY.md line of {mid}: it no longer differs from memory/{mid}.md"
    try:  # the line's text goes through the write check like an update's
        fields = mem.write_check(mem.rel(path)).fields({"title": x.title, "summary": x.summary,
                                                        "tags": tuple(x.tags)}).fields
    except MemcliError as e:
        return f"skipped carrying the MEMORY.md line of {mid} into memory/{mid}.md: {e.message}"
    x = x.__class__(fields["title"], fields["summary"], fields["tags"], x.path)
    notes: list = []
    new: dict = {}
    if x.title and x.title != d.title:
        notes.append(f"title was: {d.title}")
        new["title"] = x.title
        new["aliases"] = tuple(dict.fromkeys((*d.aliases, d.title)))
    if x.summary != d.summary:
        if d.summary:
            notes.append(f"summary was: {d.summary}")
        new["summary"] = x.summary
    if x.tags != d.tags:
        notes.append(f"tags were: {', '.join(d.tags) or 'none'}")
        new["tags"] = x.tags
    stamp = when.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    body = dfile.add_history(d.body, stamp[:10], notes) if notes else d.body
    atomic_write(path, dfile.render(d.replace(updated=stamp, body=body, **new)), newline=dfile.newline_of(raw))
    return (f"carried the hand edit of {mid}'s MEMORY.md line into memory/{mid}.md "
            "(the old text is under its ## History)")


def _remove_temp(root: Path, rel: str) -> str:
    path = root / rel
    if not Path(rel).name.startswith(TMP_PREFIX) or ".." in Path(rel).parts:
        return f"skipped {rel}: not a memcli temp file"
    try:
        s = os.lstat(path)
    except FileNotFoundError:
        return f"skipped {rel}: already gone"
    seconds = time.time() - s.st_mtime
    if not stat.S_ISREG(s.st_mode) or seconds < TEMP_MIN_AGE:
        return f"skipped {rel}: it changed since the audit"
    try:
        os.unlink(path)
    except OSError as e:
        return f"skipped {rel}: {e.strerror or e}"
    return f"removed {rel} (left by a crashed writer, {age(seconds)} old)"


def _archive(mem, mid: str, when: datetime) -> tuple[str, bool]:
    src = mem.detail_path(mid)
    dst = mem.detail_path(mid, archived=True)
    try:
        d = mem.load(src)
    except (FileError, UsageError, UnsafePathError) as e:
        return f"skipped archiving {mid}: {e.message}", False
    exp = parse_when(d.expires)
    if exp is None or exp.date() >= when.date():
        return f"skipped archiving {mid}: it no longer expires before today", False
    if dst.exists() or dst.is_symlink():
        return (f"skipped archiving {mid}: memory/archive/{mid}.md already exists (merge or rename one "
                "of them by hand)"), False
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
    except OSError as e:
        return f"skipped archiving {mid}: {e.strerror or e}", False
    return f"archived {mid} (expired {d.expires}): memory/{mid}.md -> memory/archive/{mid}.md", True


def _rewrite_index(mem, by_kind: dict, archived: set, when: datetime) -> list[str]:
    """Apply the index repairs to a fresh read of MEMORY.md; one atomic write."""

    done: list[str] = []
    if not mem.index_path.exists():
        return done  # nothing lists them; `memcli index rebuild` writes a new index
    try:
        doc = mem.read_index()
    except MemcliError as e:
        return [f"skipped the MEMORY.md repairs: {e.message}"]
    drops = {a.id for a in by_kind["drop-line"]}

    def load(mid: str) -> Detail | str:
        try:
            p = mem.detail_path(mid)
            return mem.load(p) if p.is_file() else "missing"
        except (FileError, UsageError, UnsafePathError):
            return "broken"

    lines: list = []
    live: dict[str, Detail] = {}
    old: dict[str, Entry] = {}
    for x in doc.lines:
        if not isinstance(x, Entry):
            lines.append(x)
            continue
        mid = x.id
        if mid is not None and indexrules.is_safe_id(mid):
            if mid in archived:
                continue
            if mid in live:
                if mid in drops:
                    done.append(f"dropped a second MEMORY.md line of {mid}")
                    continue
                lines.append(x)
                continue
            d = load(mid)
            if isinstance(d, Detail):
                live[mid] = d
                old[mid] = x
                lines.append(x)
                continue
            if d == "missing" and mid in drops:
                done.append(f"dropped the MEMORY.md line of {mid}: memory/{mid}.md does not exist")
                continue
        lines.append(x.raw if x.raw is not None else render_line(x))  # kept as written
    fixed = sum(1 for x in lines if not isinstance(x, Entry))
    room = indexrules.free_room(int(mem.config["index.max_lines"]), fixed)
    for a in by_kind["demote"]:
        if len(live) > room and a.id in live:
            del live[a.id]
            done.append(f"demoted {a.id}: dropped its MEMORY.md line (memory/{a.id}.md stays)")
    for a in by_kind["swap-out"]:
        if a.id in live:
            del live[a.id]
            done.append(f"demoted {a.id}: dropped its MEMORY.md line (memory/{a.id}.md stays)")
    for a in by_kind["swap-in"]:
        d = load(a.id) if a.id not in live and len(live) < room else None
        exp = parse_when(d.expires) if isinstance(d, Detail) else None
        if isinstance(d, Detail) and not (exp and exp.date() < when.date()):
            live[a.id] = d
            done.append(f"promoted {a.id} into MEMORY.md (in use)")
    for a in by_kind["promote"]:
        if len(live) >= room or a.id in live:
            continue
        d = load(a.id)
        exp = parse_when(d.expires) if isinstance(d, Detail) else None
        if isinstance(d, Detail) and not (exp and exp.date() < when.date()):
            live[a.id] = d
            done.append(f"promoted {a.id} into MEMORY.md")
    for a in by_kind["rerender"]:
        if a.id in live and a.id in old and live[a.id].entry != old[a.id]:
            done.append(f"re-rendered the MEMORY.md line of {a.id} from memory/{a.id}.md")
    ranked = indexrules.rank(live.values())
    new = IndexDoc(lines, doc.newline, doc.final_newline).with_entries([d.entry for d in ranked])
    text = new.render()
    try:
        current = mem.index_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if text != current:
        atomic_write(mem.index_path, text)
    return done
