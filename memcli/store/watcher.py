"""The details layer's files of a root, followed by watchdog in `memcli serve`: instead of a
stat of every file of memory/ and memory/episodes/ per recall (``layout.detail_files``), a file
written in place is stat-ed again, and a file made, renamed or deleted, lost events or memory/
made again mean a new scan. Where the folders cannot be followed, every call scans.

watchdog replaced inotify through ctypes; side by side (``benchmarks/follow_bench.py``, 10k
memories, load average 1.4): the check before a request costs 62 µs against 46; a write is seen
1.6 ms after it returns (0.1 ms before); a file moved out of memory/ is seen ~0.3 s later
(watchdog waits up to 0.5 s for a rename's other half); the watches start in 27 ms more, once.
"""

from __future__ import annotations

import os
import stat
import threading
from contextlib import suppress
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from . import layout


class _Watched(FileSystemEventHandler):
    """Folders followed by a watchdog observer: a pipe becomes readable (for ``select``) when
    ``changed`` says an event matters."""

    def __init__(self, folders, recursive: bool = False) -> None:
        self._wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._observer = Observer()
        self._observer.daemon = True
        try:
            for folder in folders:
                self._observer.schedule(self, str(folder), recursive=recursive)
            self._observer.start()
        except BaseException:
            self.close()
            raise

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("opened", "closed_no_write") and self.changed(event):
            with suppress(BlockingIOError):  # else already readable
                os.write(self._wake[1], b"!")

    def changed(self, event: FileSystemEvent) -> bool:
        raise NotImplementedError

    def fileno(self) -> int:
        """Readable once something changed since the last look."""
        return self._wake[0]

    def close(self) -> None:
        if self._observer.is_alive():
            self._observer.stop()
            self._observer.join(timeout=5)
        for fd in self._wake:
            with suppress(OSError):
                os.close(fd)


class Followed(_Watched):
    """``detail_files`` of one root, rescanned only after watchdog reported a change."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._memory = os.path.join(os.path.realpath(self.root), layout.MEMORY)
        self._folders = {self._memory: layout.MEMORY, os.path.join(self._memory, "episodes"): layout.EPISODES}
        self._lock = threading.Lock()
        self._kept: dict = {}
        self._touched: set | None = None  # written in place since the last call; None: scan
        self._ino = os.stat(self._memory).st_ino
        self.scans = 0
        super().__init__([self._memory], recursive=True)

    def _key(self, path) -> str | None:
        """The key of a file of a followed folder ("" for the folder itself), else None."""
        path = os.fsdecode(path)
        if path in self._folders:
            return ""
        folder, name = os.path.split(path)
        sub = self._folders.get(folder)
        return f"{sub}/{name}" if sub and name.endswith(".md") and not name.startswith(".") else None

    def changed(self, event: FileSystemEvent) -> bool:
        """Note what must be scanned or stat-ed again; False for what cannot be a memory."""
        if event.is_directory and event.event_type == "modified":
            return False  # its files' own events say what changed
        kind = event.event_type
        keys = [""] if kind == "events_lost" else [self._key(event.src_path)]
        keys += [self._key(event.dest_path)] if kind == "moved" else []
        with self._lock:
            for i, key in enumerate(keys):
                gone = kind == "deleted" or (kind == "moved" and i == 0)
                if key is not None and (gone or self._touched is None or key not in self._kept):
                    self._touched = None
                elif key is not None and self._touched is not None:
                    self._touched.add(key)
        return any(k is not None for k in keys)

    def detail_files(self) -> dict | None:
        """key -> fingerprint as ``layout.detail_files`` gives it now; None when the folders
        cannot be followed."""
        if not self._observer.is_alive():  # closed, or its thread failed
            return None
        with suppress(BlockingIOError):
            while os.read(self._wake[0], 4096):
                pass
        try:
            ino = os.stat(self._memory).st_ino
        except OSError:
            return None
        if ino != self._ino:  # memory/ made again: followed anew, and scanned
            self._observer.unschedule_all()
            self._observer.schedule(self, self._memory, recursive=True)
            self._ino, self._touched = ino, None
        with self._lock:  # what changes from now on is for the next call
            kept, touched, self._touched = self._kept, self._touched, set()
        if touched:
            kept = dict(kept)
            for key in touched:  # written in place or renamed over: its new fingerprint
                try:
                    st = os.lstat(self.root / key)
                except OSError:
                    st = None
                if st is None or not stat.S_ISREG(st.st_mode):  # gone, or no longer a file
                    touched = None
                    break
                kept[key] = layout.fingerprint(st)
        if touched is None:
            kept = layout.scan_detail_files(self.root)
            self.scans += 1
        with self._lock:
            self._kept = kept
        return dict(kept)


class Changed(_Watched):
    """Whether anything in some folders (not their subfolders) changed since this was made."""

    def __init__(self, folders) -> None:
        self._seen = False
        super().__init__(folders)

    def changed(self, event: FileSystemEvent) -> bool:
        self._seen = self._seen or not (event.is_directory and event.event_type == "modified")
        return self._seen

    def __call__(self) -> bool:
        return self._seen


def changed(folders) -> Changed | None:
    """A ``Changed`` for these folders; None where they cannot be followed."""
    try:
        return Changed(folders)
    except (OSError, RuntimeError):
        return None


def follow(root) -> Followed | None:
    """Follow a root's details-layer files for ``layout.detail_files``; None where they cannot be followed."""
    try:
        followed = Followed(root)
    except (OSError, RuntimeError):
        return None
    if followed.detail_files() is None:
        followed.close()
        return None
    layout.lend_view(followed.root, followed.detail_files)
    return followed
