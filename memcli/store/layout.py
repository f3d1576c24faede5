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
import re
import unicodedata
from pathlib import Path

from ..errors import UnsafePathError, UsageError

INDEX = "MEMORY.md"
CONFIG = "memcli.yaml"
MEMORY = "memory"
ARCHIVE = "memory/archive"
EPISODES = "memory/episodes"
INBOX = "memory/inbox"  # proposals waiting for a person (never indexed, never recalled unless asked)
INBOX_ARCHIVE = "memory/inbox/archive"  # proposals accepted or rejected, kept as the record
STATE_DIR = ".memcli"  # local state and caches, never committed
STATE = STATE_DIR
TMP_PREFIX = ".memcli-tmp-"  # what an atomic write stages its temp files as
SKIP_DIRS = (STATE_DIR, ".git", ".hg", ".svn")
GITIGNORE, GITATTRIBUTES = ".gitignore", ".gitattributes"
# what a root's .gitignore holds: the local state folder and temp files left by a crashed writer
# (each line with the pattern that finds it, however it was written)
IGNORED = ((f"{STATE_DIR}/", r"^/?\.memcli/?\s*$"), (f"{TMP_PREFIX}*", r"^/?(\*\*/)?\.memcli-tmp-\*\s*$"))
# memcli's own files in a root: all that sync scans, stages and commits (never .memcli/)
OWN = (INDEX, MEMORY, CONFIG, GITIGNORE, GITATTRIBUTES)

# files under .memcli/: one name each
LOCK = "lock"
LOCAL_CONFIG = f"{STATE_DIR}/config.yaml"  # per root, the user's own, never committed
INDEX_CACHE = "index-cache.json"
HEARTBEAT_CACHE = "heartbeat-cache.json"
TRACE = "trace.jsonl"
RENAME_JOURNAL = "rename.json"
SESSIONS, SCOPES, SEARCH, SEMANTIC, EDITS = "sessions", "scopes", "search", "semantic", "edits"

# kind of a file of the root, by folder: what checks apply and what a change means
DETAIL, ARCHIVED, EPISODE, PROPOSAL, OTHER = "detail", "archive", "episode", "proposal", "other"
FOLDERS = ((MEMORY, DETAIL), (ARCHIVE, ARCHIVED), (EPISODES, EPISODE), (INBOX, PROPOSAL), (INBOX_ARCHIVE, PROPOSAL))


# ---------------------------------------------------------------- ids: the names of memory files

MAX_ID = 80
_ID_RE = re.compile(r"[^\W_][\w.-]*")
_SLUG_DROP = re.compile(r"[^\w]+")
_PLAIN_ID = re.compile(r"[0-9a-z][0-9a-z_-]{0,79}")


