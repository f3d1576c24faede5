"""The repository of one memory root: where its files are, its lock, its reads (with the index
cache), and the atomic write of detail files together with MEMORY.md as `indexrules.plan` says.
Every use case takes a ``Root``, given its settings ready: the store reads no configuration."""

from __future__ import annotations

import contextlib
import os
from threading import get_ident
from pathlib import Path

from .. import progress
from ..errors import FileError, NotARootError, NotFoundError, UnsafePathError, UsageError
from ..model import Detail, Entry, Problem
from ..paths import ARCHIVE, MEMORY, memory_ref
from . import details as dfile
from . import indexrules, layout
from .fs import atomic_write, atomic_write_many, inside, read_text, root_lock, safe_join, state_dir
from .index import IndexDoc


def _misnamed(rel: str) -> Problem:
    why = "the file name is not a valid id (letters, digits, '-', '_', '.'); rename it"
    return Problem(rel.encode("unicode_escape").decode(), None, why)


def root_path(path: str | os.PathLike) -> Path:
    """The real path of a memory root (a folder holding MEMORY.md or memcli.yaml), else NotARootError."""
    path = Path(path).expanduser()
    if not path.is_dir():
        if path.exists():
            raise NotARootError(f"not a memory root: {path} is a file, not a folder")
        raise NotARootError(f"not a memory root: {path} does not exist (run `memcli init {path}`)")
    if not layout.is_root(path):
        raise NotARootError(f"not a memory root: {path} has no {layout.INDEX} (run `memcli init {path}`)")
    return path.resolve()


