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
from .errors import (ExistsError, FileError, IndexFullError, NotFoundError, SecretError, UnsafePathError,
                     UsageError)
from .model import TYPES, Detail, Entry, Problem, clean_tags, one_line
from .store import details as dfile
from .store.fs import (atomic_write, atomic_write_many, check_id, decode, inside, read_text, root_lock, safe_join,
                       slugify, state_dir, valid_id)
from .store.index import IndexDoc
from .store.markers import problems as conflicted_files

MAX_TITLE = 200


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
class Listing:
    details: list
    problems: list
    indexed: set


class Memory:
    """A memory root: `Memory(path)`; see the methods for each operation."""

    def __init__(self, root: str | os.PathLike, config: Config | None = None):
        self.root = Path(root).resolve()
        self.config = config if config is not None else load_config(self.root)

    # ---------- paths ----------
    @property
    def index_path(self) -> Path:
        return self.root / "MEMORY.md"

    def memory_dir(self) -> Path:
        d = self.root / "memory"
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
                d = safe_join(self.root, "memory", "archive")
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
        return [Problem("memory/" + ("archive/" if archived else "") + p.name.encode("unicode_escape").decode(),
                        None, "the file name is not a valid id (letters, digits, '-', '_', '.'); rename it")
                for p in self._md_files(archived) if not valid_id(p.stem)]

    def _md_files(self, archived: bool) -> list[Path]:
        d = self.memory_dir() / "archive" if archived else self.memory_dir()
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".md") and not n.startswith("."))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [d / n for n in names]

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
                 type: str = "note", importance: float = 0.5, pinned: bool = False,
                 expires: str | None = None, id: str | None = None, source: str | None = None,
                 now: str | None = None) -> WriteResult:
        """Write a new detail file and its index line (demoting the lowest entry when full)."""
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
        ranked = sorted(chosen.values(), key=Detail.rank_key)
        room = max_lines - 1 - doc.fixed_lines()
        demoted = []
        if len(ranked) > room:
            if self.config["index.on_full"] == "refuse" and add is not None:
                return self._Plan([], set(), [], warnings, refused=True)
            keep = list(ranked)
            for d in reversed(ranked):
                if len(keep) <= room:
                    break
                if not d.pinned:
                    keep.remove(d)
                    demoted.append(d.id)
            while len(keep) > max(room, 0):
                demoted.append(keep.pop().id)
            if any(chosen[i].pinned for i in demoted):
                warnings.append("the index is full of pinned entries; some pinned memories are not listed")
            ranked = keep
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
            lines = []
            for x in doc.lines:
                if isinstance(x, Entry):
                    if x.id and any(d.id == x.id for d in listing.details):
                        lines.append(x)
                else:
                    lines.append(x)
            doc = IndexDoc(lines, doc.newline, doc.final_newline)
            if not doc.lines:
                doc = IndexDoc.parse(template_text("MEMORY.md"))
            pool = [d for d in listing.details if not _expired(d)]
            plan = self._plan_index(doc, pool=pool)
            self._write_index(doc, plan.entries)
        return {"entries": len(plan.entries), "left_out": plan.demoted,
                "problems": [str(p) for p in listing.problems]}

    def check_index(self) -> list[Problem]:
        """What is wrong with MEMORY.md and the detail files: empty when all is well."""
        problems: list[Problem] = []
        max_lines = int(self.config["index.max_lines"])
        try:
            doc = self.read_index()
        except (FileError, UsageError, UnsafePathError) as e:
            return [Problem("MEMORY.md", None, e.message.removeprefix("MEMORY.md: "))]
        if not self.index_path.exists():
            problems.append(Problem("MEMORY.md", None, "missing (run `memcli index rebuild`)"))
        if doc.line_count() >= max_lines:
            problems.append(Problem("MEMORY.md", max_lines, f"{doc.line_count()} lines; the index must stay "
                                    f"under {max_lines} (run `memcli heartbeat --fix`)"))
        seen = set()
        for n, x in enumerate(doc.lines, 1):
            if not isinstance(x, Entry):
                continue
            if x.id is None:
                problems.append(Problem("MEMORY.md", n, f"the link {x.path!r} is not memory/<id>.md inside the root"))
                continue
            try:
                path = self.detail_path(x.id)
            except (UnsafePathError, UsageError) as e:
                problems.append(Problem("MEMORY.md", n, e.message))
                continue
            if x.id in seen:
                problems.append(Problem("MEMORY.md", n, f"{x.id} is listed twice"))
            seen.add(x.id)
            if not path.is_file():
                problems.append(Problem("MEMORY.md", n, f"points at {x.path}, which does not exist"))
                continue
            try:
                d = self.load(path)
            except (FileError, UsageError) as e:
                problems.append(getattr(e, "problem", None) or Problem(x.path, None, e.message))
                continue
            if d.entry != x:
                problems.append(Problem("MEMORY.md", n, f"{x.id}: the line disagrees with {x.path} "
                                        "(run `memcli index rebuild`)"))
        listed = set(seen)
        problems += conflicted_files(self.root)
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


