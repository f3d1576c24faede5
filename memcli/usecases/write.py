"""Writing memories: remember, update, forget, restore; every write passes the one write check and
lands with its index line in one step under the root lock."""

from __future__ import annotations

import os
from pathlib import Path

from ..dates import expired, expires_at, utcnow
from ..errors import ExistsError, FileError, IndexFullError, UsageError
from ..model import (
    DEFAULT_IMPORTANCE,
    DEFAULT_TYPE,
    DETAIL_KEYS,
    TYPES,
    Detail,
    WriteResult,
    clean_tags,
    importance_of,
    one_line,
)
from ..safety.writecheck import WriteCheck, mask
from ..store import details as dfile
from ..store import frontmatter, layout
from ..store.details import add_history
from ..store.fs import read_exact, read_text
from ..paths import check_id, slugify, valid_id
from ..requests import RememberRequest, UpdateRequest
from ..safety.text_limits import check_rendered, check_sizes, check_text_field


def with_frontmatter(req: RememberRequest) -> tuple[RememberRequest, dict]:
    """(the request with its body's frontmatter taken in where it leaves a field unset, the body
    without the block; the frontmatter's other keys, kept as the memory's own)."""
    body, front = frontmatter.strip(req.body or "")
    extra = {k: v for k, v in front.items() if k not in DETAIL_KEYS}
    if not front:
        return req.replace(body=body), extra

    def unset(key):
        value = getattr(req, key)
        return _front_value(front, key) if value is None else value

    return req.replace(
        summary=req.summary or one_line(front.get("summary") or ""),
        tags=tuple(req.tags) + tuple(dfile.str_list(front.get("tags"))),
        aliases=tuple(req.aliases) + tuple(dfile.str_list(front.get("aliases"))),
        body=body,
        **{k: unset(k) for k in ("type", "importance", "pinned", "expires", "source")},
    ), extra


def remember_request(root, req: RememberRequest) -> WriteResult:
    """Write a new detail file and its index line (demoting the lowest entry when full); a body's own
    frontmatter gives what the request leaves unset."""
    req, extra = with_frontmatter(req)
    type = DEFAULT_TYPE if req.type is None else req.type
    _check_input(title=req.title, summary=req.summary, tags=req.tags, aliases=req.aliases, id=req.id, source=req.source)
    title = one_line(req.title or "")
    if not title:
        raise UsageError("a title is required and must not be blank")
    if type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
    importance = importance_of(DEFAULT_IMPORTANCE if req.importance is None else req.importance, strict=True)
    now = req.now or utcnow()
    expires, id = expires_at(req.expires, now), req.id
    checked = WriteCheck.of(root, layout.detail_rel(id if id and valid_id(id) else slugify(title))).fields(
        {
            "title": title,
            "summary": one_line(req.summary or ""),
            "body": req.body,
            "tags": tuple(req.tags),
            "aliases": tuple(req.aliases),
            "source": req.source or "",
            "id": id or "",
            "extra": extra,
        }
    )
    fields = checked.fields
    masked, pii_warnings = mask(root, {k: v for k, v in fields.items() if k != "id"})
    fields.update(masked)
    if id:
        memory_id = check_id(fields["id"] if fields["id"] == id else slugify(fields["id"]))
    else:
        memory_id = slugify(fields["title"])
    if memory_id == layout.INDEX[:-3]:
        raise UsageError(f"{memory_id!r} is the index's name; pass another --id")
    d = Detail(
        id=memory_id,
        title=fields["title"],
        summary=fields["summary"],
        tags=clean_tags(fields["tags"]),
        aliases=tuple(dict.fromkeys(one_line(a) for a in fields["aliases"] if one_line(a))),
        type=type,
        importance=importance,
        pinned=dfile.flag(req.pinned or False),
        created=now,
        updated=now,
        expires=expires,
        source=fields["source"] or None,
        extra=fields["extra"],
        body=body_text(fields["body"]),
    )
    text = dfile.render(d)
    check_rendered(text)
    path = root.detail_path(memory_id)
    with root.lock():
        if path.exists():
            raise ExistsError(
                f"a memory with id {memory_id!r} already exists; use `memcli update {memory_id}` or pass another --id"
            )
        if root.detail_path(memory_id, archived=True).exists():
            raise ExistsError(
                f"a memory with id {memory_id!r} is archived ({layout.detail_rel(memory_id, True)}): "
                f"`memcli restore {memory_id}` brings it back, `memcli forget {memory_id} --purge` "
                "deletes it; or pass another --id"
            )
        plan = root.plan_index(root.read_index(), add=d)
        if plan.refused:
            raise IndexFullError(
                f"the index is full ({root.config['index.max_lines']} lines) and index.on_full is refuse; "
                "nothing was written. Raise index.max_lines or forget an entry"
            )
        root.write(plan, (path, text))
    result = WriteResult(
        "remembered", memory_id, root.rel(path), memory_id in plan.ids, redacted=checked.redacted, demoted=plan.demoted
    )
    result.line = plan.line_for(memory_id)
    result.warnings += plan.warnings + pii_warnings
    if d.expires and expired(d.expires, now[:10]):
        result.warnings.append(_passed(d.expires))
    if checked.redacted:
        result.warnings.append(checked.warning())
    from .duplicates import duplicate_warnings  # after the write, outside the lock: it only reads

    result.warnings += duplicate_warnings(root, d)
    return result


