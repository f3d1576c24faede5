"""The memory store's operations: the library behind every write and read command.

Every method returns values; nothing here prints, exits or reads the environment.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .config import Config, load_config, parse_duration
from .errors import (ExistsError, FileError, IndexFullError, NotARootError, NotFoundError, SecretError,
                     UnsafePathError, UsageError)
from .model import DEFAULT_IMPORTANCE, DEFAULT_TYPE, TYPES, Detail, Entry, Problem, clean_tags, one_line
from .store import details as dfile
from .store.fs import (atomic_write, atomic_write_many, check_id, inside, read_text, root_lock, safe_join, slugify,
                       valid_id)
from .store import indexrules, layout
from .store.index import IndexDoc

MAX_TITLE = 200
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
        return (base + _dt.timedelta(seconds=parse_duration(text))).date().isoformat()
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

    def __init__(self, root: str | os.PathLike, config: Config | None = None):
        path = Path(root).expanduser()
        if not path.is_dir():
            raise NotARootError(f"not a memory root: {path} does not exist (run `memcli init {path}`)")
        if not layout.is_root(path):
            raise NotARootError(f"not a memory root: {path} has no {layout.INDEX} (run `memcli init {path}`)")
        self.root = path.resolve()
        self.config = config if config is not None else load_config(self.root)

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

    def lock(self):
        return root_lock(self.root, self.config.seconds("lock_timeout"))

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
        for archived in (False, True):
            path = self.detail_path(memory_id, archived)
            if path.is_file():
                return self.load(path)
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
    def _scan(self, fields: dict) -> tuple[dict, list]:
        policy = self.config["write.secrets"]
        if policy == "allow":
            return fields, []
        from .scan import find_secrets, redact_secrets

        redacted = []
        out = {}
        for name, value in fields.items():
            if isinstance(value, (list, tuple)):
                items = []
                for v in value:
                    v2, r = self._scan_text(name, v, policy, find_secrets, redact_secrets)
                    items.append(v2)
                    redacted += r
                out[name] = type(value)(items)
            elif isinstance(value, str):
                out[name], r = self._scan_text(name, value, policy, find_secrets, redact_secrets)
                redacted += r
            else:
                out[name] = value
        return out, redacted

    @staticmethod
    def _scan_text(name, text, policy, find_secrets, redact_secrets):
        hits = find_secrets(text)
        if not hits:
            return text, []
        if policy == "refuse":
            h = hits[0]
            more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
            raise SecretError(
                f"refused: the {name} holds a secret ({h.kind}) at line {h.line}, column {h.column}{more}; "
                "remove it, or set write.secrets: redact in memcli.yaml",
                data={"secrets": [{"field": name, "kind": x.kind, "line": x.line, "column": x.column} for x in hits]},
            )
        new, found = redact_secrets(text)
        return new, [{"field": name, "kind": x.kind, "line": x.line, "column": x.column} for x in found]

    def remember(self, title: str, summary: str = "", *, tags=(), aliases=(), body: str = "",
                 type: str | None = None, importance: float | None = None, pinned: bool = False,
                 expires: str | None = None, id: str | None = None, source: str | None = None,
                 now: str | None = None) -> WriteResult:
        """Write a new detail file and its index line (demoting the lowest entry when full).
        type and importance default to DEFAULT_TYPE and DEFAULT_IMPORTANCE."""
        type = DEFAULT_TYPE if type is None else type
        importance = DEFAULT_IMPORTANCE if importance is None else importance
        title = one_line(title or "")
        if not title:
            raise UsageError("a title is required and must not be blank")
        if len(title) > MAX_TITLE:
            raise UsageError(f"the title has {len(title)} characters; keep it under {MAX_TITLE} "
                             "and put the rest in the summary or the body")
        if type not in TYPES:
            raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
        if not 0 <= float(importance) <= 1:
            raise UsageError(f"--importance must be from 0 to 1, got {importance}")
        extra: dict = {}
        body, front = _strip_frontmatter(body or "")
        if front:
            extra = {k: v for k, v in front.items() if k not in ("id", "title", "summary", "tags", "aliases",
                                                                  "type", "importance", "pinned", "created",
                                                                  "updated", "expires", "source")}
            summary = summary or one_line(front.get("summary") or "")
            tags = tuple(tags) + tuple(dfile._str_list(front.get("tags")))
            aliases = tuple(aliases) + tuple(dfile._str_list(front.get("aliases")))
        memory_id = check_id(id) if id else slugify(title)
        now = now or utcnow()
        fields, redacted = self._scan({"title": title, "summary": one_line(summary or ""), "body": body,
                                       "tags": tuple(tags), "aliases": tuple(aliases),
                                       "source": source or ""})
        if redacted and not id:
            memory_id = slugify(fields["title"])
        d = Detail(
            id=memory_id, title=fields["title"], summary=fields["summary"], tags=clean_tags(fields["tags"]),
            aliases=tuple(dict.fromkeys(one_line(a) for a in fields["aliases"] if one_line(a))),
            type=type, importance=float(importance), pinned=bool(pinned), created=now, updated=now,
            expires=parse_expires(expires, now), source=fields["source"] or None, extra=extra,
            body=_body(fields["body"]),
        )
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
            self._write_with_index(doc, plan.entries, (path, dfile.render(d)))
        result = WriteResult("remembered", memory_id, self.rel(path), memory_id in plan.ids,
                             redacted=redacted, demoted=plan.demoted)
        result.line = _line_for(plan.entries, memory_id)
        result.warnings += plan.warnings
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
        """Change a memory; a replaced title or summary is kept under a dated ## History section."""
        check_id(memory_id)
        now = now or utcnow()
        if type is not None and type not in TYPES:
            raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
        if importance is not None and not 0 <= float(importance) <= 1:
            raise UsageError(f"--importance must be from 0 to 1, got {importance}")
        fields, redacted = self._scan({"title": one_line(title or ""), "summary": one_line(summary or ""),
                                       "append": append or "", "tags": tuple(tags), "aliases": tuple(aliases)})
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
            if title is not None:
                if not fields["title"]:
                    raise UsageError("a title must not be blank")
                if len(fields["title"]) > MAX_TITLE:
                    raise UsageError(f"the title has {len(fields['title'])} characters; keep it under {MAX_TITLE}")
                if fields["title"] != d.title:
                    history.append(f"title was: {d.title}")
                    new["title"] = fields["title"]
                    new["aliases"] = tuple(dict.fromkeys((*d.aliases, d.title)))
            if summary is not None and fields["summary"] != d.summary:
                if d.summary:
                    history.append(f"summary was: {d.summary}")
                new["summary"] = fields["summary"]
            if fields["tags"] or untags:
                drop = set(clean_tags(untags))
                new["tags"] = tuple(t for t in clean_tags((*d.tags, *fields["tags"])) if t not in drop)
            if fields["aliases"]:
                new["aliases"] = tuple(dict.fromkeys((*new.get("aliases", d.aliases),
                                                      *(one_line(a) for a in fields["aliases"] if one_line(a)))))
            if type is not None:
                new["type"] = type
            if importance is not None:
                new["importance"] = float(importance)
            if pinned is not None:
                new["pinned"] = bool(pinned)
            if expires is not None:
                new["expires"] = parse_expires(expires, now)
            body = d.body
            if fields["append"].strip():
                body = _body(body.rstrip("\n") + ("\n\n" if body.strip() else "") + fields["append"].strip("\n"))
            if history:
                body = add_history(body, now[:10], history)
            if not new and body == d.body:
                return WriteResult("unchanged", memory_id, self.rel(path),
                                   memory_id in {e.id for e in self.read_index().entries})
            d = d.replace(updated=now, body=body, **new)
            doc = self.read_index()
            plan = self._plan_index(doc, changed=d if path == self.detail_path(memory_id) else None)
            self._write_with_index(doc, plan.entries, (path, dfile.render(d), dfile.newline_of(raw)))
        result = WriteResult("updated", memory_id, self.rel(path), memory_id in plan.ids, redacted=redacted,
                             demoted=plan.demoted)
        result.line = _line_for(plan.entries, memory_id)
        return result

    def forget(self, memory_id: str) -> WriteResult:
        """Delete a memory: its index line and its detail file (exact id only)."""
        check_id(memory_id)
        with self.lock():
            path = self.detail_path(memory_id)
            if not path.is_file():
                path = self.detail_path(memory_id, archived=True)
                if not path.is_file():
                    raise self._not_found(memory_id)
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

    def _plan_index(self, doc: IndexDoc, add: Detail | None = None,
                    pool: list | None = None, changed: Detail | None = None) -> "_Plan":
        """Which memories the index holds, in order, and which fell out for lack of room.

        changed is a memory about to be written: its new version counts, not the one on disk."""
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
        if pool is not None:
            chosen = {d.id: d for d in pool}
        if add is not None:
            chosen[add.id] = add
        ranked = indexrules.rank(chosen.values())
        room = indexrules.free_room(max_lines, doc.fixed_lines())
        demoted = []
        if len(ranked) > room:
            if self.config["index.on_full"] == "refuse" and add is not None:
                return self._Plan([], set(), [], warnings, refused=True)
            ranked, out = indexrules.demote(ranked, room)
            demoted = [d.id for d in out]
            if any(d.pinned for d in out):
                warnings.append("the index is full of pinned entries; some pinned memories are not listed")
        if demoted and add is not None:
            warnings.append("the index is full: moved out of MEMORY.md (detail files kept): " + ", ".join(demoted))
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
        """Regenerate MEMORY.md from the detail files: same files, same bytes; other lines kept."""
        with self.lock():
            listing = self.list()  # under the lock: a memory forgotten meanwhile must not come back
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
                "problems": [str(p) for p in listing.problems]}

    def check_index(self) -> list[Problem]:
        """What is wrong with MEMORY.md and the detail files: empty when all is well. The index's
        faults are the heartbeat's (`indexrules.check`), with the same messages."""
        try:
            doc = self.read_index()
        except (FileError, UsageError, UnsafePathError) as e:
            return [Problem(layout.INDEX, None, e.message.removeprefix("MEMORY.md: "))]
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
                broken[mid] = getattr(e, "problem", None) or Problem(layout.detail_rel(mid), None, e.message)
                return "broken"

        for mid, f in indexrules.check(doc, lookup, int(self.config["index.max_lines"])):
            problems.append(Problem(f.path, f.line, f"{f.message} ({f.fix})"))
        problems += broken.values()
        listed = {e.id for e in doc.entries if e.id}
        problems += self.misnamed_files()
        for p in self.detail_files():
            if p.stem in listed:
                continue
            try:
                self.load(p)
            except (FileError, UsageError, UnsafePathError) as e:
                problems.append(getattr(e, "problem", None) or Problem(self.rel(p), None, e.message))
        return problems

    def after_edit(self, memory_id: str) -> WriteResult:
        """Re-render the index after a hand edit; a broken file is reported, never rewritten."""
        path = self.detail_path(memory_id)
        self.load(path)
        with self.lock():
            doc = self.read_index()
            plan = self._plan_index(doc)
            self._write_index(doc, plan.entries)
        return WriteResult("edited", memory_id, self.rel(path), memory_id in plan.ids,
                           line=_line_for(plan.entries, memory_id))

    # ---------- the cascade ----------
    def recall(self, query: str, *, limit: int | None = None, deep: bool = False, layer: str | None = None,
               session: str = "default", scope: str = "default", threshold: float | None = None,
               now: str | None = None):
        """Session, then scope, then the index, then the details: a Recall with hits and a trace."""
        from .recall import recall

        return recall(self, query, session=session, scope=scope, limit=limit, deep=deep, layer=layer,
                      threshold=threshold, now=now)

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


def add_history(body: str, day: str, notes: list) -> str:
    """Add dated bullets to the body's `## History` section, creating it at the end if needed."""
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    bullets = [f"- {day}: {n}" for n in notes]
    start = next((i for i, ln in enumerate(lines) if ln.strip().lower() in ("## history", "## 历史")), None)
    if start is None:
        lines += ([""] if lines else []) + ["## History", ""] + bullets
    else:
        end = next((j for j in range(start + 1, len(lines)) if re.match(r"^#{1,2}\s", lines[j])), len(lines))
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        if end == start + 1:
            bullets = [""] + bullets
        lines[end:end] = bullets
    return "\n".join(lines) + "\n"


from .initroot import init_root, template_text  # noqa: E402,F401  (Memory.init and the rebuild template)
