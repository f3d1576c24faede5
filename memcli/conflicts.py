"""Settling what a git merge leaves: MEMORY.md reconciled with the detail files after a merge,
and a memory left with conflict markers resolved to one side (the other kept in History)."""

from __future__ import annotations

import re

from .errors import UnsafePathError, UsageError
from .model import Entry
from .store import details as dfile
from .store import layout, markers
from .store.details import add_history
from .store.fs import atomic_write, read_text
from .store.index import IndexDoc

_UPDATED = re.compile(r"\s*updated:\s*['\"]?\d{4}-\d\d-\d\d[T ]?[\d:.]*Z?['\"]?\s*$")  # a frontmatter time line


def reconcile_index(mem) -> bool:
    """Bring MEMORY.md in line with the detail files, as after a git merge: conflict markers
    settled as both sides, each memory listed once, lines to missing files dropped, the rest
    ranked and demoted to fit. Deterministic: the same MEMORY.md and detail files give the
    same bytes. Returns whether the file changed."""
    with mem.lock():
        try:
            text = mem.index_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False
        size = markers.size_for(mem.index_path)
        doc = IndexDoc.parse(markers.union(text, size) if markers.first_conflict(text, size) else text)
        seen: set = set()
        lines = []
        for x in doc.lines:
            if isinstance(x, Entry) and x.id:
                if x.id in seen:
                    continue
                try:
                    exists = mem.detail_path(x.id).is_file()
                except (UsageError, UnsafePathError):
                    exists = True  # not a memory's line: kept as written
                if not exists:
                    continue
                seen.add(x.id)
            lines.append(x)
        doc = IndexDoc(lines, doc.newline, doc.final_newline)
        # the trace is local to each clone: a merged index is planned without it (index.rank: activity)
        new = doc.with_entries(mem._plan_index(doc, trace=False, fit=True).entries).render()
        if new == text:
            return False
        with markers.overwriting():
            atomic_write(mem.index_path, new)
    return True


def index_revived(mem, ids) -> list:
    """List again in MEMORY.md the memories a merge kept although one side forgot them (the
    other changed them), as `remember` lists a memory: the lowest-ranked entry moves out when the
    index is full (under `index.on_full: refuse` it stays unlisted, and heartbeat says so).
    Returns the ids listed."""
    from .errors import MemcliError

    listed = []
    with mem.lock():
        for memory_id in ids:
            try:
                d = mem.load(mem.detail_path(memory_id))
                doc = mem.read_index()
            except MemcliError:
                continue  # a broken file stays out; heartbeat reports it
            if any(e.id == memory_id for e in doc.entries):
                continue
            plan = mem._plan_index(doc, add=d)
            if plan.refused or memory_id not in plan.ids:
                continue
            mem._write_index(doc, plan.entries)
            listed.append(memory_id)
    return listed


def resolve(mem, memory_id: str, side: str, now: str) -> dict:
    """Settle a memory left with git conflict markers: side is ours, theirs or both. A side not
    kept goes into the dated ## History section; the index line is refreshed."""
    if side not in ("ours", "theirs", "both"):
        raise UsageError(f"side must be ours, theirs or both, got {side!r}")
    with mem.lock():
        path = mem._existing(memory_id)
        rel = mem.rel(path)
        text = read_text(path, rel)
        size = markers.size_for(path)
        if markers.first_conflict(text, size) is None:
            raise UsageError(f"{rel} has no conflict markers; nothing to resolve")
        settled, dropped = markers.settle(text, side, size)
        d = dfile.parse(settled, memory_id, rel)
        other = "theirs" if side == "ours" else "ours"
        # what the other side said, without its `updated:` time (not a thing a person needs kept)
        said = [[ln.strip() for ln in t.split("\n") if ln.strip() and not _UPDATED.match(ln)] for t in dropped]
        said = [lines for lines in said if lines]
        if said:
            notes = [f"conflict settled with {side}; {other} had: " + " / ".join(lines) for lines in said]
            d = d.replace(body=add_history(d.body, now[:10], notes))
        with markers.overwriting():
            atomic_write(path, dfile.render(d))
        if rel == layout.detail_rel(memory_id) and markers.file_conflict(mem.index_path) is None:
            doc = mem.read_index()
            mem._write_index(doc, mem._plan_index(doc).entries)
    return {"id": memory_id, "path": rel, "side": side, "kept_in_history": len(said)}