class Root:
    """A memory root: ``Root(root_path(folder), config)`` (a ready ``config.Config``)."""

    def __init__(self, path: Path, config, *, door: str = "api"):
        self.path = path
        self.config = config
        self.door = door  # the front end writing through it: cli, api, mcp or hook (write.pii)
        self._dirs: dict = {}
        self._lock_owner: int | None = None

    # ---------- where things are
    @property
    def index_path(self) -> Path:
        return self.path / layout.INDEX

    def rel(self, path) -> str:
        """A path of the root as messages show it (relative, with /)."""
        return Path(path).relative_to(self.path).as_posix()

    def memory_dir(self) -> Path:
        d = self.path / layout.MEMORY
        if d.exists() and not inside(self.path, d):
            raise UnsafePathError("memory/ leads outside the memory root (a symlink?); refusing to use it")
        return d

    def folder(self, archived: bool = False) -> Path:
        """memory/ (or memory/archive/), checked once per Root to stay inside the root."""
        d = self._dirs.get(archived)
        if d is None:
            d = self.memory_dir()
            if archived:
                d = safe_join(self.path, *layout.ARCHIVE.split("/"))
            self._dirs[archived] = d
        return d

    def detail_path(self, memory_id: str, archived: bool = False) -> Path:
        """memory/<id>.md: the id is checked; a file that is a symlink must stay inside the root."""
        layout.check_id(memory_id)
        path = self.folder(archived) / f"{memory_id}.md"
        if os.path.islink(path) and not inside(self.path, path):
            raise UnsafePathError(f"refusing {self.rel(path)}: it leads outside the memory root")
        return path

    def exists(self, memory_id: str) -> bool:
        """Whether memory/<id>.md is there (one that leads outside the root is unreadable, not gone)."""
        try:
            return self.detail_path(memory_id).is_file()
        except (UsageError, UnsafePathError):
            return True

    def state_dir(self, *sub: str) -> Path:
        """.memcli/<sub> (created), refused when it leads outside the root."""
        return state_dir(self.path, *sub)

    def detail_files(self, archived: bool = False) -> list[Path]:
        """memory/*.md (or memory/archive/*.md) whose names are valid ids."""
        return [p for p in self._md_files(archived) if layout.valid_id(p.stem)]

    def misnamed_files(self, archived: bool = False) -> list[Problem]:
        """Markdown files whose names are not ids: never read, never put in the index, reported."""
        names = [p.stem for p in self._md_files(archived)]
        return [_misnamed(layout.detail_rel(n, archived)) for n in names if not layout.valid_id(n)]

    def _md_files(self, archived: bool) -> list[Path]:
        self.memory_dir()  # refuses a memory/ that leads outside the root
        return layout.md_files(self.path, layout.ARCHIVE if archived else layout.MEMORY)

    def fingerprints(self) -> dict[str, str]:
        """id -> fingerprint of every memory/<id>.md (what a listing reads)."""
        self.memory_dir()
        out = {}
        for de in layout.md_entries(self.path / layout.MEMORY):
            mid = de.name[:-3]
            if layout.valid_id(mid):
                try:
                    out[mid] = layout.fingerprint(de.stat())
                except OSError:
                    continue
        return out

    def locate(self, memory_id: str) -> tuple[Path, bool]:
        """(path, archived) of a memory by exact id, memory/ first, without reading it."""
        for archived in (False, True):
            path = self.detail_path(memory_id, archived)
            if path.is_file():
                return path, archived
        raise self.not_found(memory_id)

    def not_found(self, memory_id: str) -> NotFoundError:
        """The error for an unknown id, naming the close ones."""
        names = [p.stem for p in self.detail_files() + self.detail_files(archived=True)]
        close = []
        if names:
            from rapidfuzz import fuzz, process

            close = [
                m[0]
                for m in process.extract(memory_id, list(dict.fromkeys(names)), scorer=fuzz.WRatio, limit=3)
                if m[1] >= 60
            ]
        hint = f"; did you mean {', '.join(close)}?" if close else "; `memcli list` shows the ids"
        return NotFoundError(f"no memory with id {memory_id!r}{hint}", data={"candidates": close})

    # ---------- the lock
    @contextlib.contextmanager
    def lock(self):
        """The root's write lock; the thread that holds it may take it again (a nested call is free)."""
        me = get_ident()
        if self._lock_owner == me:
            yield
            return
        with root_lock(self.path, self.config.seconds("lock_timeout")):
            self._lock_owner = me
            try:
                yield
            finally:
                self._lock_owner = None

    # ---------- reads
    def read_index(self) -> IndexDoc:
        if self.index_path.is_symlink() and not inside(self.path, self.index_path):
            raise UnsafePathError("MEMORY.md leads outside the memory root (a symlink?); not read")
        try:
            return IndexDoc.parse(read_text(self.index_path, layout.INDEX))
        except FileError:
            if not self.index_path.exists():
                return IndexDoc([], "\n", True)
            raise

    def index_text(self) -> str:
        """MEMORY.md as it is ("" when there is none), after the checks of ``read_index``."""
        self.read_index()
        return read_text(self.index_path, layout.INDEX) if self.index_path.exists() else ""

    def load(self, path) -> Detail:
        path = Path(path)
        if not inside(self.path, path):
            raise UnsafePathError(f"{path.name} leads outside the memory root (a symlink?); not read")
        return dfile.read(path, path.stem, self.rel(path))

    def memory_id(self, ref: str) -> str:
        """A memory's id from what is given: the id, the path recall prints, or its file as a path or a
        name (<id>.md) that leads to a memory of this root."""
        rid = memory_ref(ref)
        if rid != ref or not isinstance(ref, str) or not ref.endswith(".md"):
            return rid
        if "/" not in ref and os.sep not in ref:
            return ref[:-3] if any((self.path / d / ref).is_file() for d in (MEMORY, ARCHIVE)) else ref
        try:
            rel = Path(ref).resolve().relative_to(self.path.resolve())
        except (OSError, ValueError):
            raise UnsafePathError(f"invalid id {ref!r}: a file that lies outside the root {self.path}") from None
        return memory_ref(rel.as_posix())

    def get(self, memory_id: str) -> Detail:
        """One memory by exact id (archived ones too); NotFoundError suggests close ids."""
        return self.load(self.locate(memory_id)[0])

    def raw(self, memory_id: str) -> str:
        """A memory's file as it is written (archived ones too)."""
        path = self.locate(memory_id)[0]
        if not inside(self.path, path):
            raise UnsafePathError(f"{path.name} leads outside the memory root (a symlink?); not read")
        return read_text(path, self.rel(path))

    def read(self, rel: str) -> str:
        """A file of the root by its relative path (a memory, a proposal), refused outside the root."""
        path = safe_join(self.path, *rel.split("/"))
        return read_text(path, rel)

    def indexed(self, entries: list | None = None) -> list:
        """(entry, Detail or None) for every entry of MEMORY.md (or of ``entries``), through the index cache."""
        from .indexcache import indexed

        return indexed(self, self.read_index().entries if entries is None else entries)

    # ---------- the index plan and the writes
    def activity(self, trace: bool = True):
        """What `index.rank: activity` plans with (None under `importance`): the recalls of
        .memcli/trace.jsonl, or none with trace=False (a merged index: the same on every clone)."""
        if self.config["index.rank"] != "activity":
            return None
        from .trace import access

        return indexrules.Activity(access(self.path) if trace else {}, self.config.seconds("recall.half_life") / 86400)

    def plan_index(self, doc: IndexDoc, *, memories: dict | None = None, trace: bool = True, **how) -> indexrules.Plan:
        """``indexrules.plan`` (``how``: add, changed, pool, promote, tidy, fit) under this root's
        `index.*` settings; the memories the lines name are read through the index cache unless given."""
        if memories is None:
            memories = {
                e.id: (d if d is not None else indexrules.UNREADABLE)
                for e, d in self.indexed([e for e in doc.entries if e.id and indexrules.is_safe_id(e.id)])
            }
        limits = {"max_lines": int(self.config["index.max_lines"]), "on_full": self.config["index.on_full"]}
        return indexrules.plan(doc, memories, activity=self.activity(trace), **limits, **how)

    def write(self, plan: indexrules.Plan | None, *files: tuple) -> None:
        """Detail files ((path, text[, newline]) each) and MEMORY.md as the plan says, as one step."""
        writes = list(files)
        if plan is not None:
            text = plan.doc.render()
            try:
                old = self.index_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                old = None
            if text != old:
                writes.append((self.index_path, text))
        if writes:
            atomic_write_many(writes)

    def write_index_text(self, text: str) -> None:
        atomic_write(self.index_path, text)

    def drop_line(self, memory_id: str) -> bool:
        """Remove a memory's lines from MEMORY.md (forget); whether it had one."""
        doc = self.read_index()
        lines = [x for x in doc.lines if not (isinstance(x, Entry) and x.id == memory_id)]
        if len(lines) == len(doc.lines):
            return False
        atomic_write(self.index_path, IndexDoc(lines, doc.newline, doc.final_newline).render())
        return True

    def remove(self, path) -> None:
        """Delete a file of the root (forget)."""
        try:
            os.unlink(path)
        except OSError as e:
            raise FileError(f"cannot delete {self.rel(path)}: {e.strerror or e}")

    def listing(self, archived: bool = False) -> tuple[list[Detail], list[Problem]]:
        """(every readable memory of memory/ (and memory/archive/), in index order; the files that
        could not be read, the misnamed ones first). Only a symlink is resolved: this reads them all."""
        self.memory_dir()
        found, misnamed, unread = [], [], []
        entries = []
        for sub in (layout.MEMORY, layout.ARCHIVE) if archived else (layout.MEMORY,):
            folder = self.path / sub
            folder_inside = inside(self.path, folder)
            entries += [(sub, folder_inside, de) for de in layout.md_entries(folder)]
        for sub, folder_inside, de in progress.each(entries, "reading memories"):
            mid, rel = de.name[:-3], f"{sub}/{de.name}"
            if not layout.valid_id(mid):
                misnamed.append(_misnamed(rel))
                continue
            try:
                if not (folder_inside and not de.is_symlink()) and not inside(self.path, Path(de.path)):
                    raise UnsafePathError(f"{de.name} leads outside the memory root (a symlink?); not read")
                found.append(dfile.read(de.path, mid, rel))
            except (FileError, UnsafePathError, UsageError) as e:
                unread.append(getattr(e, "problem", None) or Problem(rel, None, e.message))
        found.sort(key=Detail.rank_key)
        return found, misnamed + unread
