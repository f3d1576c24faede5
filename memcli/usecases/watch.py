"""Watch a memory root: validate and re-index edits as they happen (docs/guide/heartbeat.md).
Events wait for the root to be quiet for the debounce time, at most ``MAX_WAIT`` periods. Only the
root itself and memory/ are watched, so a big tree beside them costs nothing; an overflow rescans.
Nothing here prints: every observation goes to ``emit`` as a plain dict."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from collections.abc import Callable
from contextlib import suppress

from ..errors import ConfigError, FileError, MemcliError, NotARootError, UsageError
from ..heartbeat import check_text, plan
from ..heartbeat.base import read_file
from ..model import Finding
from ..store import indexrules, layout
from ..paths import TMP_PREFIX
from .maintain import apply, audit, line_target

ROOT_FILES = (layout.INDEX, layout.CONFIG)
RESCAN = "*"  # a folder changed as a whole (moved, deleted, created): compare with the last snapshot
MAX_WAIT = 10  # debounce periods after the first event at most, before a busy batch is processed
POLL = 0.2  # seconds between checks for a stop request and for the root's existence
_IGNORED_EVENTS = ("opened", "closed_no_write")

Emit = Callable[[dict], None]


def relevant(root: Path, path: str) -> str | None:
    """The root-relative path when a change to it matters, else None."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return None
    parts = rel.split("/")
    if parts[0] in layout.SKIP_DIRS or any(p.startswith(TMP_PREFIX) for p in parts):
        return None
    return rel if rel in ROOT_FILES or layout.kind_of(rel) is not None else None