def _templates():
    """The templates: package data when installed; the checkout's templates/ when run from source."""
    from importlib.resources import files

    try:
        return files("memcli.templates")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "templates"


def template_text(name: str) -> str:
    return (_templates() / name).read_text(encoding="utf-8")


def example_files() -> list[tuple[str, str]]:
    folder = _templates() / "example"
    return sorted((p.name, p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".md"))


def read_input(text: str | None, file: str | None, stdin_text, what: str) -> str:
    """TEXT, or '-' for stdin, or a file; binary, non-UTF-8 and over-1-MB input is refused."""
    if text is not None and file is not None:
        raise UsageError(f"give the {what} as text or as a file, not both")
    if file is not None:
        if file == "-":
            return decode(stdin_text(), f"{what} (stdin)")
        try:
            data = Path(file).read_bytes() if os.path.getsize(file) <= 10 * 1_000_000 else b"x" * 1_000_001
        except FileNotFoundError:
            raise FileError(f"{file}: no such file")
        except IsADirectoryError:
            raise FileError(f"{file}: is a folder, not a file")
        except OSError as e:
            raise FileError(f"{file}: cannot read it ({e.strerror or e})")
        return decode(data, file)
    if text == "-":
        return decode(stdin_text(), f"{what} (stdin)")
    return text or ""


def init_root(path: str | os.PathLike, example: bool = False) -> dict:
    """Create a memory root; never overwrites. With example, add the example memories."""
    root = Path(path).expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    created, kept = [], []

    def put(rel: str, text: str):
        p = root / rel
        if p.exists() or p.is_symlink():
            kept.append(rel)
            return
        atomic_write(p, text)
        created.append(rel)

    mem = root / "memory"
    if mem.is_symlink() and not inside(root, mem):
        raise UnsafePathError("memory/ leads outside the root (a symlink?); refusing to use it")
    for d in ("memory", "memory/episodes", "memory/archive"):
        if not (root / d).exists():
            (root / d).mkdir(parents=True)
            created.append(d + "/")
    put("memcli.yaml", template_text("memcli.yaml"))
    gi = root / ".gitignore"
    if gi.exists():
        text = gi.read_text(encoding="utf-8", errors="replace")
        if not re.search(r"^/?\.memcli/?\s*$", text, re.M):
            atomic_write(gi, text + ("" if text.endswith("\n") or not text else "\n") + ".memcli/\n")
            created.append(".gitignore (+ .memcli/)")
        else:
            kept.append(".gitignore")
    else:
        put(".gitignore", ".memcli/\n.memcli-tmp-*\n")
    state_dir(root)
    added = []
    if example:
        for name, text in example_files():
            rel = f"memory/{name}"
            if not (root / rel).exists():
                put(rel, text)
                added.append(name[:-3])
    put("MEMORY.md", template_text("MEMORY.md"))
    if added:
        Memory(root).rebuild_index()
    return {"root": str(root), "created": created, "kept": kept, "examples": added}
