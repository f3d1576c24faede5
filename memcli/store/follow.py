"""The details layer's files of a root, kept current by the kernel (Linux inotify) in a process that
lives long: `memcli serve`.

A cold recall stats every file of memory/ and memory/episodes/ (``layout.detail_files``) to see
what changed since the search cache was built: 10k stats cost more than the rest of the recall.
A server instead asks the kernel to queue an event for every change under those two folders, and
before each request reads the queue: an empty queue means nothing changed (an edit, a rename, a
chmod or a deletion, by memcli, an editor, git or any other process, is queued by the system
call that makes it, so an edit finished before a request is in the queue when the request
reads it), and the last scan stands. A file written or touched in place is stat-ed again; a
file made, renamed or deleted, an overflow of the queue or a folder replaced means a new scan
(so the files keep the order a scan gives them). Where inotify is missing (not Linux, no free
watches) nothing is followed and every call scans, as a cold process does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import layout

# inotify(7)
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_DONT_FOLLOW, _IN_ONLYDIR = 0x400, 0x800, 0x02000000, 0x01000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_DONT_FOLLOW
    | _IN_ONLYDIR
)
_IN_ISDIR = 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000


class Followed:
    """``detail_files`` of one root, rescanned only after the kernel reported a change."""

    def __init__(self, root: Path):
        import ctypes

        self.root = Path(root)
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._kept: dict | None = None
        self._folders: dict = {}  # watch descriptor -> the folder it watches (memory, memory/episodes)
        self.scans = 0

    def _watch(self) -> bool:
        """Watch memory/ and memory/episodes/ (again: a folder made or replaced since gets a new
        watch); False when memory/ cannot be watched."""
        ok = True
        for sub in (layout.MEMORY, layout.EPISODES):
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(str(self.root / sub)), _MASK)
            if wd >= 0:
                self._folders[wd] = sub
            elif sub == layout.MEMORY:
                ok = False
        return ok

    def _read(self) -> bytes:
        """What the kernel queued since the last read (the queue is emptied)."""
        data = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return data
            if not chunk:
                return data
            data += chunk

    def _events(self) -> set | None:
        """The keys of the followed files written, touched or renamed over since the last call
        (the queue is emptied); None when only a scan can say what is there now: a file made or
        deleted, a folder changed, the queue overflowed. A name that cannot be a memory's (a
        temp file, a hidden one) changes nothing."""
        data = self._read()
        touched: set = set()
        at = 0
        while at + 16 <= len(data):
            wd = int.from_bytes(data[at : at + 4], sys.byteorder, signed=True)
            mask = int.from_bytes(data[at + 4 : at + 8], sys.byteorder)
            size = int.from_bytes(data[at + 12 : at + 16], sys.byteorder)
            name = os.fsdecode(data[at + 16 : at + 16 + size].rstrip(b"\0"))
            at += 16 + size
            folder = self._folders.get(wd)
            if folder is None or not name or mask & _IN_ISDIR:
                return None  # the queue overflowed, a folder changed
            if not name.endswith(".md") or name.startswith("."):
                continue
            key = f"{folder}/{name}"
            if self._kept is None or key not in self._kept or mask & (_IN_DELETE | _IN_MOVED_FROM):
                return None
            touched.add(key)
        return touched

    def detail_files(self) -> dict | None:
        """key -> fingerprint as ``layout.detail_files`` gives it now; None when the folders
        cannot be followed (the caller scans)."""
        if self.fd < 0:
            return None
        touched = None if self._kept is None else self._events()
        if touched is None:
            self._kept = None
            if not self._watch():  # watches first: a change made during the scan is seen next time
                return None
            self._read()
            self._kept = layout.scan_detail_files(self.root)
            self.scans += 1
        else:
            for key in touched:  # written in place or renamed over: its new fingerprint
                try:
                    st = os.lstat(self.root / key)
                except OSError:
                    st = None
                if self._kept is None or st is None or st.st_mode & 0o170000 != 0o100000:  # gone, or no longer a file
                    self._kept = None
                    return self.detail_files()
                self._kept[key] = layout.fingerprint(st)
        return dict(self._kept or {})

    def fileno(self) -> int:
        """The kernel's queue of changes: readable once something changed since the last
        ``detail_files`` (what ``select`` waits on)."""
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Changed:
    """Whether anything under some folders (not their subfolders) was written, made, renamed or
    deleted since this object was made: one read of the kernel's queue, no stat."""

    def __init__(self, folders) -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        for folder in folders:
            if libc.inotify_add_watch(self.fd, os.fsencode(str(folder)), _MASK) < 0:
                self.close()
                raise OSError(ctypes.get_errno(), f"cannot watch {folder}")
        self._seen = False

    def __call__(self) -> bool:
        if not self._seen:
            try:
                self._seen = bool(os.read(self.fd, 65536))
            except BlockingIOError:
                pass
        return self._seen

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def changed(folders) -> Changed | None:
    """A ``Changed`` for these folders; None where inotify is missing (the caller checks another way)."""
    try:
        return Changed(folders)
    except (OSError, AttributeError):
        return None


def follow(root) -> Followed | None:
    """Follow a root's details-layer files in this process (``layout.detail_files`` then asks the
    kernel instead of stat-ing every file); None where inotify is missing."""
    try:
        followed = Followed(root)
    except (OSError, AttributeError):
        return None
    if followed.detail_files() is None:
        followed.close()
        return None
    layout.lend_view(followed.root, followed.detail_files)
    return followed
