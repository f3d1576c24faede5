"""The details layer's files of a root, kept current by the kernel (Linux inotify) in a process that
lives long: `memcli serve`.

A cold recall stats every file of memory/ and memory/episodes/ (``layout.detail_files``) to see
what changed since the search cache was built: 10k stats cost more than the rest of the recall.
A server instead asks the kernel to queue an event for every change under those two folders, and
before each request reads the queue: an empty queue means nothing changed (an edit, a rename, a
chmod or a deletion, by memcli, an editor, git or any other process, is queued by the system
call that makes it, so an edit finished before a request is in the queue when the request
reads it), and the last scan stands; anything in it, an overflow or a folder replaced means a
new scan. Where inotify is missing (not Linux, no free watches) nothing is followed and every
call scans, as a cold process does.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import layout

# inotify(7)
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_DONT_FOLLOW, _IN_ONLYDIR = 0x400, 0x800, 0x02000000, 0x01000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
         | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_DONT_FOLLOW | _IN_ONLYDIR)
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
        self.scans = 0

    def _watch(self) -> bool:
        """Watch memory/ and memory/episodes/ (again: a folder made or replaced since gets a new
        watch); False when memory/ cannot be watched."""
        ok = True
        for sub in (layout.MEMORY, layout.EPISODES):
            folder = os.fsencode(str(self.root / sub))
            if self._libc.inotify_add_watch(self.fd, folder, _MASK) < 0 and sub == layout.MEMORY:
                ok = False
        return ok

    def _changed(self) -> bool:
        """Whether the kernel queued any event since the last call (the queue is emptied)."""
        changed = False
        while True:
            try:
                if not os.read(self.fd, 65536):
                    return changed
            except BlockingIOError:
                return changed
            changed = True

    def detail_files(self) -> dict | None:
        """key -> fingerprint as ``layout.detail_files`` gives it now; None when the folders
        cannot be followed (the caller scans)."""
        if self.fd < 0:
            return None
        if self._changed() or self._kept is None:
            self._kept = None
            if not self._watch():  # watches first: a change made during the scan is seen next time
                return None
            self._changed()
            self._kept = layout.scan_detail_files(self.root)
            self.scans += 1
        return dict(self._kept)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


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
