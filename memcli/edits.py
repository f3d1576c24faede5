"""Editing a memory by hand without losing what others write meanwhile, and bringing one back
from the archive.

An edit works on a draft: ``begin`` copies the detail file to ``.memcli/edits/<id>-<time>.md``
(local, never committed) and remembers its text; the editor runs on the draft with no lock held.
``finish`` takes the root lock and reads the file again: unchanged, the draft replaces it; changed
meanwhile, the two versions are merged line by line against the text the editor started from
(``merge3``); when they overlap, the file keeps the other change, the draft stays where it is and
``Refused`` (exit 4) names it. A draft whose frontmatter is broken never replaces the file either.
A broken file can still be opened: that is how a person repairs it.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ExistsError, FileError, MemcliError, Refused, UsageError
from .model import Detail
from .store import details as dfile
from .store.fs import MAX_FILE_BYTES, STATE_DIR, atomic_write, state_dir

EDITS = "edits"


@dataclass
class EditSession:
    """One edit in progress: what the editor opens (``draft``) and the text it started from."""

    id: str
    path: Path  # the detail file
    draft: Path  # the copy the editor works on
    base: str  # the detail file's text when the edit began
    archived: bool = False

    def to_dict(self) -> dict:
        return {"id": self.id, "path": str(self.path), "draft": str(self.draft), "archived": self.archived}


def raw_text(path: Path, rel: str) -> str:
    """A file's exact text (no newline or BOM normalising), for comparing and merging."""
    try:
        with open(path, "rb") as f:
            data = f.read(10 * MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileError(f"{rel}: no such file")
    except OSError as e:
        raise FileError(f"{rel}: cannot read it ({e.strerror or e})")
    if len(data) > 10 * MAX_FILE_BYTES:
        raise FileError(f"{rel}: larger than {10 * MAX_FILE_BYTES // 1_000_000} MB; edit it with another tool")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileError(f"{rel}: not UTF-8 text (byte {e.start}); edit it with another tool")


def locate(mem, memory_id: str) -> tuple[Path, bool]:
    """(path, archived) of a memory by exact id, without reading it: broken files are found too."""
    for archived in (False, True):
        path = mem.detail_path(memory_id, archived)
        if path.is_file():
            return path, archived
    raise mem._not_found(memory_id)


def begin(mem, memory_id: str) -> EditSession:
    path, archived = locate(mem, memory_id)
    base = raw_text(path, mem.rel(path))
    folder = state_dir(mem.root, EDITS)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        draft = folder / (f"{memory_id}-{stamp}.md" if n == 1 else f"{memory_id}-{stamp}-{n}.md")
        try:
            fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(base.encode("utf-8"))
        return EditSession(memory_id, path, draft, base, archived)
    raise FileError(f"cannot create a draft in {STATE_DIR}/{EDITS}/")  # pragma: no cover


def _shown(mem, draft: Path) -> str:
    try:
        return draft.relative_to(mem.root).as_posix()
    except ValueError:
        return str(draft)


def abandon(mem, s: EditSession) -> str | None:
    """The editor failed: drop an untouched draft; a changed one is kept (its path returned)."""
    try:
        text = raw_text(s.draft, _shown(mem, s.draft))
    except FileError:
        return None
    if text == s.base:
        _drop(s.draft)
        return None
    return _shown(mem, s.draft)


def _drop(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def finish(mem, s: EditSession, text: str | None = None, now: str | None = None):
    """Write the edited text (merged with any change made meanwhile) and refresh the index line.

    The text passes the write check as an edit (its frontmatter block, values remember would
    accept, no control character, conflict-marker line or secret); a refusal leaves the file as
    it is and the draft where it is. A change bumps `updated` unless the editor changed it."""
    from .core import WriteResult, _line_for, utcnow

    shown = _shown(mem, s.draft)
    ours = raw_text(s.draft, shown) if text is None else text
    if text is not None:
        atomic_write(s.draft, text)
    with mem.lock():
        path, archived = s.path, s.archived
        if not path.is_file():
            try:
                path, archived = locate(mem, s.id)  # archived (or restored) meanwhile
            except MemcliError:
                raise Refused(f"{mem.rel(s.path)} was removed while it was open in the editor; "
                              f"your text is kept in {shown}", data={"draft": shown})
        rel = mem.rel(path)
        theirs = raw_text(path, rel)
        action = "edited"
        if theirs == s.base or theirs == ours:
            new = ours
        else:
            from .merge3 import merge

            # a person is at the editor: lines both sides added at one place are a conflict for
            # them to settle, not an interleaving for memcli to choose
            new = merge(s.base, ours, theirs, keep_both=False)
            if new is None:
                raise Refused(f"{rel} changed while it was open in the editor and the changes overlap; "
                              f"the file keeps the other change, your text is kept in {shown} "
                              f"(copy what you need into `memcli edit {s.id}`)", data={"draft": shown})
            action = "merged"
        if new == theirs:
            _drop(s.draft)
            return WriteResult("unchanged", s.id, rel, s.id in {e.id for e in mem.read_index().entries})
        try:
            checked = mem.write_check(rel).file(new, rel, s.id, edited=True, what="the edited text")
            newline = dfile.newline_of(checked.text)
            new, d = _bumped(checked.text.replace("\r\n", "\n"), checked.detail, s.base, s.id, rel, now or utcnow())
        except MemcliError as e:
            raise type(e)(f"{e.message}; {rel} is unchanged, your text is kept in {shown} "
                          f"(run `memcli edit {s.id}` again and fix it)",
                          data={**(e.data if isinstance(e.data, dict) else {}), "draft": shown}) from None
        from .safety.pii import PiiError

        try:
            masked, pii_notes = mem.mask({"edited text": new})  # write.pii: an edit is a deliberate write
        except PiiError as e:
            raise PiiError(f"{e.message}; {rel} is unchanged, your text is kept in {shown}",
                           data={**(e.data or {}), "draft": shown}) from None
        if masked["edited text"] != new:
            new = masked["edited text"]
            d = dfile.parse(new, s.id, rel)
        doc = mem.read_index()
        plan = mem._plan_index(doc, changed=None if archived else d)
        writes = [(path, new, newline)]
        text_index = mem._index_text(doc, plan.entries)
        if text_index is not None:
            writes.append((mem.index_path, text_index))
        from .store.fs import atomic_write_many

        atomic_write_many(writes)
    _drop(s.draft)
    result = WriteResult(action, s.id, rel, s.id in plan.ids, line=_line_for(plan.entries, s.id),
                         redacted=checked.redacted)
    if checked.redacted:
        result.warnings.append(checked.warning(rel))
    result.warnings += pii_notes
    return result


def _bumped(text: str, d: Detail, base: str, memory_id: str, rel: str, now: str) -> tuple[str, Detail]:
    """The edited text with `updated` set to now (so a later hand edit wins a git merge against an
    earlier update made elsewhere), unless the editor changed `updated` itself."""
    try:
        before = dfile.parse(base, memory_id, rel).updated
    except dfile.FrontmatterError:
        before = None
    if d.updated != before and before is not None:
        return text, d
    bumped = d.replace(updated=now)
    return dfile.render_update(text, d, bumped), bumped


def restore(mem, memory_id: str, now: str) -> object:
    """memory/archive/<id>.md back to memory/<id>.md, its passed expiry cleared, and into the index."""
    from .core import _expired

    with mem.lock():
        src = mem.detail_path(memory_id, archived=True)
        dst = mem.detail_path(memory_id)
        if not src.is_file():
            if dst.is_file():
                raise UsageError(f"{memory_id} is not archived: memory/{memory_id}.md is live")
            raise mem._not_found(memory_id)
        if dst.exists() or dst.is_symlink():
            raise ExistsError(f"memory/{memory_id}.md already exists; merge or rename one of the two by hand "
                              f"(the archived one is {mem.rel(src)})")
        raw = raw_text(src, mem.rel(src))
        d = dfile.parse(raw, memory_id, mem.rel(src))
        text = raw
        if d.expires and _expired(d, now[:10]):
            body = dfile.add_history(d.body, now[:10], [f"restored from the archive (expired {d.expires})"])
            d = d.replace(expires=None, updated=now, body=body)
            text = dfile.render(d)
        return _move_in(mem, d, src, dst, text, "restored")


def _move_in(mem, d: Detail, src: Path, dst: Path, text: str, action: str, newline: str = "\n"):
    """Write an archived memory's text to memory/ with its index line, then remove the archived copy."""
    from .core import WriteResult, _line_for

    doc = mem.read_index()
    plan = mem._plan_index(doc, add=d)
    warnings = list(plan.warnings)
    if plan.refused:
        doc = mem.read_index()
        plan = mem._plan_index(doc)
        warnings.append(f"the index is full and index.on_full is refuse: {d.id} is back in memory/ "
                        "but not listed in MEMORY.md")
    mem._write_with_index(doc, plan.entries, (dst, text, newline))
    try:
        os.unlink(src)
    except OSError as e:
        warnings.append(f"could not remove {mem.rel(src)} ({e.strerror or e}); delete it by hand")
    r = WriteResult(action, d.id, mem.rel(dst), d.id in plan.ids, line=_line_for(plan.entries, d.id))
    r.warnings += warnings
    return r
