"""The memory store's operations: the library behind every write and read command.

Every method returns values; nothing here prints, exits or reads the environment.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .config import Config, load_config, parse_duration
from .errors import (ExistsError, FileError, IndexFullError, MemcliError, NotARootError, NotFoundError,
                     UnsafePathError, UsageError)
from .model import (DEFAULT_IMPORTANCE, DEFAULT_TYPE, DETAIL_KEYS, TYPES, Detail, Entry, Problem, clean_tags,
                    one_line)
from .store import details as dfile
from .store.fs import (atomic_write, atomic_write_many, check_id, inside, read_text, root_lock, safe_join, slugify,
                       valid_id)
from .store import indexrules, layout
from .store.index import IndexDoc
from .textcheck import check_rendered, check_sizes, check_text_field

CONTEXT_BUDGET = 2000  # tokens of a context block unless asked otherwise
MIN_BUDGET = 50


def utcnow() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_expires(value: str | None, now: str | None = None) -> str | None:
    """An ISO date or time, or a duration from now such as 30d; None/'' clears it."""
    if value is None or str(value).strip().lower() in ("", "null", "none", "never"):
        return None
    text = str(value).strip()
    if re.fullmatch(r"\d+(?:\.\d+)?\s*[smhdw]", text):
        base = _dt.datetime.fromisoformat((now or utcnow()).replace("Z", "+00:00"))
        try:
            return (base + _dt.timedelta(seconds=parse_duration(text))).date().isoformat()
        except (OverflowError, ValueError):
            raise UsageError(f"--expires: {text[:40]} from now is past the year 9999; give a date or a shorter "
                             "duration, or 'never'") from None
    try:
        _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--expires: expected a date like 2027-01-31 or a duration like 30d, got {text!r}")
    return text


@dataclass
class WriteResult:
    action: str
    id: str
    path: str
    indexed: bool = False
    line: str | None = None
    demoted: list = field(default_factory=list)
    redacted: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "action": self.action, "id": self.id, "path": self.path, "indexed": self.indexed,
            "line": self.line, "demoted": self.demoted, "redacted": self.redacted,
        }


@dataclass
class Repair:
    """What `Memory.repair` found and did: the report after the repairs, the plan, what was applied."""

    report: object
    actions: list
    applied: list
    dry_run: bool = False

    def to_dict(self) -> dict:
        return {**self.report.to_dict(), "actions": [a.to_dict() for a in self.actions], "applied": self.applied,
                "dry_run": self.dry_run}


@dataclass
class Listing:
    details: list
    problems: list
    indexed: set


class Memory:
    """A memory root: `Memory(path)`; see the methods for each operation."""

    def __init__(self, root: str | os.PathLike, config: Config | None = None, *, door: str = "api"):
        path = Path(root).expanduser()
        if not path.is_dir():
            if path.exists():
                raise NotARootError(f"not a memory root: {path} is a file, not a folder")
            raise NotARootError(f"not a memory root: {path} does not exist (run `memcli init {path}`)")
        if not layout.is_root(path):
            raise NotARootError(f"not a memory root: {path} has no {layout.INDEX} (run `memcli init {path}`)")
        self.root = path.resolve()
        self.config = config if config is not None else load_config(self.root)
        self.door = door  # the front end writing through this instance: cli, api, mcp or hook (write.pii)

    # ---------- paths ----------
    @property
    def index_path(self) -> Path:
        return self.root / layout.INDEX

    def memory_dir(self) -> Path:
        d = self.root / layout.MEMORY
        if d.exists() and not inside(self.root, d):
            raise UnsafePathError("memory/ leads outside the memory root (a symlink?); refusing to use it")
        return d

    def _checked_dir(self, archived: bool) -> Path:
        """memory/ (or memory/archive/), verified once per instance to stay inside the root."""
        key = "_archive_dir" if archived else "_memory_dir"
        d = self.__dict__.get(key)
        if d is None:
            d = self.memory_dir()
            if archived:
                d = safe_join(self.root, *layout.ARCHIVE.split("/"))
            self.__dict__[key] = d
        return d

    def detail_path(self, memory_id: str, archived: bool = False) -> Path:
        """memory/<id>.md: the id is checked; a file that is a symlink must stay inside the root."""
        check_id(memory_id)
        path = self._checked_dir(archived) / f"{memory_id}.md"
        if os.path.islink(path) and not inside(self.root, path):
            raise UnsafePathError(f"refusing {self.rel(path)}: it leads outside the memory root")
        return path

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    @contextlib.contextmanager
    def lock(self):
        """The root's write lock; the thread that holds it may take it again (a nested call is free)."""
        me = threading.get_ident()
        if self.__dict__.get("_lock_owner") == me:
            yield
            return
        with root_lock(self.root, self.config.seconds("lock_timeout")):
            self.__dict__["_lock_owner"] = me
            try:
                yield
            finally:
                self.__dict__["_lock_owner"] = None

    # ---------- reading ----------
    def read_index(self) -> IndexDoc:
        if self.index_path.is_symlink() and not inside(self.root, self.index_path):
            raise UnsafePathError("MEMORY.md leads outside the memory root (a symlink?); not read")
        try:
            return IndexDoc.parse(read_text(self.index_path, "MEMORY.md"))
        except FileError:
            if not self.index_path.exists():
                return IndexDoc([], "\n", True)
            raise

    def detail_files(self, archived: bool = False) -> list[Path]:
        """memory/*.md (or memory/archive/*.md) whose names are valid ids."""
        return [p for p in self._md_files(archived) if valid_id(p.stem)]

    def misnamed_files(self, archived: bool = False) -> list[Problem]:
        """Markdown files whose names are not ids: never read, never put in the index, reported."""
        return [Problem(layout.detail_rel(p.stem, archived).encode("unicode_escape").decode(),
                        None, "the file name is not a valid id (letters, digits, '-', '_', '.'); rename it")
                for p in self._md_files(archived) if not valid_id(p.stem)]

    def _md_files(self, archived: bool) -> list[Path]:
        self.memory_dir()  # refuses a memory/ that leads outside the root
        return layout.md_files(self.root, layout.ARCHIVE if archived else layout.MEMORY)

    def load(self, path: Path) -> Detail:
        if not inside(self.root, path):
            raise UnsafePathError(f"{path.name} leads outside the memory root (a symlink?); not read")
        return dfile.read(path, path.stem, self.rel(path))

    def get(self, memory_id: str) -> Detail:
        """One memory by exact id (archived ones too); NotFoundError suggests close ids."""
        return self.load(self._existing(memory_id))

    def _existing(self, memory_id: str) -> Path:
        """The file of a memory, in memory/ or else memory/archive/; NotFoundError when neither."""
        for archived in (False, True):
            path = self.detail_path(memory_id, archived)
            if path.is_file():
                return path
        raise self._not_found(memory_id)

    def _not_found(self, memory_id: str) -> NotFoundError:
        names = {}
        for p in self.detail_files() + self.detail_files(archived=True):
            names[p.stem] = p.stem
        close = []
        if names:
            from rapidfuzz import fuzz, process

            close = [m[0] for m in process.extract(memory_id, list(names), scorer=fuzz.WRatio, limit=3)
                     if m[1] >= 60]
        hint = f"; did you mean {', '.join(close)}?" if close else "; `memcli list` shows the ids"
        return NotFoundError(f"no memory with id {memory_id!r}{hint}", data={"candidates": close})

    def list(self, tag: str | None = None, type: str | None = None, all: bool = False) -> Listing:
        if type is not None and type not in TYPES:
            raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
        paths = self.detail_files() + (self.detail_files(archived=True) if all else [])
        found = []
        problems = self.misnamed_files() + (self.misnamed_files(archived=True) if all else [])
        want = clean_tags([tag]) if tag else ()
        for p in paths:
            try:
                d = self.load(p)
            except (FileError, UnsafePathError, UsageError) as e:
                problems.append(getattr(e, "problem", None) or Problem(self.rel(p), None, e.message))
                continue
            if tag and (not want or want[0] not in d.tags):
                continue
            if type and d.type != type:
                continue
            found.append(d)
        found.sort(key=Detail.rank_key)
        indexed = {e.id for e in self.read_index().entries if e.id}
        return Listing(found, problems, indexed)

    # ---------- writing ----------
    def scan(self, fields: dict) -> tuple[dict, list]:
        """Text on its way into a committed file, checked by write.secrets: the fields (redacted
        under `redact`) and what was redacted; SecretError (exit 4) under `refuse`. Strings in
        lists and dicts are scanned too, and so are the keys of a dict (other frontmatter keys)."""
        from .safety.writecheck import WriteCheck

        return WriteCheck(self.config["write.secrets"]).secrets(fields)

    def write_check(self, rel: str = "memory/memory.md"):
        """The one write check (memcli.safety.writecheck) under this root's policy, for the file rel."""
        from .safety.writecheck import WriteCheck

        return WriteCheck.of(self, rel)

    def mask(self, fields: dict, captured: bool = False) -> tuple[dict, list]:
        """Personal data in text on its way into a file, under this front end's policy:
        `write.pii` for deliberate writes, `write.pii_captured` for text captured on its own
        (session turns, hook prompts). (fields, warnings); PiiError (exit 4) under `refuse`."""
        if all(isinstance(v, str) and "@" not in v and not any(c.isdigit() for c in v) for v in fields.values()):
            return fields, []  # every rule needs a digit or an '@': the scan is not even loaded
        from .safety import pii

        return pii.apply_fields(fields, pii.policy_for(self.config, self.door, captured))

    def remember(self, title: str, summary: str = "", *, tags=(), aliases=(), body: str = "",
                 type: str | None = None, importance: float | None = None, pinned: bool | None = None,
                 expires: str | None = None, id: str | None = None, source: str | None = None,
                 now: str | None = None) -> WriteResult:
        """Write a new detail file and its index line (demoting the lowest entry when full).

        A body that starts with its own frontmatter gives its keys (summary, tags, aliases, type,
        importance, pinned, expires, source and any other key); arguments given here win. type and
        importance default to DEFAULT_TYPE and DEFAULT_IMPORTANCE."""
        body, front = _strip_frontmatter(body or "")
        extra = {k: v for k, v in front.items() if k not in DETAIL_KEYS}
        if front:
            summary = summary or one_line(front.get("summary") or "")
            tags = tuple(tags) + tuple(dfile._str_list(front.get("tags")))
            aliases = tuple(aliases) + tuple(dfile._str_list(front.get("aliases")))
            type = type if type is not None else _front_value(front, "type")
            importance = importance if importance is not None else _front_value(front, "importance")
            pinned = pinned if pinned is not None else _front_value(front, "pinned")
            expires = expires if expires is not None else _front_value(front, "expires")
            source = source if source is not None else _front_value(front, "source")
        type = DEFAULT_TYPE if type is None else type
        importance = DEFAULT_IMPORTANCE if importance is None else importance
        _check_input(title=title, summary=summary, tags=tags, aliases=aliases, id=id, source=source)
        title = one_line(title or "")
        if not title:
            raise UsageError("a title is required and must not be blank")
        if type not in TYPES:
            raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
        importance = _importance(importance)
        now = now or utcnow()
        expires = parse_expires(expires, now)
        checked = self.write_check(layout.detail_rel(id if id and valid_id(id) else slugify(title))).fields(
            {"title": title, "summary": one_line(summary or ""), "body": body, "tags": tuple(tags),
             "aliases": tuple(aliases), "source": source or "", "id": id or "", "extra": extra})
        fields, redacted = checked.fields, checked.redacted
        masked, pii_warnings = self.mask({k: v for k, v in fields.items() if k != "id"})
        fields.update(masked)
        if id:
            memory_id = check_id(fields["id"] if fields["id"] == id else slugify(fields["id"]))
        else:
            memory_id = slugify(fields["title"])
        if memory_id == layout.INDEX[:-3]:
            raise UsageError(f"{memory_id!r} is the index's name; pass another --id")
        d = Detail(
            id=memory_id, title=fields["title"], summary=fields["summary"], tags=clean_tags(fields["tags"]),
            aliases=tuple(dict.fromkeys(one_line(a) for a in fields["aliases"] if one_line(a))),
            type=type, importance=importance, pinned=dfile._bool(pinned or False), created=now, updated=now,
            expires=expires, source=fields["source"] or None, extra=fields["extra"],
            body=_body(fields["body"]),
        )
        text = dfile.render(d)
        check_rendered(text)
        path = self.detail_path(memory_id)
        with self.lock():
            if path.exists() or self.detail_path(memory_id, archived=True).exists():
                raise ExistsError(f"a memory with id {memory_id!r} already exists; "
                                  f"use `memcli update {memory_id}` or pass another --id")
            doc = self.read_index()
            plan = self._plan_index(doc, add=d)
            if plan.refused:
                raise IndexFullError(
                    f"the index is full ({self.config['index.max_lines']} lines) and index.on_full is refuse; "
                    "nothing was written. Raise index.max_lines or forget an entry")
            self._write_with_index(doc, plan.entries, (path, text))
        result = WriteResult("remembered", memory_id, self.rel(path), memory_id in plan.ids,
                             redacted=redacted, demoted=plan.demoted)
        result.line = _line_for(plan.entries, memory_id)
        result.warnings += plan.warnings + pii_warnings
        if d.expires and _expired(d, now[:10]):
            result.warnings.append(_passed(d.expires))
        if redacted:
            result.warnings.append(f"redacted {len(redacted)} secret(s): "
                                   + ", ".join(f"{r['kind']} in the {r['field']}" for r in redacted))
        from .everyday import duplicate_warnings  # after the write, outside the lock: it only reads

        result.warnings += duplicate_warnings(self, d)
        return result

    def update(self, memory_id: str, *, title: str | None = None, summary: str | None = None,
               append: str | None = None, tags=(), untags=(), aliases=(), type: str | None = None,
               importance: float | None = None, pinned: bool | None = None, expires: str | None = None,
               now: str | None = None) -> WriteResult:
        """Change a memory; a replaced title or summary is kept under a dated ## History section.

        Only the frontmatter keys that change are rewritten: comments and the layout of the
        other keys stay as they were. Nothing to change gives the action "unchanged"."""
        check_id(memory_id)
        now = now or utcnow()
        _check_input(title=title, summary=summary, tags=tags, aliases=aliases)
        if type is not None and type not in TYPES:
            raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
        if importance is not None:
            importance = _importance(importance)
        if title is not None and not one_line(title):
            raise UsageError("a title must not be blank")
        if summary is not None and not one_line(summary):
            raise UsageError("a summary must not be blank")
        checked = self.write_check(layout.detail_rel(memory_id)).fields(
            {"title": one_line(title or ""), "summary": one_line(summary or ""), "append": append or "",
             "tags": tuple(tags), "aliases": tuple(aliases)})
        fields, redacted = checked.fields, checked.redacted
        fields, warnings = self.mask(fields)
        with self.lock():
            path = self.detail_path(memory_id)
            if not path.is_file():
                if self.detail_path(memory_id, archived=True).is_file():
                    path = self.detail_path(memory_id, archived=True)
                else:
                    raise self._not_found(memory_id)
            raw = read_text(path, self.rel(path))
            d = dfile.parse(raw, memory_id, self.rel(path))
            history = []
            new = {}
            if title is not None and fields["title"] != d.title:
                history.append(f"title was: {d.title}")
                new["title"] = fields["title"]
                new["aliases"] = tuple(dict.fromkeys((*d.aliases, d.title)))
            if summary is not None and fields["summary"] != d.summary:
                if d.summary:
                    history.append(f"summary was: {d.summary}")
                new["summary"] = fields["summary"]
            drop = set(clean_tags(untags))
            unknown = [t for t in clean_tags(untags) if t not in d.tags]
            if unknown:
                warnings.append(f"{memory_id} has no tag {', '.join(unknown)}")
            new_tags = tuple(t for t in clean_tags((*d.tags, *fields["tags"])) if t not in drop)
            if new_tags != d.tags:
                new["tags"] = new_tags
            aliases_now = new.get("aliases", d.aliases)
            new_aliases = tuple(dict.fromkeys((*aliases_now, *(one_line(a) for a in fields["aliases"] if one_line(a)))))
            if new_aliases != d.aliases:
                new["aliases"] = new_aliases
            if type is not None and type != d.type:
                new["type"] = type
            if importance is not None and importance != d.importance:
                new["importance"] = importance
            if pinned is not None and bool(pinned) != d.pinned:
                new["pinned"] = bool(pinned)
            if expires is not None and parse_expires(expires, now) != d.expires:
                new["expires"] = parse_expires(expires, now)
            body = d.body
            if fields["append"].strip():
                body = dfile.append_body(body, fields["append"].replace("\r\n", "\n"))
            if history:
                body = add_history(body, now[:10], history)
            if not new and body == d.body:
                result = WriteResult("unchanged", memory_id, self.rel(path),
                                     memory_id in {e.id for e in self.read_index().entries})
                result.warnings = warnings
                return result
            old, d = d, d.replace(updated=now, body=body, **new)
            check_sizes({"tags": d.tags, "aliases": d.aliases})
            text = dfile.render_update(raw, old, d)
            check_rendered(text)
            if path != self.detail_path(memory_id) and expires is not None and not _expired(d, now[:10]):
                from .edits import _move_in

                moved = _move_in(self, d, path, self.detail_path(memory_id), text, "restored",
                                 dfile.newline_of(raw))
                moved.redacted = redacted
                return moved
            doc = self.read_index()
            plan = self._plan_index(doc, changed=d if path == self.detail_path(memory_id) else None)
            self._write_with_index(doc, plan.entries, (path, text, dfile.newline_of(raw)))
        result = WriteResult("updated", memory_id, self.rel(path), memory_id in plan.ids, redacted=redacted,
                             demoted=plan.demoted)
        result.line = _line_for(plan.entries, memory_id)
        result.warnings = warnings + plan.warnings
        if "expires" in new and _expired(d, now[:10]) and path == self.detail_path(memory_id):
            result.warnings.append(_passed(d.expires))
        if redacted:
            result.warnings.append(f"redacted {len(redacted)} secret(s): "
                                   + ", ".join(f"{r['kind']} in the {r['field']}" for r in redacted))
        return result

    def forget(self, memory_id: str) -> WriteResult:
        """Delete a memory: its index line and its detail file (exact id only)."""
        check_id(memory_id)
        with self.lock():
            path = self._existing(memory_id)
            doc = self.read_index()
            had_line = any(e.id == memory_id for e in doc.entries)
            if had_line:
                lines = [x for x in doc.lines if not (isinstance(x, Entry) and x.id == memory_id)]
                atomic_write(self.index_path, IndexDoc(lines, doc.newline, doc.final_newline).render())
            try:
                os.unlink(path)
            except OSError as e:
                raise FileError(f"cannot delete {self.rel(path)}: {e.strerror or e}")
        r = WriteResult("forgotten", memory_id, self.rel(path), False)
        r.line = "removed" if had_line else None
        return r

    # ---------- the index ----------
    @dataclass
    class _Plan:
        entries: list
        ids: set
        demoted: list
        warnings: list
        refused: bool = False

    def activity(self, trace: bool = True):
        """What `index.rank: activity` plans with (None under `importance`): recalls from
        .memcli/trace.jsonl, or none with trace=False (a merged index: the same on every clone)."""
        if self.config["index.rank"] != "activity":
            return None
        from .recall.trace import access

        return indexrules.Activity(access(self.root) if trace else {}, self.config.seconds("recall.half_life") / 86400)

    def _plan_index(self, doc: IndexDoc, add: Detail | None = None,
                    pool: list | None = None, changed: Detail | None = None, trace: bool = True,
                    fit: bool = False) -> "_Plan":
        """Which memories the index holds, in order, and which fell out for lack of room.

        changed is a memory about to be written: its new version counts, not the one on disk.
        Under `index.rank: activity` the trace decides who keeps a line (not with trace=False).
        A write never moves a listed entry out for hand-written lines; fit=True (a merged index,
        where both sides' entries meet) demotes until the file fits, as `heartbeat --fix` does."""
        max_lines = int(self.config["index.max_lines"])
        warnings: list = []
        # Entry lines whose detail cannot be read are turned into verbatim lines: kept, never ours to drop.
        from .store.indexcache import indexed

        # The listed memories come from the stat-checked cache: no detail file is parsed twice.
        on_disk = {e.id: d for e, d in indexed(self, doc.entries) if d is not None}
        chosen: dict[str, Detail] = {}
        for i, x in enumerate(doc.lines):
            if isinstance(x, Entry):
                d = None
                if changed is not None and x.id == changed.id and x.id not in chosen:
                    d = changed
                elif x.id and x.id not in chosen:
                    d = on_disk.get(x.id)
                if d is None:
                    doc.lines[i] = x.raw if x.raw is not None else x
                    if not isinstance(doc.lines[i], str):
                        from .store.index import render_line

                        doc.lines[i] = render_line(x)
                else:
                    chosen[d.id] = d
        listed = set(chosen)
        if pool is not None:
            chosen = {d.id: d for d in pool}
        if add is not None:
            chosen[add.id] = add
        ranked = indexrules.rank(chosen.values(), self.activity(trace))
        room = indexrules.free_room(max_lines, doc.fixed_lines())
        demoted = []
        still = [d for d in ranked if d.id in listed]
        if len(ranked) > room and add is not None and self.config["index.on_full"] == "refuse":
            return self._Plan([], set(), [], warnings, refused=True)
        if len(ranked) > room and len(still) > room and not fit:
            # Hand-written lines took the room of entries already listed: none is moved out for them.
            demoted = [d.id for d in ranked if d.id not in listed]
            warnings.append(indexrules.crowded(doc, max_lines, len(still), demoted))
            ranked = still
        elif len(ranked) > room:
            ranked, out = indexrules.demote(ranked, room)
            demoted = [d.id for d in out]
            if any(d.pinned for d in out):
                warnings.append("the index is full of pinned entries; some pinned memories are not listed")
            if demoted and add is not None:
                warnings.append("the index is full: moved out of MEMORY.md (detail files kept): " + ", ".join(demoted))
        ranked = indexrules.file_order(ranked)
        return self._Plan([d.entry for d in ranked], {d.id for d in ranked}, demoted, warnings)

    def _index_text(self, doc: IndexDoc, entries: list) -> str | None:
        """MEMORY.md's new text, or None when it would not change."""
        text = doc.with_entries(entries).render()
        try:
            old = self.index_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            old = None
        return None if text == old else text

    def _write_index(self, doc: IndexDoc, entries: list) -> None:
        text = self._index_text(doc, entries)
        if text is not None:
            atomic_write(self.index_path, text)

    def _write_with_index(self, doc: IndexDoc, entries: list, detail: tuple) -> None:
        """A detail file and MEMORY.md written as one step: both staged, then both renamed."""
        text = self._index_text(doc, entries)
        atomic_write_many([detail] + ([(self.index_path, text)] if text is not None else []))

    def rebuild_index(self) -> dict:
        """Regenerate MEMORY.md from the detail files: same files, same bytes; other lines kept.

        The detail files are read and parsed without the lock (the slow part); under the lock
        only the files whose fingerprint changed meanwhile are read again, so a memory written
        or forgotten during the rebuild is seen as it is now."""
        before = self._detail_fingerprints()
        listing = self.list()
        with self.lock():
            after = self._detail_fingerprints()
            if after != before:
                listing = self._relisted(listing, before, after)
            doc = self.read_index()
            # Entry lines pointing at missing or broken files are dropped on rebuild.
            present = {d.id for d in listing.details}
            lines = []
            for x in doc.lines:
                if isinstance(x, Entry):
                    if x.id and x.id in present:
                        lines.append(x)
                else:
                    lines.append(x)
            doc = IndexDoc(lines, doc.newline, doc.final_newline)
            if not doc.lines:
                doc = IndexDoc.parse(template_text("MEMORY.md"))
            today = utcnow()[:10]
            pool = [d for d in listing.details if not _expired(d, today)]
            plan = self._plan_index(doc, pool=pool)
            self._write_index(doc, plan.entries)
        return {"entries": len(plan.entries), "left_out": plan.demoted,
                "problems": [str(p) for p in listing.problems], "warnings": plan.warnings}

    def _detail_fingerprints(self) -> dict[str, str | None]:
        """id -> fingerprint of every memory/<id>.md (what `list` reads)."""
        fps = {p.stem: layout.file_fingerprint(p) for p in self.detail_files()}
        return {k: v for k, v in fps.items() if v is not None}

    def _relisted(self, listing: Listing, before: dict, after: dict) -> Listing:
        """`listing` brought up to date for the detail files whose fingerprint changed."""
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        rels = {layout.detail_rel(k) for k in changed}
        found = [d for d in listing.details if d.id not in changed]
        problems = [p for p in listing.problems if p.path not in rels]
        for mid in sorted(changed & after.keys()):
            path = self.detail_path(mid)
            try:
                found.append(self.load(path))
            except (FileError, UnsafePathError, UsageError) as e:
                problems.append(getattr(e, "problem", None) or Problem(self.rel(path), None, e.message))
        found.sort(key=Detail.rank_key)
        return Listing(found, problems, listing.indexed)

    def check_index(self) -> list[Problem]:
        """What is wrong with MEMORY.md and the detail files: empty when all is well. The index's
        faults are the heartbeat's (`indexrules.check`), with the same messages."""
        try:
            doc = self.read_index()
        except (FileError, UsageError, UnsafePathError) as e:
            return [Problem(layout.INDEX, None,
                            f"{e.message.removeprefix('MEMORY.md: ')} ({indexrules.FIX_UNREADABLE_INDEX})")]
        problems: list[Problem] = []
        if not self.index_path.exists():
            f = indexrules.missing_index()
            problems.append(Problem(f.path, None, f"{f.message} ({f.fix})"))
        broken: dict[str, Problem] = {}

        def lookup(mid: str):
            try:
                path = self.detail_path(mid)
                if not path.is_file():
                    return "archived" if self.detail_path(mid, archived=True).is_file() else "missing"
                return self.load(path)
            except (FileError, UsageError, UnsafePathError) as e:
                broken[mid] = _problem_with_fix(e, layout.detail_rel(mid))
                return "broken"

        for mid, f in indexrules.check(doc, lookup, int(self.config["index.max_lines"])):
            problems.append(Problem(f.path, f.line, f"{f.message} ({f.fix})"))
        problems += broken.values()
        problems += [Problem(f.path, f.line, f"{f.message} ({f.fix})") for f in indexrules.conflicts(self.root)]
        listed = {e.id for e in doc.entries if e.id}
        problems += self.misnamed_files()
        for p in self.detail_files():
            if p.stem in listed:
                continue
            try:
                self.load(p)
            except (FileError, UsageError, UnsafePathError) as e:
                problems.append(_problem_with_fix(e, self.rel(p)))
        return problems

    def reconcile_index(self) -> bool:
        """Bring MEMORY.md in line with the detail files, as after a git merge: conflict markers
        settled as both sides, each memory listed once, lines to missing files dropped, the rest
        ranked and demoted to fit. Deterministic. Returns whether the file changed."""
        from .conflicts import reconcile_index

        return reconcile_index(self)

    def resolve(self, memory_id: str, side: str, now: str | None = None) -> dict:
        """Settle a memory left with git conflict markers: side is ours, theirs or both. A side not
        kept goes into the dated ## History section; the index line is refreshed."""
        from .conflicts import resolve

        return resolve(self, memory_id, side, now or utcnow())

    def locate(self, memory_id: str) -> Path:
        """The file of a memory by exact id (memory/ first, then memory/archive/), without
        reading it: a file whose frontmatter is broken is found too."""
        from .edits import locate

        return locate(self, memory_id)[0]

    def edit_begin(self, memory_id: str):
        """Start a hand edit: an EditSession whose `draft` (a copy under .memcli/edits/) the
        editor opens. No lock is held while the editor runs."""
        from .edits import begin

        return begin(self, memory_id)

    def edit_finish(self, session, text: str | None = None) -> WriteResult:
        """End a hand edit (the draft's text, or `text`): under the lock, the file is re-read; a change
        made meanwhile is merged line by line, or the draft is kept and Refused names it."""
        from .edits import finish

        return finish(self, session, text)

    def edit_abandon(self, session) -> str | None:
        """The editor failed: an untouched draft is removed; a changed one is kept and named."""
        from .edits import abandon

        return abandon(self, session)

    def outcome(self, memory_id: str, result: str, note: str | None = None, now: str | None = None) -> dict:
        """Record that a memory (a procedure) worked (`success`) or failed (`failure`), with an
        optional note: its counters (uses, successes, last_outcome) and its ## Outcomes section.
        Returns the new record, with "warnings"."""
        from .usecases.outcome import record

        return record(self, memory_id, result, note, now or utcnow())

    def restore(self, memory_id: str, now: str | None = None) -> WriteResult:
        """Bring an archived memory back to memory/ (a passed expiry is cleared) and into the index."""
        from .edits import restore

        return restore(self, check_id(memory_id), now or utcnow())

    # ---------- the cascade ----------
    def recall(self, query: str, *, limit: int | None = None, deep: bool = False, layer: str | None = None,
               session: str = "default", scope: str = "default", threshold: float | None = None,
               now: str | None = None, type: str | None = None, min_success: float | None = None,
               also: list | tuple = ()):
        """Session, then scope, then the index, then the details: a Recall with hits and a trace.
        type and min_success keep only memories of that type whose smoothed success rate reaches it;
        ``also``: other phrasings of the question (a translation, a paraphrase), fused by rank."""
        from .recall import recall

        return recall(self, query, session=session, scope=scope, limit=limit, deep=deep, layer=layer,
                      threshold=threshold, now=now, type=type, min_success=min_success, also=also)

    def should_recall(self, text: str) -> dict:
        """explicit / implicit / none for a message, from the configured signals and the index's names."""
        from .recall import known_names, should_recall

        return should_recall(text, self.config["recall.signals.explicit"], self.config["recall.signals.implicit"],
                             known_names(self))

    def context(self, query: str | None = None, *, budget: int | None = None, session: str = "default",
                scope: str = "default", now: str | None = None) -> dict:
        """One Markdown block for a prompt, trimmed to a token budget (CONTEXT_BUDGET by default)."""
        from .context import build

        budget = CONTEXT_BUDGET if budget is None else budget
        if budget < MIN_BUDGET:
            raise UsageError(f"--budget must be at least {MIN_BUDGET} tokens")
        return build(self, query, budget, session, scope, now)

    def session(self, name: str = "default"):
        """The session `name`: add, show, clear."""
        from .state import Session

        return Session(self, name)

    def scope(self, name: str = "default"):
        """The scope `name`: start, set, get, read, show, check, end."""
        from .state import Scope

        return Scope(self, name)

    # ---------- learning from sessions ----------
    def reflect(self, *, engine: str | None = None, all: bool = False, dry_run: bool = False,
                budget: int | None = None, now: str | None = None) -> dict:
        """Proposals in memory/inbox/ from the episode sections and session summaries not reflected
        on yet (all=True: everything), by the offline engine or the trusted reflect.extractor."""
        from .usecases.reflect import reflect

        return reflect(self, engine=engine, everything=all, dry_run=dry_run, budget=budget, now=now)

    def reflect_material(self) -> dict:
        """The material for an agent's own model: items, instructions and the mark for `propose`."""
        from .usecases.reflect import offer

        return offer(self)

    def propose(self, proposals: list, mark: str | None = None, now: str | None = None) -> dict:
        """Proposals in the engines' JSON format (see memcli.usecases.reflect) into the inbox."""
        from .usecases.reflect import propose

        return propose(self, proposals, mark, now)

    @property
    def inbox(self):
        """The proposals waiting for review: list, get, accept, reject, edit."""
        from .usecases.inbox import Inbox

        return Inbox(self)

    def gate(self, front_end: str):
        """remember/update as `front_end` (cli, mcp, hook) writes them under write.gate."""
        from .usecases.inbox import Gate

        return Gate(self, front_end)

    # ---------- heartbeat ----------
    def audit(self, now=None, *, write_cache: bool = True):
        """Every heartbeat check over every file: a Report of findings."""
        from .heartbeat import audit

        return audit(self, now, write_cache=write_cache)

    def repair(self, dry_run: bool = False, now=None, *, write_cache: bool | None = None) -> "Repair":
        """Audit, plan the safe repairs and (unless dry_run) make them under the root lock."""
        from .heartbeat import apply, plan

        report = self.audit(now, write_cache=not dry_run if write_cache is None else write_cache)
        actions = plan(report)
        applied: list = []
        if not dry_run and actions:
            applied = apply(self, actions, now)
            if applied:
                report = self.audit(now)
        return Repair(report, actions, applied, dry_run)

    # ---------- everyday ----------
    def stats(self) -> dict:
        """Memories by type, how full the index is, expired / stale / archived counts, state sizes."""
        from .everyday import stats

        return stats(self)

    def search(self, pattern: str, regex: bool = False, ignore_case: bool | None = None,
               archived: bool = True) -> dict:
        """Every line of every memory file matching pattern (literal, or a regex), smart case by default."""
        from .everyday import search

        return search(self, pattern, regex=regex, ignore_case=ignore_case, archived=archived)

    def rename(self, old: str, new: str) -> dict:
        """A new id for a memory: its file, frontmatter, index link and references, under the lock."""
        from .everyday import rename

        return rename(self, old, new)

    def export(self, archived: bool = True) -> dict:
        """Every memory as a record (what `import_` reads back) and the files that could not be read."""
        from .everyday import export

        return export(self, archived)

    def import_(self, source: str | os.PathLike, stdin_text: str | None = None) -> dict:
        """Add the memories of an export, a Markdown folder or file, or an agent's MEMORY.md of bullet
        lines ('-': stdin_text). Existing ids are skipped; secrets follow write.secrets."""
        from .everyday import import_

        return import_(self, source, stdin_text)

    @classmethod
    def init(cls, path: str | os.PathLike, example: bool = False) -> "Memory":
        """Create a memory root (never overwriting a file) and open it."""
        return cls(init_root(path, example)["root"])


