"""Locks, atomic writes and safe path joining: the ground every write stands on."""

from __future__ import annotations

import contextlib
import tempfile
import os
import time
from pathlib import Path

from ..errors import FileError, LockTimeout, UnsafePathError, UsageError
from .layout import STATE_DIR, TMP_PREFIX, check_id
from .markers import guard as refuse_conflicted

MAX_FILE_BYTES = 1_000_000
MAX_READ = 10 * MAX_FILE_BYTES  # the reader refuses a larger file (a detail file's limit)


def inside(root: Path, path: Path) -> bool:
    """True when path, with every symlink resolved, stays inside root."""
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def followable(root: Path, path) -> bool:
    """The one symlink rule for every reader: a file under the root is read through a symbolic
    link only when the link resolves inside the root. (Writers never write through a link: an
    atomic write replaces the link itself, and `replace_each`, which rewrites many files at once,
    refuses a link outright.)"""
    return not os.path.islink(path) or inside(root, Path(path))


def safe_join(root: Path, *parts: str) -> Path:
    """root/parts, refusing anything that resolves outside the root (symlinks included)."""
    path = root.joinpath(*parts)
    if not inside(root, path):
        raise UnsafePathError(f"refusing {'/'.join(parts)}: it leads outside the memory root")
    return path


def read_bytes(path, name: str, limit: int = MAX_READ) -> bytes:
    """At most limit + 1 bytes of a file (one more than a reader accepts, so it can say the file is
    too large without reading it whole); FileError naming it when it is missing, a folder or
    unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read(limit + 1)
    except FileNotFoundError:
        raise FileError(f"{name}: no such file")
    except IsADirectoryError:
        raise FileError(f"{name}: is a folder, not a file")
    except OSError as e:
        raise FileError(f"{name}: cannot read it ({e.strerror or e})")


def read_text(path: Path, what: str | None = None, limit: int = MAX_READ) -> str:
    """Read a UTF-8 text file (BOM tolerated); a clear error for binary, non-UTF-8 or huge files."""
    name = what or str(path)
    data = read_bytes(path, name, limit)
    try:
        return decode(data, name, limit)
    except UsageError as e:
        # A stored file that is not text is a broken file (exit 3), not bad input.
        raise FileError(e.message) from None


def read_exact(path: Path, rel: str) -> str:
    """A file's exact text (no newline or BOM normalising), for comparing and merging."""
    data = read_bytes(path, rel)
    if len(data) > MAX_READ:
        raise FileError(f"{rel}: larger than {MAX_READ // 1_000_000} MB; edit it with another tool")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileError(f"{rel}: not UTF-8 text (byte {e.start}); edit it with another tool")


def decode(data: bytes, name: str, limit: int = MAX_FILE_BYTES) -> str:
    if len(data) > limit:
        raise UsageError(f"{name}: larger than {limit // 1_000_000} MB; memcli keeps text memories")
    if b"\x00" in data:
        raise UsageError(f"{name}: binary data (NUL bytes); memcli keeps text memories")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{name}: not UTF-8 text (bad byte at offset {e.start})")
    return text[1:] if text.startswith("\ufeff") else text


def atomic_write(path: Path, text: str, *, newline: str = "\n", durable: bool = True) -> None:
    """Write text to a unique temp file in the same folder, fsync, then rename over path.
    ``durable=False``: a cache's file, not fsynced (after a crash it may be old, or unreadable
    as a whole, never half old and half new: its reader must take it as missing)."""
    if durable:
        atomic_write_many([(path, text, newline)])
        return
    refuse_conflicted([path])
    _replace(_stage(path, text, newline, fsync=False), path)


