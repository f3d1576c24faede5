"""Export (JSON lines, one memory a line) and import: of an export, a folder of Markdown, one
Markdown file, or an agent's MEMORY.md of bullet lines (Claude Code / OpenClaw style)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import progress
from ..dates import utcnow
from ..errors import FileError, MemcliError, SecretError, UsageError
from ..model import (
    DEFAULT_IMPORTANCE,
    DETAIL_KEYS,
    TYPES,
    Detail,
    Result,
    clean_tag,
    clean_tags,
    importance_of,
    one_line,
)
from ..paths import check_id, slugify, valid_id
from ..safety.pii import PiiError
from ..safety.text_limits import MAX_TITLE
from ..safety.writecheck import WriteCheck, mask
from ..store import details as dfile
from ..store import layout
from ..store.fs import atomic_write_many, decode, inside, read_text
from ..store.frontmatter import opens
from .maintain import rebuild_index
from .write import body_text


def export(root, archived: bool = True) -> Result:
    """{"memories": one record per memory in index order, "problems": the files that could not be read}."""
    details, problems = root.listing(archived=archived)
    records = []
    for d in details:
        rec = d.to_dict()
        rec.pop("path", None)
        rec["archived"] = layout.is_archived(d.path)
        records.append(rec)
    return Result({"memories": records, "problems": [str(p) for p in problems]})


_KNOWN = (*DETAIL_KEYS, "body", "archived")  # the keys of an exported record


def _record_detail(rec: dict, where: str):
    """A Detail from one exported record; a UsageError names the record."""
    if not isinstance(rec, dict):
        raise UsageError(f"{where}: expected a JSON object")
    title = one_line(rec.get("title") or "")
    if not title or len(title) > MAX_TITLE:
        raise UsageError(f"{where}: a title of 1 to {MAX_TITLE} characters is required")
    mtype = rec.get("type") or "note"
    if mtype not in TYPES:
        raise UsageError(f"{where}: type must be one of {', '.join(TYPES)}, got {mtype!r}")
    try:
        importance = importance_of(
            DEFAULT_IMPORTANCE if rec.get("importance") is None else rec["importance"], strict=True
        )
    except UsageError:
        raise UsageError(f"{where}: importance must be from 0 to 1") from None

    def strs(key):
        v = rec.get(key) or []
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise UsageError(f"{where}: {key} must be a list of strings")
        return v

    def stamp(key):
        v = rec.get(key)
        return None if v in (None, "") else str(v)

    mid = check_id(rec["id"]) if rec.get("id") else slugify(title)
    extra = {k: v for k, v in rec.items() if k not in _KNOWN and k != "path"}
    body = rec.get("body") or ""
    if not isinstance(body, str):
        raise UsageError(f"{where}: body must be text")
    return Detail(
        id=mid,
        title=title,
        summary=one_line(rec.get("summary") or ""),
        tags=clean_tags(strs("tags")),
        aliases=tuple(dict.fromkeys(one_line(a) for a in strs("aliases") if one_line(a))),
        type=mtype,
        importance=importance,
        pinned=bool(rec.get("pinned")),
        created=stamp("created"),
        updated=stamp("updated"),
        expires=stamp("expires"),
        source=stamp("source"),
        extra=extra,
        body=body_text(body),
    ), bool(rec.get("archived"))


def parse_jsonl(text: str, name: str = "input") -> list[dict]:
    out = []
    for n, line in enumerate(text.split("\n"), 1):  # JSON escapes every line break: split on \n only
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as e:
            raise UsageError(f"{name}:{n}: not a JSON line ({getattr(e, 'msg', e)})") from None
    return out


_LINK = re.compile(r"^\[([^\]]+)\]\(([^)\s]+)\)\s*(?:[-—–:]\s*)?(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")


def _split_title(text: str) -> tuple[str, str]:
    """A long bullet: the first sentence (or 120 characters) as the title, the whole as the body."""
    if len(text) <= 120:
        return text, ""
    m = re.match(r"(.{10,120}?[.!?。！？])(\s|$)", text)
    cut = m.group(1) if m else text[:120].rsplit(" ", 1)[0] + "…"
    return cut[:MAX_TITLE], text


def markdown_record(text: str, name: str, source: str) -> dict:
    """One Markdown file as a record: its own frontmatter if it has one, else the first heading
    (or the file name) as the title and the first paragraph line as the summary."""
    stem = Path(name).stem
    try:
        fm, rest, _ = dfile.split(text)
    except ValueError:
        fm, rest = None, text
    if fm is not None:
        try:
            d = dfile.parse(text, _safe_id(stem), source)
            rec = d.to_dict()
            rec.pop("path", None)
            rec["source"] = rec.get("source") or source
            return rec
        except MemcliError:
            pass
    lines = rest.splitlines()
    title, summary = None, ""
    for ln in lines:
        s = ln.strip()
        if not s:
            continue
        if title is None and s.startswith("#"):
            title = s.lstrip("#").strip()
            continue
        if not s.startswith(("#", "```", "---", ">", "|")):
            summary = re.sub(r"^[-*+]\s+", "", s)[:300]
            break
    return {
        "id": _safe_id(stem),
        "title": title or stem.replace("-", " ").replace("_", " "),
        "summary": summary,
        "body": rest,
        "source": source,
    }


def _safe_id(stem: str) -> str:
    return stem if valid_id(stem) and stem == stem.lower() else slugify(stem)


def bullet_records(text: str, path: Path | None, source: str) -> list[dict]:
    """An agent's MEMORY.md of bullet lines: a record a bullet, tagged with its section; indented lines
    join their bullet; a link to a Markdown file in the same folder imports it (one leading out is kept
    as a link, never read)."""
    records: list[dict] = []
    section = None
    for ln in text.splitlines():
        h = re.match(r"^#{1,6}\s+(.*\S)", ln)
        if h:
            section = clean_tag(h.group(1))[:40] or None
            continue
        b = _BULLET.match(ln)
        if b and not b.group(1):
            item = b.group(2)
            rec: dict = {"tags": [section] if section else [], "source": source}
            link = _LINK.match(item)
            linked = None
            if link and path is not None and not re.match(r"^[a-z]+:", link.group(2)):
                # only a file inside the folder of the imported MEMORY.md: never /etc/… or ../../
                target = (path.parent / link.group(2)).resolve()
                if inside(path.parent.resolve(), target) and target.is_file() and target.suffix == ".md":
                    try:
                        linked = markdown_record(read_text(target, target.name), target.name, source)
                    except MemcliError:
                        pass
            if link and linked is not None:
                rec.update(linked)
                rec["title"], rec["summary"] = link.group(1).strip(), link.group(3).strip() or rec.get("summary", "")
                rec["tags"] = sorted(set(rec.get("tags") or []) | ({section} if section else set()))
            elif link:
                rec.update({"title": link.group(1).strip(), "summary": link.group(3).strip(), "body": item})
            else:
                title, body = _split_title(item)
                rec.update({"title": title, "body": body})
            records.append(rec)
        elif records and ln.strip() and (ln.startswith((" ", "\t"))):
            last = records[-1]
            last["body"] = ((last.get("body") or last["title"]) + "\n" + ln.strip()).strip()
    return records


SOURCE_SUFFIXES = ("", ".md", ".markdown", ".txt", ".jsonl", ".json")


def read_source(source, stdin_text: str | None = None) -> tuple[list[dict], str, list]:
    """(records, kind, skipped) of a source (stdin_text is the text of '-'): the files of a folder that
    cannot be read are skipped, {"id": path, "reason": why}; a single source that cannot be is an error."""
    if str(source) == "-":
        text = stdin_text or ""
        if text.lstrip().startswith("{"):
            return parse_jsonl(text, "stdin"), "jsonl", []
        return bullet_records(text, None, "stdin"), "bullets", []
    path = Path(source).expanduser()
    if path.is_dir():
        recs, skipped = [], []
        top = path.resolve()
        for p in sorted(path.rglob("*.md")):
            rel = p.relative_to(path)
            if any(part.startswith(".") for part in rel.parts) or p.is_symlink() or not inside(top, p):
                continue
            try:
                recs.append(markdown_record(read_text(p, str(rel)), p.name, str(rel)))
            except MemcliError as e:
                skipped.append({"id": str(rel), "reason": e.message.removeprefix(f"{rel}: ")})
        return recs, "markdown", skipped
    if not path.exists():
        raise FileError(f"{source}: no such file or folder")
    if path.suffix.lower() not in SOURCE_SUFFIXES:
        raise UsageError(
            f"{source}: import reads a JSONL export (.jsonl), Markdown (.md) or a MEMORY.md of bullet "
            "lines, or a folder of Markdown; this is none of them"
        )
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SOURCE_FILE + 1)
    except OSError as e:
        raise FileError(f"{source}: cannot read it ({e.strerror or e})") from None
    text = decode(data, str(source), MAX_SOURCE_FILE)  # binary, not UTF-8 or too big: bad input (exit 2)
    if path.suffix in (".jsonl", ".json") or text.lstrip().startswith("{"):
        return parse_jsonl(text, str(source)), "jsonl", []
    if opens(text):
        return [markdown_record(text, path.name, path.name)], "markdown", []
    records = bullet_records(text, path, path.name)
    if not records:
        raise UsageError(f"{source}: nothing to import (no JSONL records, no frontmatter, no bullet lines)")
    return records, "bullets", []


MAX_SOURCE_FILE = 100 * 1_000_000  # an export of many memories; each record still passes the write check


def import_(root, source, stdin_text: str | None = None) -> Result:
    """Add the memories of a source (see read_source). Existing ids are skipped, never overwritten, and
    so is a record the write check refuses (with the reason); a refused secret imports nothing. One
    write under the lock, then the index is rebuilt."""
    records, kind, skipped = read_source(source, stdin_text)
    now = utcnow()
    check = WriteCheck.of(root)
    details = []
    seen: set = set()
    for n, rec in enumerate(progress.each(records, "checking records"), 1):
        where = str(rec.get("source") or f"record {n}") if kind == "markdown" else f"record {n}"
        try:
            d, archived = _record_detail(rec, where)
            d = _checked(root, check, d)
        except UsageError as e:
            name = rec.get("id") if isinstance(rec, dict) and isinstance(rec.get("id"), str) else where
            skipped.append({"id": name, "reason": e.message.removeprefix(f"{where}: ")})
            continue
        if not d.created:
            d = d.replace(created=now, updated=d.updated or now)
        base, k = d.id, 2
        while d.id in seen and kind != "jsonl":  # two files or bullets with one name: keep both
            d = d.replace(id=f"{base}-{k}")
            k += 1
        if d.id in seen:
            skipped.append({"id": d.id, "reason": "appears twice in the input"})
            continue
        seen.add(d.id)
        details.append((d, archived))
    written = []
    with root.lock():
        writes = []
        for d, archived in details:
            if root.detail_path(d.id).exists() or root.detail_path(d.id, archived=True).exists():
                skipped.append({"id": d.id, "reason": "a memory with this id exists"})
                continue
            writes.append((root.detail_path(d.id, archived=archived), dfile.render(d)))
            written.append(d.id)
        if writes:
            atomic_write_many(writes)
    index = rebuild_index(root) if written else None
    return Result(
        {
            "source": str(source),
            "kind": kind,
            "imported": written,
            "skipped": skipped,
            "indexed": index["entries"] if index else None,
        }
    )


def _checked(root, check, d):
    """One record through the write check (every field, the other frontmatter keys included), then
    write.pii: UsageError for a record to skip; SecretError or PiiError (nothing imported) under refuse."""
    texts = {
        "title": d.title,
        "summary": d.summary,
        "body": d.body,
        "source": d.source or "",
        "aliases": tuple(d.aliases),
    }
    try:
        f = check.fields({**texts, "tags": tuple(d.tags), "id": d.id, "extra": d.extra}).fields
    except SecretError as e:
        raise SecretError(f"{d.id}: {e.message}; nothing was imported", data=e.data) from None
    mid = f["id"] if f["id"] == d.id else slugify(f["title"])  # an id that held a secret: made from the title
    try:
        f.update(mask(root, {k: f[k] for k in texts})[0])
    except PiiError as e:
        raise PiiError(f"{mid}: {e.message}; nothing was imported", data=e.data) from None
    checked = {k: f[k] for k in ("title", "summary", "body", "aliases")}
    return d.replace(id=mid, **checked, source=f["source"] or None, tags=clean_tags(f["tags"]), extra=f["extra"])
