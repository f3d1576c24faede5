"""The on-disk layout of a memory root: its folder scans and the file fingerprint every cache
uses, with the names and path rules of ``memcli.paths`` (re-exported: store code reads one module)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from ..paths import (  # noqa: F401  (the names and path rules, re-exported)
    INDEX,
    CONFIG,
    MEMORY,
    ARCHIVE,
    EPISODES,
    INBOX,
    INBOX_ARCHIVE,
    STATE_DIR,
    TMP_PREFIX,
    SKIP_DIRS,
    GITIGNORE,
    GITATTRIBUTES,
    IGNORED,
    OWN,
    INDEX_CACHE,
    HEARTBEAT_CACHE,
    TRACE,
    RENAME_JOURNAL,
    SESSIONS,
    SCOPES,
    SEARCH,
    EDITS,
    DETAIL,
    ARCHIVED,
    EPISODE,
    PROPOSAL,
    OTHER,
    FOLDERS,
    slugify,
    check_id,
    valid_id,
    detail_rel,
    episode_rel,
    state_rel,
    id_of,
    is_episode,
    is_archived,
    kind_of,
    is_temp,
)
from ..roots import is_root  # noqa: F401  (re-exported)


def fingerprint(st: os.stat_result) -> str:
    """What says a file changed: mtime, ctime (an edit that put the old mtime back), size and inode."""
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}:{st.st_ino}"


def file_fingerprint(path, follow_symlinks: bool = True) -> str | None:
    """The fingerprint of the file at path; None when it cannot be stat-ed."""
    try:
        return fingerprint(os.stat(path, follow_symlinks=follow_symlinks))
    except OSError:
        return None


def work_tree(path: Path) -> tuple[Path, Path] | None:
    """(the work tree's top, its git folder: a `.git` folder, or the one a `.git` file names) of
    the repository holding path, or None outside one."""
    for d in (path, *path.parents):
        dot = d / ".git"
        if dot.is_dir():
            return d, dot
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            return (d, d / line[7:].strip()) if line.startswith("gitdir:") else None
    return None


def md_entries(folder: Path) -> list[os.DirEntry[str]]:
    """The os.DirEntry of every *.md of a folder that is not hidden, sorted by name."""
    try:
        it = os.scandir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with it:
        # A MEMORY.md under memory/ is another root's index (a nested root), never a memory.
        return sorted(
            (de for de in it if de.name.endswith(".md") and not de.name.startswith(".") and de.name != INDEX),
            key=lambda de: de.name,
        )


def md_files(root: Path, sub: str = MEMORY) -> list[Path]:
    """root/sub/*.md, sorted (not hidden; any name)."""
    return [Path(de.path) for de in md_entries(root / sub)]


_views: dict = {}  # root path -> a function giving detail_files without a scan (``store.watcher``)


def lend_view(root: Path, view) -> None:
    """Let ``detail_files`` of root ask view() first (None from it means "scan")."""
    _views[str(root)] = view


def detail_files(root: Path) -> dict:
    """key -> fingerprint of memory/<id>.md and memory/episodes/*.md (no symlinks, only ids)."""
    view = _views.get(str(root))
    kept = view() if view is not None else None
    return kept if kept is not None else scan_detail_files(root)


_PLAIN_MD = re.compile(r"[0-9a-z][0-9a-z_-]{0,79}\.md")  # a plain id's file: no further check


def scan_detail_files(root: Path) -> dict:
    """``detail_files`` read from the folders: one stat per file (the cost of a cold recall)."""
    current = {}
    plain = _PLAIN_MD.fullmatch
    for sub in (MEMORY, EPISODES):
        try:
            it = os.scandir(os.path.join(root, sub))
        except (FileNotFoundError, NotADirectoryError):
            continue
        prefix = sub + "/"
        with it:
            for de in it:
                name = de.name
                if not (plain(name) or (name.endswith(".md") and name != INDEX and valid_id(name[:-3]))):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):  # not a link, not a folder
                    current[prefix + name] = fingerprint(st)
    return current


def memory_files(root: Path) -> list[tuple[str, str, os.DirEntry[str]]]:
    """(relative path, kind, os.DirEntry) for every *.md of the memory folders, each sorted by name."""
    return [(f"{sub}/{de.name}", kind, de) for sub, kind in FOLDERS for de in md_entries(root / sub)]


def snapshot(root: Path) -> dict[str, str]:
    """relative path -> fingerprint of the regular files of memory/, archive/ and episodes/."""
    out = {}
    for rel, _, de in memory_files(root):
        with contextlib.suppress(OSError):
            if de.is_file():
                out[rel] = fingerprint(de.stat())
    return out


def md_ids(root: Path, sub: str = MEMORY) -> list[str]:
    """The names (without .md) of root/sub/*.md, sorted: what completion offers, without a stat."""
    return [de.name[:-3] for de in md_entries(root / sub)]


def temp_files(root: Path, prefix: str = TMP_PREFIX) -> list[tuple[str, os.stat_result]]:
    """(relative path, lstat) of every temp file an atomic write left in the root's folders, sorted."""
    out = []
    state = [f"{STATE_DIR}/{sub}" for sub in ("", SESSIONS, SCOPES, SEARCH)]
    for folder in (root / f for f in ("", MEMORY, ARCHIVE, EPISODES, INBOX, INBOX_ARCHIVE, *state)):
        try:
            it = os.scandir(folder)
        except OSError:
            continue
        with it:
            for de in it:
                if not de.name.startswith(prefix):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((Path(de.path).relative_to(root).as_posix(), st))
    return sorted(out, key=lambda x: x[0])


def state_names(root: Path, sub: str) -> list[str]:
    """The names (without .json) of the state files in .memcli/<sub>/, sorted; hidden ones left out."""
    try:
        names = os.listdir(root / STATE_DIR / sub)
    except OSError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))


def state_sizes(root: Path) -> dict[str, int]:
    """name -> bytes of each entry of .memcli/ (a folder: all its files); {} when it is a symlink."""
    state = root / STATE_DIR
    if not state.is_dir() or state.is_symlink():
        return {}
    out = {}
    for p in sorted(state.iterdir()):
        if p.is_file():
            out[p.name] = p.stat().st_size
            continue
        total = 0
        for dirpath, _, files in os.walk(p):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.stat(os.path.join(dirpath, f), follow_symlinks=False).st_size
        out[p.name] = total
    return out
