"""The names of a memory root's files and the rules on them that need no file: ids, the relative
paths of details, episodes and state, and what kind of file a path names. Pure string rules, below
every layer; ``store.layout`` adds what reads the folders and re-exports these names."""

from __future__ import annotations

import re
import unicodedata

from .errors import UnsafePathError, UsageError

from .roots import CONFIG, INDEX  # noqa: F401  (the two files that make a folder a root)

MEMORY = "memory"
ARCHIVE = "memory/archive"
EPISODES = "memory/episodes"
INBOX = "memory/inbox"  # proposals waiting for a person (never indexed, never recalled unless asked)
INBOX_ARCHIVE = "memory/inbox/archive"  # proposals accepted or rejected, kept as the record
STATE_DIR = ".memcli"  # local state and caches, never committed
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


MAX_ID = 80
_ID_RE = re.compile(r"[^\W_][\w.-]*")
_SLUG_DROP = re.compile(r"[^\w]+")
_PLAIN_ID = re.compile(r"[0-9a-z][0-9a-z_-]{0,79}")


def slugify(title: str) -> str:
    """An id from a title: letters and digits, '-' between words, <= 80 chars (else `memory-` and a hash)."""
    text = unicodedata.normalize("NFKC", title).lower()
    slug = _SLUG_DROP.sub("-", text.replace("_", "-")).strip("-")
    if len(slug) > MAX_ID:
        cut = slug[:MAX_ID]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[MAX_ID // 2 :] else cut
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


def detail_rel(memory_id: str, archived: bool = False) -> str:
    return f"{ARCHIVE if archived else MEMORY}/{memory_id}.md"


def episode_rel(day: str) -> str:
    return f"{EPISODES}/{day}.md"


def state_rel(*parts: str) -> str:
    """.memcli/<parts>: how a state file is named in messages."""
    return "/".join((STATE_DIR, *parts))


def id_of(rel: str, archived: bool = True) -> str | None:
    """The id of memory/<id>.md (or memory/archive/<id>.md, unless archived=False); None otherwise."""
    folder, _, name = rel.rpartition("/")
    if (
        (folder == MEMORY or (archived and folder == ARCHIVE))
        and name.endswith(".md")
        and len(name) > 3
        and "\\" not in name
    ):
        return name[:-3]
    return None


_REF_FOLDERS = (MEMORY, ARCHIVE, INBOX, INBOX_ARCHIVE)


def memory_ref(ref: str) -> str:
    """The id a reference names: an id, or a path recall, list and the index print (memory/<id>.md,
    archive/, inbox/, with or without ./); anything else as it is, for ``check_id`` to judge."""
    if not isinstance(ref, str) or "/" not in ref or not ref.endswith(".md"):
        return ref
    folder, _, name = ref.removeprefix("./").rpartition("/")
    return name[:-3] if folder in _REF_FOLDERS and len(name) > 3 else ref


def is_episode(rel: str) -> bool:
    return rel.startswith(EPISODES + "/")


def is_archived(rel: str) -> bool:
    return rel.startswith(ARCHIVE + "/")


def kind_of(rel: str) -> str | None:
    """What a root-relative path is: "index", "config", a folder's kind, OTHER (any other Markdown file
    under memory/); None when no check reads it (hidden, temp, outside memory/)."""
    if rel == INDEX:
        return "index"
    if rel == CONFIG:
        return "config"
    parts = rel.split("/")
    if (
        len(parts) < 2
        or parts[0] != MEMORY
        or not rel.endswith(".md")
        or parts[-1] == INDEX
        or any(p.startswith(".") for p in parts)
    ):
        return None
    return dict(FOLDERS).get("/".join(parts[:-1]), OTHER)


def is_temp(name: str) -> bool:
    return name.startswith(TMP_PREFIX)
