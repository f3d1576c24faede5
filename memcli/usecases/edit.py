"""Editing a memory by hand without losing what others write meanwhile: the editor works on a draft
under ``.memcli/edits/`` with no lock held; ``finish`` merges it with any change made meanwhile, and
where they overlap keeps the other change and the draft (``Refused``). A broken file can be opened:
that is how a person repairs it."""

from __future__ import annotations

import datetime as _dt
import os
from contextlib import suppress
from dataclasses import asdict, dataclass
from pathlib import Path

from ..dates import utcnow
from ..errors import FileError, MemcliError, Refused, UsageError
from ..model import Detail, WriteResult
from ..safety.writecheck import WriteCheck, mask
from ..store import details as dfile
from ..store import layout, markers
from ..store.fs import atomic_write, read_exact


@dataclass
class EditSession:
    """One edit in progress: what the editor opens (``draft``) and the text it started from.
    ``reopened``: the draft was kept by an edit that failed, and this edit goes on with it."""

    id: str
    path: Path  # the detail file
    draft: Path  # the copy the editor works on
    base: str  # the detail file's text when the edit began
    archived: bool = False
    reopened: bool = False
    marked: int = 0  # conflicts marked in a reopened draft whose file changed since

    def to_dict(self) -> dict:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items() if k != "base"}


BASE = ".base"  # beside each draft: the text the edit started from, for the merge when it is reopened


def begin(root, memory_id: str, reuse: bool | None = True) -> EditSession:
    """Copy a memory (broken ones too) to a draft for the editor. A draft a failed edit kept is opened
    again instead when reuse is True, left when False; None: UsageError naming it, for the person."""
    path, archived = root.locate(memory_id)
    folder = root.state_dir(layout.EDITS)
    kept = _kept(folder, memory_id) if reuse is not False else None
    base = read_exact(path, root.rel(path))
    if kept is not None and reuse is None:
        shown = _shown(root, kept[0])
        raise UsageError(
            f"an earlier edit of {memory_id} left a draft ({shown}): `memcli edit {memory_id} --reuse-draft` "
            "goes on with it, `--new-draft` starts again from the file and leaves the draft where it is",
            data={"draft": shown},
        )
    if kept is not None:
        return _reopen(root, memory_id, path, archived, *kept, base)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        draft = folder / (f"{memory_id}-{stamp}.md" if n == 1 else f"{memory_id}-{stamp}-{n}.md")
        try:
            fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(base.encode("utf-8"))
        atomic_write(_base_of(draft), base)
        return EditSession(memory_id, path, draft, base, archived)
    raise FileError(f"cannot create a draft in {layout.state_rel(layout.EDITS)}/")  # pragma: no cover


def _reopen(root, memory_id: str, path: Path, archived: bool, draft: Path, started: str, now: str) -> EditSession:
    """Go on with a kept draft. When the file changed since its edit began, the draft is brought up to
    the file as it is now: merged line by line, or, where the two overlap, both versions between
    conflict markers for the person to settle (the write check refuses a marker line)."""
    marked = 0
    if now != started:
        from ..merge3 import merge, merge3, merged_lines

        ours = read_exact(draft, _shown(root, draft))
        text = merge(started, ours, now)
        if text is None:
            lines, marked = merged_lines(
                merge3(started.split("\n"), ours.split("\n"), now.split("\n")), labels=("your draft", "the file now")
            )
            text = "\n".join(lines)
        with markers.overwriting():  # a draft is the person's: markers in it are theirs to settle
            atomic_write(draft, text)
        atomic_write(_base_of(draft), now)
    return EditSession(memory_id, path, draft, now, archived, reopened=True, marked=marked)


def _base_of(draft: Path) -> Path:
    return draft.with_name(draft.name + BASE)


def _kept(folder: Path, memory_id: str) -> tuple[Path, str] | None:
    """(the newest draft of this memory a failed edit kept, the text that edit started from), or None."""
    import re

    name = re.compile(re.escape(memory_id) + r"-\d{8}T\d{6}Z(-\d+)?\.md")
    drafts = [p for p in folder.glob("*.md") if name.fullmatch(p.name) and p.is_file() and not p.is_symlink()]
    for draft in sorted(drafts, key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True):
        try:
            return draft, read_exact(_base_of(draft), draft.name + BASE)
        except FileError:
            continue  # a draft without the text it started from cannot be merged again: left as it is
    return None


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
    """Remove a draft and the text its edit started from."""
    for p in (path, _base_of(path)):
        with suppress(OSError):
            os.unlink(p)


def finish(root, s: EditSession, text: str | None = None, now: str | None = None) -> WriteResult:
    """Write the edited text (merged with any change made meanwhile) through the write check and
    refresh the index line; a refusal leaves the file and the draft as they are."""
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
                raise Refused(
                    f"{root.rel(s.path)} was removed while it was open in the editor; your text is kept in {shown}",
                    data={"draft": shown},
                )
        rel = root.rel(path)
        theirs = read_exact(path, rel)
        action = "edited"
        if theirs == s.base or theirs == ours:
            new = ours
        else:
            from ..merge3 import merge

            # a person is at the editor: lines both sides added at one place are a conflict for
            # them to settle, not an interleaving for memcli to choose
            merged = merge(s.base, ours, theirs, keep_both=False)
            if merged is None:
                raise Refused(
                    f"{rel} changed while it was open in the editor and the changes overlap; "
                    f"the file keeps the other change, your text is kept in {shown} "
                    f"(copy what you need into `memcli edit {s.id}`)",
                    data={"draft": shown},
                )
            new, action = merged, "merged"
        if new == theirs:
            _drop(s.draft)
            return WriteResult("unchanged", s.id, rel, s.id in {e.id for e in root.read_index().entries})
        from ..safety.pii import PiiError

        try:
            checked = WriteCheck.of(root, rel).file(new, rel, s.id, edited=True, what="the edited text")
            text = checked.text or ""  # a file's check always gives its text
            newline = dfile.newline_of(text)
            new, d = _bumped(text.replace("\r\n", "\n"), checked.detail, s.base, s.id, rel, now or utcnow())
            masked, pii_notes = mask(root, {"edited text": new})  # write.pii: an edit is a deliberate write
        except MemcliError as e:
            again = "" if isinstance(e, PiiError) else f" (`memcli edit {s.id} --reuse-draft` opens it again to fix it)"
            raise type(e)(
                f"{e.message}; {rel} is unchanged, your text is kept in {shown}{again}",
                data={**(e.data if isinstance(e.data, dict) else {}), "draft": shown},
            ) from None
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
