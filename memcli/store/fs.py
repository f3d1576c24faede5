"""Locks, atomic writes and safe path joining: the ground every write stands on."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
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
    """The one symlink rule for every reader: a link is followed only when it resolves inside the
    root (an atomic write replaces the link itself; `replace_each` refuses one)."""
    return not os.path.islink(path) or inside(root, Path(path))


def safe_join(root: Path, *parts: str) -> Path:
    """root/parts, refusing anything that resolves outside the root (symlinks included)."""
    path = root.joinpath(*parts)
    if not inside(root, path):
        raise UnsafePathError(f"refusing {'/'.join(parts)}: it leads outside the memory root")
    return path


def read_bytes(path, name: str, limit: int = MAX_READ) -> bytes:
    """At most limit + 1 bytes of a file (enough to say it is too large); FileError when unreadable."""
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
    ``durable=False``: a cache's file, not fsynced (after a crash its reader may find it missing)."""
    if durable:
        atomic_write_many([(path, text, newline)])
        return
    refuse_conflicted([path])
    _replace(_stage(path, text, newline, fsync=False), path)


def atomic_write_many(files) -> None:
    """Write several files as one step: (path, text[, newline]) each. Every temp file is fsynced
    before the first rename; a rename that fails part way puts back the files already renamed
    (from hard links taken before), so none is torn or half of the set."""
    files = _written(files)
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str] = {}
    done: list[Path] = []
    try:
        for path, text, newline in files:
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


def _written(files) -> list:
    """(path, text, newline) of each (path, text[, newline]), refusing a conflicted Markdown file."""
    files = [(item[0], item[1], item[2] if len(item) > 2 else "\n") for item in files]
    refuse_conflicted(path for path, _, _ in files)
    return files


def _backup(path: Path) -> str | None:
    """A hard link to path under a temp name; None where the file system has none."""
    import secrets

    name = str(path.parent / f"{TMP_PREFIX}{secrets.token_hex(8)}.bak")
    try:
        os.link(path, name, follow_symlinks=False)
    except (OSError, NotImplementedError):
        return None
    return name


BATCH = 500  # files staged before one flush of the file system (replace_each)


def replace_each(files, tag: str = "") -> list:
    """Write many files that need not change together ((path, text[, newline]) each) with one flush
    of the file system per BATCH, each old or new, never torn (temp names start with TMP_PREFIX +
    tag, for a caller's journal); a symlink is refused. Returns the paths written."""
    files = _written(files)
    for path, _, _ in files:
        if os.path.islink(path):
            raise UnsafePathError(f"refusing to write {Path(path).name}: it is a symbolic link")
    done: list = []
    for i in range(0, len(files), BATCH):
        chunk = files[i : i + BATCH]
        staged: list = []
        try:
            for path, text, newline in chunk:
                staged.append((_stage(path, text, newline, fsync=False, prefix=TMP_PREFIX + tag), path))
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
    """Make the staged files durable: syncfs (Linux), else os.sync, else an fsync per file."""
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
        _fsync(p)


@functools.cache
def _syncfs():
    if sys.platform != "linux":
        return None
    try:
        import ctypes

        return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    except (OSError, ImportError):
        return None


def _flush_dirs(folders) -> None:
    """fsync the folders whose entries were replaced (the renames themselves)."""
    for d in folders:
        with contextlib.suppress(OSError):
            _fsync(d)


def _fsync(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stage(path: Path, text: str, newline: str, fsync: bool = True, prefix: str = TMP_PREFIX) -> str:
    """A fsynced temp file next to path, with path's mode; returns its name."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(".tmp", prefix, path.parent)  # this user's alone (0600), O_EXCL
        with os.fdopen(fd, "wb") as f:
            f.write(text.replace("\n", newline).encode("utf-8"))
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError):
            raise _cannot_write(path, e) from None
        raise
    return tmp


def _replace(tmp: str, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except OSError as e:
        raise _cannot_write(path, e) from None


def _cannot_write(path: Path, e: OSError) -> FileError:
    return FileError(f"cannot write {path.name}: {e.strerror or e}; the previous file is intact")


@functools.cache
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def state_dir(root: Path, *sub: str) -> Path:
    """root/.memcli/<sub> (created); refused when .memcli/ is a symlink or sub leads outside the
    root (resolved only when a part is a link: this runs several times a recall)."""
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
    """A state file's JSON, checked by `check`; None when there is none, FileError (with hint) when broken."""
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
    """Move a broken state file aside to <name>.json.broken-<time> (never deleted); its new relative path."""
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
    fd = lock_file(path, timeout, f"another memcli process holds the lock ({path})")
    try:
        yield
    finally:
        unlock_file(fd)


def lock_file(path: Path, timeout: float, busy: str) -> int:
    """A descriptor of the file at path, locked exclusively within timeout seconds, else LockTimeout."""
    try:
        # O_NOFOLLOW: a lock file that is a symlink must not create or open a file elsewhere.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise FileError(f"cannot open the lock file {path}: {e.strerror or e}") from None
    deadline, delay = time.monotonic() + timeout, 0.002
    try:
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{busy}; gave up after {timeout:g}s")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # stubs: Windows only
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def unlock_file(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]  # stubs: Windows only
    finally:
        os.close(fd)