def _problem_with_fix(e: MemcliError, rel: str) -> Problem:
    """A file `check_index` cannot use, with the fix the heartbeat gives for the same fault."""
    p = getattr(e, "problem", None)
    if p is not None:
        return Problem(p.path, p.line, f"{p.message} ({indexrules.FIX_BROKEN_FILE})")
    if isinstance(e, FileError):
        return Problem(rel, None, f"{e.message.removeprefix(rel + ': ')} ({indexrules.FIX_UNREADABLE_FILE})")
    return Problem(rel, None, e.message)


def _line_for(entries: list, memory_id: str) -> str | None:
    from .store.index import render_line

    for e in entries:
        if e.id == memory_id:
            return render_line(e)
    return None


def _expired(d: Detail, today: str | None = None) -> bool:
    if not d.expires:
        return False
    return d.expires[:10] < (today or utcnow()[:10])


def _passed(expires: str) -> str:
    return f"--expires {expires} has already passed: `memcli heartbeat --fix` will move it to memory/archive/"


def _check_input(**fields) -> None:
    """Control characters are refused in every text field of a memory (exit 2)."""
    for what, value in fields.items():
        name = what in ("id", "tags")
        for v in (value if isinstance(value, (list, tuple)) else (value,)):
            if v is not None:
                check_text_field(str(v), {"tags": "tag", "aliases": "alias"}.get(what, what), name=name)


