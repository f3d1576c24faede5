"""The on-disk layout of a memory root: its paths, its directory scans and the file fingerprint.

    MEMORY.md            the index            memcli.yaml         the configuration
    memory/<id>.md       detail files         memory/archive/     expired memories, kept
    memory/episodes/     the episode log      .memcli/            state and caches (not committed)

Every module that needs a path, a scan of the memory folders or a fingerprint takes it from
here; the caches (index cache, search cache, heartbeat cache, the watcher's snapshot) all use
``fingerprint`` to decide that a file changed.
"""

from __future__ import annotations

import os
from pathlib import Path

from .fs import STATE_DIR, TMP_PREFIX, valid_id

INDEX = "MEMORY.md"
CONFIG = "memcli.yaml"
MEMORY = "memory"
ARCHIVE = "memory/archive"
EPISODES = "memory/episodes"
INBOX = "memory/inbox"  # proposals waiting for a person (never indexed, never recalled unless asked)
INBOX_ARCHIVE = "memory/inbox/archive"  # proposals accepted or rejected, kept as the record
STATE = STATE_DIR
SKIP_DIRS = (STATE_DIR, ".git", ".hg", ".svn")

# kind of a file of the root, by folder: what checks apply and what a change means
DETAIL, ARCHIVED, EPISODE, PROPOSAL, OTHER = "detail", "archive", "episode", "proposal", "other"
FOLDERS = ((MEMORY, DETAIL), (ARCHIVE, ARCHIVED), (EPISODES, EPISODE), (INBOX, PROPOSAL), (INBOX_ARCHIVE, PROPOSAL))


def is_root(path: Path) -> bool:
    """A folder holding MEMORY.md or memcli.yaml."""
    return (path / INDEX).exists() or (path / CONFIG).exists()


def detail_rel(memory_id: str, archived: bool = False) -> str:
    return f"{ARCHIVE if archived else MEMORY}/{memory_id}.md"


def episode_rel(day: str) -> str:
    return f"{EPISODES}/{day}.md"


def fingerprint(st: os.stat_result) -> str:
    """What says a file changed: mtime, ctime, size and inode. ctime catches a same-size edit
    whose writer put the old mtime back (ctime cannot be set by a writer)."""
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}:{st.st_ino}"


def file_fingerprint(path, follow_symlinks: bool = True) -> str | None:
    """The fingerprint of the file at path; None when it cannot be stat-ed."""
    try:
        return fingerprint(os.stat(path, follow_symlinks=follow_symlinks))
    except OSError:
        return None


def kind_of(rel: str) -> str | None:
    """"index", "config", DETAIL, ARCHIVED, EPISODE, PROPOSAL, or OTHER (any other Markdown file under
    memory/) for a root-relative path; None when no memcli check reads it (a hidden file, a
    temp file, anything outside memory/)."""
    if rel == INDEX:
        return "index"
    if rel == CONFIG:
        return "config"
    parts = rel.split("/")
    if (len(parts) < 2 or parts[0] != MEMORY or not rel.endswith(".md") or parts[-1] == INDEX
            or any(p.startswith(".") for p in parts)):
        return None
    folder = "/".join(parts[:-1])
    for sub, kind in FOLDERS:
        if folder == sub:
            return kind
    return OTHER


def md_entries(folder: Path) -> list:
    """The os.DirEntry of every *.md of a folder that is not hidden, sorted by name."""
    try:
        it = os.scandir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with it:
        # A MEMORY.md under memory/ is another root's index (a nested root), never a memory.
        return sorted((de for de in it if de.name.endswith(".md") and not de.name.startswith(".")
                       and de.name != INDEX), key=lambda de: de.name)


def md_files(root: Path, sub: str = MEMORY) -> list[Path]:
    """root/sub/*.md, sorted (not hidden; any name)."""
    return [Path(de.path) for de in md_entries(root / sub)]


def detail_files(root: Path) -> dict:
    """key -> fingerprint for every file recall's details layer reads: memory/<id>.md and
    memory/episodes/*.md; symlinks and names that are not ids are left out."""
    current = {}
    for sub in (MEMORY, EPISODES):
        try:
            it = os.scandir(root / sub)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with it:
            for de in it:
                name = de.name
                if not name.endswith(".md") or name == INDEX or de.is_symlink() or not valid_id(name[:-3]):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not de.is_file(follow_symlinks=False):
                    continue
                current[f"{sub}/{name}"] = fingerprint(st)
    return current


def memory_files(root: Path) -> list[tuple[str, str, object]]:
    """(relative path, kind, os.DirEntry) for every *.md of memory/, memory/archive/,
    memory/episodes/ and the inbox, in that order, each folder sorted by name."""
    return [(f"{sub}/{de.name}", kind, de) for sub, kind in FOLDERS for de in md_entries(root / sub)]


def snapshot(root: Path) -> dict[str, str]:
    """relative path -> fingerprint of the regular files of memory/, archive/ and episodes/."""
    out = {}
    for rel, _, de in memory_files(root):
        try:
            if de.is_file():
                out[rel] = fingerprint(de.stat())
        except OSError:
            continue
    return out


def temp_dirs(root: Path) -> list[Path]:
    """Every folder an atomic write stages its temp files in."""
    state = root / STATE_DIR
    return [root, root / MEMORY, root / ARCHIVE, root / EPISODES, root / INBOX, root / INBOX_ARCHIVE, state, state / "sessions", state / "scopes",
            state / "search"]


def is_temp(name: str) -> bool:
    return name.startswith(TMP_PREFIX)