class Watcher:
    """The checks behind `memcli watch`, separate from the observer thread so they can be driven
    directly: ``process({"memory/x.md"})`` checks one batch, ``heartbeat()`` runs one audit."""

    def __init__(self, store, emit: Emit, *, fix: bool = False, reflect: bool = False):
        self.store = store
        self.root = store.path
        self.emit = emit
        self.fix = fix
        self.reflect = reflect
        self.snapshot = self._snapshot()
        self.fresh: set = set()  # memory files that appeared while watching, not yet given an index line

    # ---- what is on disk
    def _snapshot(self) -> dict[str, str]:
        """relative path -> fingerprint of the files of memory/, archive/ and episodes/, and of
        MEMORY.md and memcli.yaml."""
        snap = layout.snapshot(self.root)
        fps = {rel: layout.file_fingerprint(self.root / rel) for rel in ROOT_FILES}
        return {**snap, **{rel: fp for rel, fp in fps.items() if fp is not None}}

    def _rescan(self) -> set:
        new = self._snapshot()
        old, self.snapshot = self.snapshot, new
        return {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}

    def check_root(self) -> None:
        if not self.root.is_dir():
            raise NotARootError(f"the memory root {self.root} disappeared; stopped watching")

    # ---- one batch of changed paths
    def process(self, rels: set) -> None:
        rels, known = set(rels), set(self.snapshot)
        if RESCAN in rels:
            rels.discard(RESCAN)
            rels |= self._rescan()
        now = datetime.now(timezone.utc)
        index_changed = False
        ids: set = set()
        added: list = []
        cache_keys: list = []
        for rel in sorted(rels):
            path = self.root / rel
            exists = path.is_file()
            self.emit({"event": "changed" if exists else "removed", "path": rel})
            fp = layout.file_fingerprint(path)
            if fp is not None and rel not in known:
                self.fresh.add(rel)
            if fp is None:
                self.snapshot.pop(rel, None)
                self.fresh.discard(rel)
            elif rel.startswith(layout.MEMORY + "/") or rel in ROOT_FILES:
                self.snapshot[rel] = fp
            kind = layout.kind_of(rel)
            if kind == "config":
                self._reload_config()
                index_changed = True
                continue
            if kind == "index":
                index_changed = True
            elif kind == layout.DETAIL:
                ids.add(rel.rsplit("/", 1)[1][:-3])
            if kind in (layout.DETAIL, layout.EPISODE):
                cache_keys.append(rel)
            if exists and kind is not None:
                found = self._check_file(rel, path, kind, now)
                self._findings(found)
                if rel in self.fresh and kind == layout.DETAIL and not any(f.severity != "info" for f in found):
                    added.append(rel.rsplit("/", 1)[1][:-3])
                    self.fresh.discard(rel)
        if added:
            self._index(added)
        if index_changed or ids:
            self._check_index(ids, index_changed)
        if cache_keys:
            self._refresh_cache(cache_keys)

    def _check_file(self, rel: str, path: Path, kind: str, now) -> list[Finding]:
        """Every registered check of one file (the index's own faults are checked with the others)."""
        try:
            text = read_file(path, rel)
        except (FileError, UsageError) as e:
            if kind == "index":
                return []  # reported by the index check
            fix = "make it a UTF-8 text file under 10 MB, or move it out of memory/"
            return [Finding("file-unreadable", "error", rel, None, e.message.removeprefix(rel + ": "), fix)]
        except OSError:
            return []  # gone again since the event; the next event says so
        from ..store.markers import size_for

        return check_text(rel, kind, text, now, size_for(path))

    def _reload_config(self) -> None:
        from ..settings_guard import load_config

        try:
            self.store.config = load_config(self.root)
        except ConfigError as e:
            from ..heartbeat.localchecks import config_finding

            self._findings([config_finding(e, "correct it; until then the last good configuration is used")])

    def _index(self, ids: list) -> None:
        """Memories written while watching get their index line, as `remember` gives one."""
        with self.store.lock():
            for mid in ids:
                try:
                    doc = self.store.read_index()
                    if any(e.id == mid for e in doc.entries):
                        continue
                    plan = self.store.plan_index(doc, add=self.store.load(self.store.detail_path(mid)))
                    if not plan.refused:
                        self.store.write(plan)
                        self.emit({"event": "indexed", "id": mid, "line": plan.line_for(mid)})
                except MemcliError:
                    continue  # an unreadable index or memory: reported by the checks

    def _check_index(self, ids: set, everything: bool) -> None:
        try:
            doc = self.store.read_index()
        except MemcliError as e:
            fix = "make MEMORY.md UTF-8 text again, or run `memcli index rebuild`"
            self._findings([Finding("index-unreadable", "error", "MEMORY.md", None, e.message, fix)])
            return
        found = indexrules.check(doc, partial(line_target, self.store), int(self.store.config["index.max_lines"]))
        self._findings([f for mid, f in found if everything or mid in ids])

    def _refresh_cache(self, keys: list) -> None:
        """Bring the search cache's entries for these files up to date (what recall's sync would do)."""
        from ..search.cache import SearchCache, SearchCacheError
        from ..search.docs import detail_doc

        docs: list = []
        fps: dict = {}
        drop: list = []
        for key in keys:
            # before reading: a later change then shows as a new fingerprint
            fp = layout.file_fingerprint(self.root / key)
            doc = detail_doc(self.root, key) if fp is not None else None
            if doc is None:
                drop.append(key)
            else:
                docs.append(doc)
                fps[key] = fp
        try:
            with SearchCache(self.store.state_dir(layout.SEARCH)) as cache:
                if docs:
                    cache.update_docs(docs, fps)
                if drop:
                    cache.remove(drop)
        except (SearchCacheError, MemcliError, OSError) as e:
            self.emit({"event": "warning", "message": f"search cache not refreshed: {e}"})

    def _findings(self, findings: list) -> None:
        for f in findings:
            self.emit({"event": "finding", **f.to_dict()})

    # ---- the scheduled audit
    def heartbeat(self) -> None:
        report = audit(self.store)
        if self.fix:
            done = apply(self.store, plan(report))
            for message in done:
                self.emit({"event": "fixed", "message": message})
            if done:
                report = audit(self.store)
        self._findings([f for f in report.findings if f.severity != "info"])
        self.emit({"event": "heartbeat", **report.counts(), "files": report.files})
        if self.reflect:
            from .reflect import reflect

            res = reflect(self.store, wait=False)
            if not res.get("busy"):
                accepted = [a["memory"] for a in res["accepted"]]
                self.emit(
                    {"event": "reflected", "turns": res["turns"], "proposed": res["proposed"], "accepted": accepted}
                )