def slugify(title: str) -> str:
    """An id from a title: Unicode letters and digits, '-' between words, <= 80 chars; a title
    without any is `memory-` and a short hash of the title."""
    text = unicodedata.normalize("NFKC", title).lower()
    slug = _SLUG_DROP.sub("-", text.replace("_", "-")).strip("-")
    if len(slug) > MAX_ID:
        cut = slug[:MAX_ID]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[MAX_ID // 2:] else cut
        slug = slug.strip("-")
    if not slug:  # no letter or digit: a short hash keeps two such titles apart
        import hashlib

        slug = "memory-" + hashlib.sha1(unicodedata.normalize("NFC", title).encode("utf-8")).hexdigest()[:8]
    return slug


def check_id(memory_id: str) -> str:
    """Refuse any id that could name a file outside memory/."""
    if not isinstance(memory_id, str) or not memory_id:
        raise UsageError("an id must not be empty")
    bad = None
    if any(unicodedata.category(c)[0] == "C" for c in memory_id):
        bad = "a control character"
    elif "/" in memory_id or "\\" in memory_id:
        bad = "a path separator"
    elif ".." in memory_id:
        bad = "'..'"
    elif memory_id.startswith("."):
        bad = "a leading '.'"
    elif ":" in memory_id:
        bad = "':'"
    elif len(memory_id) > MAX_ID:
        bad = f"more than {MAX_ID} characters"
    elif not _ID_RE.fullmatch(memory_id):
        bad = "characters other than letters, digits, '-', '_' and '.'"
    if bad:
        raise UnsafePathError(f"invalid id {memory_id!r}: it contains {bad}")
    return memory_id


def valid_id(memory_id: str) -> bool:
    if _PLAIN_ID.fullmatch(memory_id):  # the common case, decided without the full check
        return True
    try:
        check_id(memory_id)
    except (UnsafePathError, UsageError):
        return False
    return True


# ---------------------------------------------------------------- the root's folders and files

def is_root(path: Path) -> bool:
    """A folder holding MEMORY.md or memcli.yaml."""
    return (path / INDEX).exists() or (path / CONFIG).exists()


def detail_rel(memory_id: str, archived: bool = False) -> str:
    return f"{ARCHIVE if archived else MEMORY}/{memory_id}.md"


def episode_rel(day: str) -> str:
    return f"{EPISODES}/{day}.md"


def state_rel(*parts: str) -> str:
    """.memcli/<parts>: how a state file is named in messages."""
    return "/".join((STATE_DIR, *parts))


def id_of(rel: str, archived: bool = True) -> str | None:
    """The memory id of memory/<id>.md (or memory/archive/<id>.md, unless archived=False); None for
    any other path."""
    folder, _, name = rel.rpartition("/")
    if (folder == MEMORY or (archived and folder == ARCHIVE)) and name.endswith(".md") and len(name) > 3 \
            and "\\" not in name:
        return name[:-3]
    return None


_REF_FOLDERS = (MEMORY, ARCHIVE, INBOX, INBOX_ARCHIVE)


def memory_ref(ref: str) -> str:
    """The id a reference names: an id as it is, or the path recall, list and the index print
    (memory/<id>.md, memory/archive/<id>.md, a proposal's memory/inbox/<id>.md, each also with a
    leading ./). Anything else comes back unchanged, for ``check_id`` to judge."""
    if not isinstance(ref, str) or "/" not in ref or not ref.endswith(".md"):
        return ref
    folder, _, name = ref.removeprefix("./").rpartition("/")
    return name[:-3] if folder in _REF_FOLDERS and len(name) > 3 else ref


def is_episode(rel: str) -> bool:
    return rel.startswith(EPISODES + "/")


def is_archived(rel: str) -> bool:
    return rel.startswith(ARCHIVE + "/")


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


def md_entries(folder: Path) -> list[os.DirEntry[str]]:
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


_views: dict = {}  # root path -> a function giving detail_files without a scan (``store.follow``), or None


def lend_view(root: Path, view) -> None:
    """Let ``detail_files`` of root ask view() first: a process that follows the root's folders
    (``store.follow``) answers without stat-ing every file; view() returning None means "scan"."""
    _views[str(root)] = view


def detail_files(root: Path) -> dict:
    """key -> fingerprint for every file recall's details layer reads: memory/<id>.md and
    memory/episodes/*.md; symlinks and names that are not ids are left out."""
    if _views:
        view = _views.get(str(root))
        if view is not None:
            kept = view()
            if kept is not None:
                return kept
    return scan_detail_files(root)


_PLAIN_MD = re.compile(r"[0-9a-z][0-9a-z_-]{0,79}\.md").fullmatch  # a plain id's file: no further check


def scan_detail_files(root: Path) -> dict:
    """``detail_files`` read from the folders: one stat per file (the cost of a details recall
    on a large store, so the loop does no more than it must)."""
    current = {}
    for sub in (MEMORY, EPISODES):
        try:
            it = os.scandir(os.path.join(root, sub))
        except (FileNotFoundError, NotADirectoryError):
            continue
        prefix = sub + "/"
        with it:
            for de in it:
                name = de.name
                if not (_PLAIN_MD(name) or (name.endswith(".md") and name != INDEX and valid_id(name[:-3]))):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_mode & 0o170000 == 0o100000:  # a regular file (not a link, not a folder)
                    current[prefix + name] = fingerprint(st)
    return current


def memory_files(root: Path) -> list[tuple[str, str, os.DirEntry[str]]]:
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


def md_ids(root: Path, sub: str = MEMORY) -> list[str]:
    """The names (without .md) of root/sub/*.md, sorted: what completion offers, without a stat."""
    return [de.name[:-3] for de in md_entries(root / sub)]


def temp_dirs(root: Path) -> list[Path]:
    """Every folder an atomic write stages its temp files in."""
    state = root / STATE_DIR
    return [root, root / MEMORY, root / ARCHIVE, root / EPISODES, root / INBOX, root / INBOX_ARCHIVE, state,
            state / SESSIONS, state / SCOPES, state / SEARCH]


def is_temp(name: str) -> bool:
    return name.startswith(TMP_PREFIX)


def temp_files(root: Path, prefix: str = TMP_PREFIX) -> list[tuple[str, os.stat_result]]:
    """(relative path, lstat) of every regular file an atomic write staged in the root (names
    starting with prefix), sorted."""
    import stat

    out = []
    for folder in temp_dirs(root):
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
    """The names (without .json) of the state files in .memcli/<sub>/ (sessions, scopes), sorted;
    hidden files left out."""
    try:
        names = os.listdir(root / STATE_DIR / sub)
    except OSError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))


def state_sizes(root: Path) -> dict[str, int]:
    """name -> bytes of each entry of .memcli/ (a folder: all its files); {} when .memcli/ is a
    symlink or missing."""
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
                try:
                    total += os.stat(os.path.join(dirpath, f), follow_symlinks=False).st_size
                except OSError:
                    pass
        out[p.name] = total
    return out
