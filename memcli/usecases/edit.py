"""Editing a memory by hand without losing what others write meanwhile.

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

from ..dates import utcnow
from ..errors import FileError, MemcliError, Refused
from ..model import Detail, WriteResult
from ..safety.writecheck import WriteCheck, mask
from ..store import details as dfile
from ..store import layout
from ..store.fs import atomic_write, read_exact

EDITS = layout.EDITS


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


def begin(root, memory_id: str) -> EditSession:
    """Copy a memory (broken ones too) to a draft under .memcli/edits/ for the editor."""
    path, archived = root.locate(memory_id)
    base = read_exact(path, root.rel(path))
    folder = root.state_dir(EDITS)
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
    raise FileError(f"cannot create a draft in {layout.state_rel(EDITS)}/")  # pragma: no cover


def _shown(root, draft: Path) -> str:
    try:
        return draft.relative_to(root.path).as_posix()
    except ValueError:
        return str(draft)


def abandon(root, s: EditSession) -> str | None:
    """The editor failed: drop an untouched draft; a changed one is kept (its path returned)."""
    try:
        text = read_exact(s.draft, _shown(root, s.draft))
    except FileError:
        return None
    if text == s.base:
        _drop(s.draft)
        return None
    return _shown(root, s.draft)


def _drop(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def finish(root, s: EditSession, text: str | None = None, now: str | None = None) -> WriteResult:
    """Write the edited text (merged with any change made meanwhile) and refresh the index line.

    The text passes the write check as an edit (its frontmatter block, values remember would
    accept, no control character, conflict-marker line or secret); a refusal leaves the file as
    it is and the draft where it is. A change bumps `updated` unless the editor changed it."""
    shown = _shown(root, s.draft)
    ours = read_exact(s.draft, shown) if text is None else text
    if text is not None:
        atomic_write(s.draft, text)
    with root.lock():
        path, archived = s.path, s.archived
        if not path.is_file():
            try:
                path, archived = root.locate(s.id)  # archived (or restored) meanwhile
            except MemcliError:
                raise Refused(f"{root.rel(s.path)} was removed while it was open in the editor; "
                              f"your text is kept in {shown}", data={"draft": shown})
        rel = root.rel(path)
        theirs = read_exact(path, rel)
        action = "edited"
        if theirs == s.base or theirs == ours:
            new = ours
        else:
            from ..merge3 import merge

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
            return WriteResult("unchanged", s.id, rel, s.id in {e.id for e in root.read_index().entries})
        try:
            checked = WriteCheck.of(root, rel).file(new, rel, s.id, edited=True, what="the edited text")
            newline = dfile.newline_of(checked.text)
            new, d = _bumped(checked.text.replace("\r\n", "\n"), checked.detail, s.base, s.id, rel, now or utcnow())
        except MemcliError as e:
            raise type(e)(f"{e.message}; {rel} is unchanged, your text is kept in {shown} "
                          f"(run `memcli edit {s.id}` again and fix it)",
                          data={**(e.data if isinstance(e.data, dict) else {}), "draft": shown}) from None
        from ..safety.pii import PiiError

        try:
            masked, pii_notes = mask(root, {"edited text": new})  # write.pii: an edit is a deliberate write
        except PiiError as e:
            raise PiiError(f"{e.message}; {rel} is unchanged, your text is kept in {shown}",
                           data={**(e.data or {}), "draft": shown}) from None
        if masked["edited text"] != new:
            new = masked["edited text"]
            d = dfile.parse(new, s.id, rel)
        plan = root.plan_index(root.read_index(), changed=None if archived else d)
        root.write(plan, (path, new, newline))
    _drop(s.draft)
    result = WriteResult(action, s.id, rel, s.id in plan.ids, line=plan.line_for(s.id), redacted=checked.redacted)
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