def watch(
    store,
    emit: Emit,
    stop: threading.Event,
    *,
    debounce: float = 0.3,
    heartbeat_every: float | None = None,
    fix: bool = False,
    reflect: bool = False,
) -> dict:
    """Observe a store.Root until ``stop`` is set; raises NotARootError when the root disappears."""
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    root = store.path
    events: queue.SimpleQueue = queue.SimpleQueue()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event):
            if event.event_type in _IGNORED_EVENTS:
                return
            paths = [event.src_path] + ([event.dest_path] if getattr(event, "dest_path", "") else [])
            paths = [os.fsdecode(p) for p in paths]
            if event.is_directory:
                if any(relevant(root, os.path.join(p, "x.md")) for p in paths):
                    events.put(RESCAN)
                return
            for p in paths:
                rel = relevant(root, p)
                if rel is not None:
                    events.put(rel)

    watcher = Watcher(store, emit, fix=fix, reflect=reflect)
    observer = Observer()
    handler = Handler()
    # Only what memcli reads is watched: the root's own entries (MEMORY.md, memcli.yaml, memory/
    # itself), not recursively, and memory/ recursively; a big tree beside them costs nothing.
    memory_watch = _MemoryWatch(observer, handler, root / layout.MEMORY)
    lost = _OverflowListener(events)
    try:
        observer.schedule(handler, str(root), recursive=False)
        memory_watch.refresh()
        observer.start()
    except OSError as e:  # e.g. the inotify watch limit (fs.inotify.max_user_watches)
        raise FileError(f"cannot watch {root}: {e.strerror or e}") from None
    batches = 0
    lost.install()
    try:
        emit({"event": "ready", "root": str(root)})
        pending: set = set()
        first = last = 0.0
        next_beat = time.monotonic() if heartbeat_every else None
        while not stop.is_set():
            now = time.monotonic()
            wait = min(last + debounce, first + MAX_WAIT * debounce) - now if pending else POLL
            got: set = set()
            try:  # the first event to come, and every one that came with it
                got.add(events.get(timeout=min(max(wait, 0.001), POLL)))
                while True:
                    got.add(events.get_nowait())
            except queue.Empty:
                pass
            now = time.monotonic()
            watcher.check_root()
            if memory_watch.refresh():  # memory/ was created, replaced or removed
                got.add(RESCAN)
            if got:
                first, last = (first if pending else now), now
                pending |= got
            if pending and (now >= last + debounce or now >= first + MAX_WAIT * debounce):
                batch, pending = pending, set()
                _guard(watcher, emit, lambda: watcher.process(batch))
                batches += 1
            if next_beat is not None and now >= next_beat:
                _guard(watcher, emit, watcher.heartbeat)
                next_beat = time.monotonic() + (heartbeat_every or 0.0)
    finally:
        lost.remove()
        observer.stop()
        with suppress(RuntimeError):
            observer.join(timeout=5)
    return {"root": str(root), "batches": batches}


class _MemoryWatch:
    """The recursive watch on memory/, set again whenever memory/ is created or replaced."""

    def __init__(self, observer, handler, path: Path):
        self.observer, self.handler, self.path = observer, handler, path
        self.watch = None
        self.ino: int | None = None

    def refresh(self) -> bool:
        """Watch memory/ as it is now; True when that changed (the caller rescans)."""
        try:
            ino = self.path.stat().st_ino if self.path.is_dir() else None
        except OSError:
            ino = None
        if ino == self.ino:
            return False
        if self.watch is not None:
            with suppress(KeyError, OSError):
                self.observer.unschedule(self.watch)
            self.watch = None
        self.ino = ino
        if ino is not None:
            try:
                self.watch = self.observer.schedule(self.handler, str(self.path), recursive=True)
            except OSError:
                self.ino = None  # tried again on the next poll
        return True


class _OverflowListener(logging.Handler):
    """watchdog tells of events the kernel dropped only in its log: this handler turns that message
    into a rescan of the root, and keeps it off the terminal."""

    def __init__(self, events):
        super().__init__(logging.WARNING)
        self.events = events

    def emit(self, record):
        if "overflow" in record.getMessage().lower():
            self.events.put(RESCAN)

    def install(self) -> None:
        logging.getLogger("watchdog.observers").addHandler(self)

    def remove(self) -> None:
        logging.getLogger("watchdog.observers").removeHandler(self)


def _guard(watcher: Watcher, emit: Emit, step: Callable[[], None]) -> None:
    """A failing check is reported and watching goes on; a vanished root ends it."""
    try:
        step()
    except (MemcliError, OSError) as e:
        watcher.check_root()
        said = e.message if isinstance(e, MemcliError) else f"{e.strerror or e}: {getattr(e, 'filename', '') or ''}"
        emit({"event": "warning", "message": said})
