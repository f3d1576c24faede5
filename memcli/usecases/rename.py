"""A new id for a memory, resumable: its file, its frontmatter id, its MEMORY.md link and the
references to it (`memory/OLD.md`, `[[OLD]]`) in every other memory.

Thousands of files may refer to a memory, so a rename is not one atomic write. Under the root lock,
a journal (`.memcli/rename.json`: the ids, the folder, the temp-file tag of the run) is written
first, then the new file, every other file that refers to the old id (a batch per flush of the file
system: store.fs.replace_each), MEMORY.md, and last the old file is removed, then the journal. Each
step can be done again, so `memcli rename OLD NEW` finishes a killed rename of OLD to NEW (any other
rename is refused until then; heartbeat reports it). A memory that is a symbolic link is never
renamed, and references are never rewritten in a link (it would become a copy)."""

from __future__ import annotations

import os
import re
import secrets
from contextlib import suppress

from .. import progress
from ..errors import ExistsError, FileError, NotFoundError, Refused, UnsafePathError, UsageError
from ..model import Result
from ..store import details as dfile
from ..store import frontmatter
from ..store import journal as journals
from ..store import layout
from ..store.fs import atomic_write, followable, read_text, replace_each
from ..paths import TMP_PREFIX, check_id


def rewrite_refs(text: str, old: str, new: str) -> str:
    """memory/OLD.md links and [[OLD]] wiki links become NEW; nothing else is touched."""
    o = re.escape(old)
    text = re.sub(rf"(?<![\w.-])(memory/(?:archive/)?){o}\.md\b", lambda m: f"{m.group(1)}{new}.md", text)
    text = re.sub(rf"\[\[{o}((?:\|[^\]]*)?)\]\]", lambda m: f"[[{new}{m.group(1)}]]", text)
    return text


def rename(root, old: str, new: str) -> Result:
    """Give a memory a new id (see the module's doc). A journal for old and new finishes that rename."""
    check_id(old)
    check_id(new)
    if old == new:
        raise UsageError("the old and the new id are the same")
    with root.lock():
        journal = journals.pending(root.path)
        if journal is not None:
            if (journal["old"], journal["new"]) != (old, new):
                raise Refused(
                    f"a rename of {journal['old']} to {journal['new']} did not finish; run "
                    f"`memcli rename {journal['old']} {journal['new']}` to finish it first",
                    data={"pending": {"old": journal["old"], "new": journal["new"]}},
                )
            return _run(root, journal, resumed=True)
        src = next((p for p in (root.detail_path(old), root.detail_path(old, archived=True)) if p.is_file()), None)
        if src is None:
            raise root.not_found(old)  # with close candidates
        if src.is_symlink():
            raise UnsafePathError(
                f"{root.rel(src)} is a symbolic link; rename the file it points to, or replace the link with the file"
            )
        for a in (False, True):
            if root.detail_path(new, archived=a).exists() or root.detail_path(new, archived=a).is_symlink():
                raise ExistsError(f"a memory with id {new!r} already exists; pick another id")
        dfile.parse(read_text(src, root.rel(src)), old, root.rel(src))  # a broken file is not renamed
        journal = {
            "old": old,
            "new": new,
            "archived": src.parent.name == "archive",
            "tag": f"rename-{secrets.token_hex(4)}-",
        }
        journals.start(root.path, journal)
        return _run(root, journal, resumed=False)


def _run(root, j: dict, resumed: bool) -> Result:
    old, new, archived, tag = j["old"], j["new"], bool(j.get("archived")), str(j.get("tag") or "rename-")
    if resumed:  # the temp files a killed run of this rename left behind
        for rel, _ in layout.temp_files(root.path, TMP_PREFIX + tag):
            with suppress(OSError):
                os.unlink(root.path / rel)
    src, dst = root.detail_path(old, archived=archived), root.detail_path(new, archived=archived)
    if src.is_file() and not dst.exists():
        raw = read_text(src, root.rel(src))
        text, newline = _with_id(raw, old, new, root.rel(src))
        atomic_write(dst, rewrite_refs(text, old, new), newline=newline)
    elif not dst.is_file():
        journals.finish(root.path)
        raise NotFoundError(
            f"the rename of {old} to {new} cannot go on: neither {root.rel(src)} nor "
            f"{root.rel(dst)} is there (the journal is removed)"
        )
    writes, changed, skipped = [], [], []
    for p in progress.each(root.detail_files() + root.detail_files(archived=True), "rewriting references"):
        if p in (src, dst):
            continue
        if p.is_symlink():  # its target, when it is a memory, is rewritten as itself
            if followable(root.path, p):
                continue
            skipped.append(root.rel(p))
            continue
        try:
            other = read_text(p, root.rel(p))
        except FileError:
            continue
        new_text = rewrite_refs(other, old, new)
        if new_text != other:
            writes.append((p, new_text))
            changed.append(p.stem)
    replace_each(writes, tag)
    index_changed = False
    if root.index_path.is_file() and not root.index_path.is_symlink():
        idx = read_text(root.index_path, layout.INDEX)
        new_idx = rewrite_refs(idx, old, new)
        if new_idx != idx:
            atomic_write(root.index_path, new_idx)
            index_changed = True
    try:
        src.unlink(missing_ok=True)
    except OSError as e:
        raise FileError(
            f"renamed to {root.rel(dst)} but cannot remove {root.rel(src)}: {e.strerror or e}; "
            f"run `memcli rename {old} {new}` again"
        )
    journals.finish(root.path)
    out = Result(
        {
            "action": "renamed",
            "old": old,
            "id": new,
            "path": root.rel(dst),
            "index": index_changed,
            "references": changed,
            "resumed": resumed,
        }
    )
    if skipped:
        out["not_followed"] = skipped
    return out


def _with_id(raw: str, old: str, new: str, rel: str) -> tuple[str, str]:
    """The file's text with its frontmatter id changed, as it is (line ends included) when the id
    line can be found; otherwise rendered again."""
    fm_id = re.compile(rf"^id:[ \t]*['\"]?{re.escape(old)}['\"]?[ \t]*(\r?)$", re.M)
    block = frontmatter.span(raw)
    if block is not None and len(fm_id.findall(raw[: block[1]])) == 1:
        start, end = block
        return raw[:start] + fm_id.sub(lambda m: f"id: {new}{m.group(1)}", raw[start:end], count=1) + raw[end:], "\n"
    d = dfile.parse(raw, old, rel)
    return dfile.render(d.replace(id=new)), dfile.newline_of(raw)