def atomic_write_many(files) -> None:
    """Write several files as one step: (path, text[, newline]) each.

    Every temp file is written and fsynced before the first rename, so a full disk or
    an unwritable folder changes none of the files. If a rename fails part way, the
    files already renamed are put back (a new file is removed, an old one restored from
    a hard link taken before the first rename). A crash never leaves a torn file."""
    files = list(files)
    refuse_conflicted(item[0] for item in files)
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str] = {}
    done: list[Path] = []
    try:
        for item in files:
            path, text = item[0], item[1]
            newline = item[2] if len(item) > 2 else "\n"
            staged.append((_stage(path, text, newline), path))
        if len(staged) > 1:
            for _, path in staged:
                if os.path.lexists(path):
                    b = _backup(path)
                    if b is not None:
                        backups[path] = b
        for tmp, path in staged:
            _replace(tmp, path)
            done.append(path)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for path in reversed(done):
            with contextlib.suppress(OSError):
                if path in backups:
                    os.replace(backups[path], path)
                else:
                    os.unlink(path)
        raise
    finally:
        for b in backups.values():
            with contextlib.suppress(OSError):
                os.unlink(b)


def _backup(path: Path) -> str | None:
    """A hard link to path under a temp name (its bytes, without a copy); None where the file
    system has no hard links, and the write goes on without a way back."""
    import secrets

    name = str(path.parent / f"{TMP_PREFIX}{secrets.token_hex(8)}.bak")
    try:
        os.link(path, name, follow_symlinks=False)
    except (OSError, NotImplementedError):
        return None
    return name


BATCH = 500  # files staged before one flush of the file system (replace_each)


def replace_each(files, tag: str = "") -> list:
    """Write many files that do not need to change together: (path, text[, newline]) each.

    Each is staged next to its path (temp names start with TMP_PREFIX + tag, so a caller that
    keeps a journal can remove what a crash left), BATCH at a time; one flush of the file system
    per batch instead of one fsync per file, then each is renamed over its path. A crash leaves
    every file old or new, never torn. A path that is a symbolic link is refused. Returns the
    paths written."""
    files = list(files)
    refuse_conflicted(item[0] for item in files)
    for item in files:
        if os.path.islink(item[0]):
            raise UnsafePathError(f"refusing to write {Path(item[0]).name}: it is a symbolic link")
    done: list = []
    for i in range(0, len(files), BATCH):
        chunk = files[i : i + BATCH]
        staged: list = []
        try:
            for item in chunk:
                path, text = item[0], item[1]
                staged.append(
                    (_stage(path, text, item[2] if len(item) > 2 else "\n", fsync=False, prefix=TMP_PREFIX + tag), path)
                )
            _flush([t for t, _ in staged])
            for tmp, path in staged:
                _replace(tmp, path)
                done.append(path)
        except BaseException:
            for tmp, path in staged:
                if path not in done:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
            raise
    _flush_dirs({Path(p).parent for p in done})
    return done


def _flush(paths: list) -> None:
    """Make the staged files durable: one syncfs of their file system where there is one (Linux),
    else os.sync, else an fsync per file."""
    if not paths:
        return
    syncfs = _syncfs()
    if syncfs is not None:
        fd = os.open(paths[0], os.O_RDONLY)
        try:
            if syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    if hasattr(os, "sync"):
        os.sync()
        return
    for p in paths:  # pragma: no cover - Windows
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_SYNCFS: list = []


def _syncfs():
    if not _SYNCFS:
        fn = None
        if hasattr(os, "sync") and os.uname().sysname == "Linux":
            try:
                import ctypes

                fn = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
            except (OSError, AttributeError, ImportError):
                fn = None
        _SYNCFS.append(fn)
    return _SYNCFS[0]