def update_request(root, req: UpdateRequest) -> WriteResult:
    """Change a memory, a replaced title or summary kept under ## History. Only the frontmatter keys
    that change are rewritten: comments and the layout of the others stay."""
    memory_id, now = req.id, req.now or utcnow()
    check_id(memory_id)
    _check_input(title=req.title, summary=req.summary, tags=req.tags, aliases=req.aliases)
    if req.type is not None and req.type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {req.type!r}")
    importance = None if req.importance is None else importance_of(req.importance, strict=True)
    if req.title is not None and not one_line(req.title):
        raise UsageError("a title must not be blank")
    if req.summary is not None and not one_line(req.summary):
        raise UsageError("a summary must not be blank")
    checked = WriteCheck.of(root, layout.detail_rel(memory_id)).fields(
        {
            "title": one_line(req.title or ""),
            "summary": one_line(req.summary or ""),
            "append": req.append or "",
            "tags": tuple(req.tags),
            "aliases": tuple(req.aliases),
        }
    )
    fields, warnings = mask(root, checked.fields)
    with root.lock():
        path = root.locate(memory_id)[0]
        raw = read_text(path, root.rel(path))
        d = dfile.parse(raw, memory_id, root.rel(path))
        history, new = replaced(
            d, None if req.title is None else fields["title"], None if req.summary is None else fields["summary"]
        )
        drop = set(clean_tags(req.untags))
        unknown = [t for t in clean_tags(req.untags) if t not in d.tags]
        if unknown:
            warnings.append(f"{memory_id} has no tag {', '.join(unknown)}")
        new_tags = tuple(t for t in clean_tags((*d.tags, *fields["tags"])) if t not in drop)
        if new_tags != d.tags:
            new["tags"] = new_tags
        aliases_now = new.get("aliases", d.aliases)
        new_aliases = tuple(dict.fromkeys((*aliases_now, *(one_line(a) for a in fields["aliases"] if one_line(a)))))
        if new_aliases != d.aliases:
            new["aliases"] = new_aliases
        if req.type is not None and req.type != d.type:
            new["type"] = req.type
        if importance is not None and importance != d.importance:
            new["importance"] = importance
        if req.pinned is not None and bool(req.pinned) != d.pinned:
            new["pinned"] = bool(req.pinned)
        if req.expires is not None and expires_at(req.expires, now) != d.expires:
            new["expires"] = expires_at(req.expires, now)
        body = d.body
        if fields["append"].strip():
            body = dfile.append_body(body, fields["append"].replace("\r\n", "\n"))
        if history:
            body = add_history(body, now[:10], history)
        if not new and body == d.body:
            listed = memory_id in {e.id for e in root.read_index().entries}
            return WriteResult("unchanged", memory_id, root.rel(path), listed, warnings=warnings)
        old, d = d, d.replace(updated=now, body=body, **new)
        check_sizes({"tags": d.tags, "aliases": d.aliases})
        text = dfile.render_update(raw, old, d)
        check_rendered(text)
        live = path == root.detail_path(memory_id)
        if not live and req.expires is not None and not expired(d.expires, now[:10]):
            moved = move_in(root, d, path, root.detail_path(memory_id), text, "restored", dfile.newline_of(raw))
            moved.redacted = checked.redacted
            return moved
        plan = root.plan_index(root.read_index(), changed=d if live else None)
        root.write(plan, (path, text, dfile.newline_of(raw)))
    result = WriteResult(
        "updated", memory_id, root.rel(path), memory_id in plan.ids, redacted=checked.redacted, demoted=plan.demoted
    )
    result.line = plan.line_for(memory_id)
    result.warnings = warnings + plan.warnings
    if "expires" in new and d.expires and expired(d.expires, now[:10]) and live:
        result.warnings.append(_passed(d.expires))
    if checked.redacted:
        result.warnings.append(checked.warning())
    return result


def replaced(d: Detail, title: str | None, summary: str | None) -> tuple[list, dict]:
    """(## History notes, changed fields) for a memory's new title and summary (None: kept): what
    they replace goes to History, the old title becomes an alias."""
    notes: list = []
    new: dict = {}
    if title is not None and title != d.title:
        notes.append(f"title was: {d.title}")
        new.update(title=title, aliases=tuple(dict.fromkeys((*d.aliases, d.title))))
    if summary is not None and summary != d.summary:
        if d.summary:
            notes.append(f"summary was: {d.summary}")
        new["summary"] = summary
    return notes, new