def _importance(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"importance must be a number from 0 to 1, got {value!r}")
    if not 0 <= v <= 1:
        raise UsageError(f"--importance must be from 0 to 1, got {value}")
    return v


def _front_value(front: dict, key: str):
    """A key of a body's frontmatter as remember takes it (None when absent or blank)."""
    value = front.get(key)
    if value is None or value == "":
        return None
    if key in ("expires", "source"):
        return dfile._stamp(value) if key == "expires" else one_line(value)
    if key == "type":
        return one_line(value)
    return value


def _body(text: str) -> str:
    text = text.replace("\r\n", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


def _strip_frontmatter(body: str) -> tuple[str, dict]:
    """A body that brings its own frontmatter gives its keys; it never becomes a second block."""
    if not body.lstrip("\ufeff").startswith("---"):
        return body, {}
    try:
        fm, rest, _ = dfile.split(body)
    except ValueError:
        return body, {}
    if fm is None:
        return body, {}
    yaml, Loader, _ = dfile._yaml()
    try:
        data = yaml.load(fm, Loader=Loader)
    except Exception:
        return body, {}
    return (rest, data) if isinstance(data, dict) else (body, {})


from .initroot import init_root, template_text  # noqa: E402,F401  (Memory.init and the rebuild template)
from .store.details import add_history  # noqa: E402,F401  (update's History section)