def _flush_dirs(folders) -> None:
    """fsync the folders whose entries were replaced (the renames themselves)."""
    for d in folders:
        try:
            fd = os.open(d, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _stage(path: Path, text: str, newline: str, fsync: bool = True, prefix: str = TMP_PREFIX) -> str:
    """A fsynced temp file next to path, with path's mode; returns its name."""
    data = text.replace("\n", newline).encode("utf-8") if newline != "\n" else text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(".tmp", prefix, path.parent)  # this user's alone (0600), O_EXCL
    except OSError as e:
        raise FileError(f"cannot write {path.name}: {e.strerror or e}; the previous file is intact") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise FileError(f"cannot write {path.name}: {e.strerror or e}; the previous file is intact") from None
        raise
    return tmp


def _replace(tmp: str, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except OSError as e:
        raise FileError(f"cannot write {path.name}: {e.strerror or e}; the previous file is intact") from None


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return _UMASK


def state_dir(root: Path, *sub: str) -> Path:
    """root/.memcli/<sub> (created); refused when .memcli/ is a symbolic link or sub leads outside
    the root. (A .memcli/ that is no link is inside the root: no path is resolved then, and a sub
    folder is resolved only when one of its parts is a link; this runs several times a recall.)"""
    d = root / STATE_DIR
    if d.is_symlink():
        raise UnsafePathError(f"{STATE_DIR}/ leads outside the memory root")
    path = d.joinpath(*sub)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FileError(f"cannot create {STATE_DIR}/{'/'.join(sub)}: {e.strerror or e}") from None
    linked = False
    part = d
    for name in sub:
        part = part / name
        linked = linked or part.is_symlink() or name in ("..", "")
    if linked and not inside(root, path):
        raise UnsafePathError(f"{STATE_DIR}/{'/'.join(sub)} leads outside the memory root (a symlink?)")
    return path


def state_file(root: Path, folder: str, name: str) -> Path:
    """.memcli/<folder>/<name>.json: the name is checked like an id, the file never leads out."""
    check_id(name)
    path = state_dir(root, folder) / f"{name}.json"
    if path.is_symlink() and not inside(root, path):
        raise UnsafePathError(f"{STATE_DIR}/{folder}/{name}.json leads outside the memory root (a symlink?); not used")
    return path


TRACKED_FIX = "stop tracking local state: `git rm -r --cached .memcli`, then commit"


def came_with_git(path: Path) -> bool:
    """Whether git tracks this file under a root's .memcli/ (``store.committed_state``): never read."""
    from .committed_state import came_with_git as tracked

    state = next((p for p in path.parents if p.name == STATE_DIR), None)
    return state is not None and tracked(state.parent, path)


def read_state(path: Path, what: str, hint: str, check) -> dict | None:
    """A state file's JSON, checked by `check` (raising ValueError); None when there is none.
    A broken file is a one-line FileError naming it and how to get past it."""
    if not path.exists():
        return None
    rel = f"{STATE_DIR}/{path.parent.name}/{path.name}"
    if came_with_git(path):
        raise FileError(
            f"{rel}: came with the repository (git tracks it), so it is someone else's: not read; {TRACKED_FIX}"
        )
    import json

    try:
        data = json.loads(read_text(path, rel))
        check(data)
    except (ValueError, RecursionError) as e:
        why = str(e) if isinstance(e, ValueError) else "nested too deeply"
        raise FileError(f"{rel}: broken {what} file ({why}); {hint}") from None
    return data


def set_aside(path: Path) -> str:
    """Move a state file that cannot be read out of the way, never deleting it:
    .memcli/<folder>/<name>.json -> .memcli/<folder>/<name>.json.broken-<time>. Returns the new
    path relative to the root."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    dest = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    try:
        os.replace(path, dest)
    except OSError as e:
        raise FileError(f"cannot move {path.name} aside: {e.strerror or e}") from None
    return f"{STATE_DIR}/{path.parent.name}/{dest.name}"


def dump_state(data: dict) -> str:
    import json

    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


@contextlib.contextmanager
def root_lock(root: Path, timeout: float):
    """One exclusive lock per root for every write. The kernel drops it when a process dies."""
    path = state_dir(root) / "lock"
    try:
        # O_NOFOLLOW: a lock file that is a symlink must not create or open a file elsewhere.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise FileError(f"cannot open the lock file {path}: {e.strerror or e}") from None
    try:
        _acquire(fd, timeout, path)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, timeout: float, path: Path) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        deadline = time.monotonic() + timeout
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # stubs: Windows only
                return
            except OSError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(f"another memcli process holds the lock ({path}); gave up after {timeout:g}s")
                time.sleep(0.02)
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(
                    f"another memcli process holds the lock ({path}); gave up after {timeout:g}s"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _release(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]  # stubs: Windows only