def forget(root, memory_id: str, *, purge: bool = False) -> WriteResult:
    """Take a memory out of use (exact id only): its index line goes, its file moves to memory/archive/
    (`restore` brings it back); purge deletes it instead, and an archived copy with the same id."""
    check_id(memory_id)
    with root.lock():
        live, kept = root.detail_path(memory_id), root.detail_path(memory_id, archived=True)
        if purge:
            return _purge(root, memory_id, [p for p in (live, kept) if p.is_file() or p.is_symlink()])
        path, archived = root.locate(memory_id)
        had_line = root.drop_line(memory_id)
        if archived:
            r = WriteResult("unchanged", memory_id, root.rel(path), False, line="removed" if had_line else None)
            r.warnings.append(
                f"{memory_id} is already archived in {root.rel(path)}: `memcli restore {memory_id}` "
                f"brings it back, `memcli forget {memory_id} --purge` deletes it"
            )
            return r
        if kept.exists() or kept.is_symlink():
            raise ExistsError(
                f"{root.rel(kept)} already exists (archived earlier), so {root.rel(live)} cannot move "
                f"there: `memcli rename {memory_id} NEW_ID` first, or `memcli forget {memory_id} "
                "--purge` to delete both"
            )
        archive(root, live, kept)
    return WriteResult("forgotten", memory_id, root.rel(kept), False, line="removed" if had_line else None)


def archive(root, src: Path, dst: Path) -> None:
    """Move a memory's file to memory/archive/ as it is. A memory that is a link (inside the root)
    is archived as the text it leads to, and the link goes; the file it led to stays."""
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            root.write(None, (dst, read_exact(src, root.rel(src))))
            os.unlink(src)
        else:
            os.rename(src, dst)
    except OSError as e:
        raise FileError(f"cannot move {root.rel(src)} to {root.rel(dst)}: {e.strerror or e}")


def _purge(root, memory_id: str, paths: list) -> WriteResult:
    """Delete a memory's file and any archived copy, and its index line: what `forget --purge` does."""
    if not paths:
        raise root.not_found(memory_id)
    had_line = root.drop_line(memory_id)
    for p in paths:
        root.remove(p)
    r = WriteResult("purged", memory_id, root.rel(paths[0]), False, line="removed" if had_line else None)
    if len(paths) > 1:
        r.warnings.append(f"deleted {root.rel(paths[1])} too (the archived copy of {memory_id})")
    return r


def restore(root, memory_id: str, now: str) -> WriteResult:
    """memory/archive/<id>.md back to memory/<id>.md, its passed expiry cleared, and into the index."""
    with root.lock():
        src, dst = root.detail_path(memory_id, archived=True), root.detail_path(memory_id)
        if not src.is_file():
            if dst.is_file():
                raise UsageError(f"{memory_id} is not archived: {layout.detail_rel(memory_id)} is live")
            raise root.not_found(memory_id)
        if dst.exists() or dst.is_symlink():
            raise ExistsError(
                f"{layout.detail_rel(memory_id)} already exists; merge or rename one of the two by "
                f"hand (the archived one is {root.rel(src)})"
            )
        raw = read_exact(src, root.rel(src))
        d = dfile.parse(raw, memory_id, root.rel(src))
        text = raw
        if expired(d.expires, now[:10]):
            body = dfile.add_history(d.body, now[:10], [f"restored from the archive (expired {d.expires})"])
            d = d.replace(expires=None, updated=now, body=body)
            text = dfile.render(d)
        return move_in(root, d, src, dst, text, "restored")


def move_in(root, d: Detail, src: Path, dst: Path, text: str, action: str, newline: str = "\n") -> WriteResult:
    """Write an archived memory's text to memory/ with its index line, then remove the archived copy
    (restore, and an update that gives an archived memory a later expiry)."""
    plan = root.plan_index(root.read_index(), add=d)
    warnings = list(plan.warnings)
    if plan.refused:
        plan = root.plan_index(root.read_index())
        warnings.append(
            f"the index is full and index.on_full is refuse: {d.id} is back in memory/ but not listed in MEMORY.md"
        )
    root.write(plan, (dst, text, newline))
    try:
        os.unlink(src)
    except OSError as e:
        warnings.append(f"could not remove {root.rel(src)} ({e.strerror or e}); delete it by hand")
    return WriteResult(action, d.id, root.rel(dst), d.id in plan.ids, line=plan.line_for(d.id), warnings=warnings)


def _passed(expires: str) -> str:
    return f"--expires {expires} has already passed: `memcli heartbeat --fix` will move it to memory/archive/"


def _check_input(**fields) -> None:
    """Control characters are refused in every text field of a memory (exit 2)."""
    for what, value in fields.items():
        name = what in ("id", "tags")
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if v is not None:
                check_text_field(str(v), {"tags": "tag", "aliases": "alias"}.get(what, what), name=name)


def _front_value(front: dict, key: str):
    """A key of a body's frontmatter as remember takes it (None when absent or blank)."""
    value = front.get(key)
    if value is None or value == "":
        return None
    if key == "expires":
        return dfile.stamp_of(value)
    return one_line(value) if key in ("source", "type") else value


def body_text(text: str) -> str:
    """A body as a memory keeps it: LF line ends and a final newline."""
    text = text.replace("\r\n", "\n")
    return text if not text or text.endswith("\n") else text + "\n"
