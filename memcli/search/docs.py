"""What the ranker reads of a root: a SearchDoc for each detail file and each episode log (without
the user turns that only ask: a question is never evidence), and the files there are (with their
fingerprints), for the details layer, the search cache, the semantic step and `memcli watch`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import FileError, UnsafePathError, UsageError
from ..store import details as dfile
from ..store import layout
from ..store.fs import decode, inside, read_text


def detail_doc(
    root: Path,
    key: str,
    limit: int | None = None,
    conflicted: Callable[[str, str, Path], bool] | None = None,
    broken: Callable[[str, Exception], None] | None = None,
    read: dict | None = None,
):
    """A SearchDoc for one file of the root (key: its relative path), or None when it cannot be
    read or ``conflicted(key, text, path)`` says it holds git conflict markers. With a limit, only
    that many bytes of the file are read (whole lines): enough for a snippet. ``broken(key,
    error)`` hears of a file that cannot be read as text or whose frontmatter cannot be parsed;
    ``read``, when given, receives key -> the memory's Detail (its frontmatter whole)."""
    from .ranker import SearchDoc

    path = root / key
    try:
        if not inside(root, path):
            return None
        text = read_text(path, key) if limit is None else _head(path, key, limit)
        if conflicted is not None and conflicted(key, text, path):
            return None
        if layout.is_episode(key):
            return SearchDoc(
                key=key, title=f"episodes {path.stem}", body=without_questions(text), importance=0.3, updated=path.stem
            )
        d = dfile.parse(text, path.stem, key)
        if read is not None:
            read[key] = d
    except (FileError, UsageError) as e:
        if broken is not None:
            broken(key, e)
        return None
    except (UnsafePathError, OSError):
        return None
    return SearchDoc.of(d, key)


def without_questions(text: str) -> str:
    """An episode file without the user turns that only ask: a question is never evidence."""
    from .evidence import only_asks

    return without_user_turns(text, only_asks)


def without_user_turns(text: str, drop) -> str:
    """The episode grammar's (``store.episodes``), imported when an episode is read: a turn that
    does not touch one costs no import of it."""
    from ..store.episodes import without_user_turns as cut

    return cut(text, drop)


def _head(path, key: str, limit: int) -> str:
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1] or data[:limit]
        while data and data[-1] & 0xC0 == 0x80:  # no line end: never cut a character in two
            data = data[:-1]
        if data and data[-1] >= 0xC0:
            data = data[:-1]
    try:
        return decode(data, key, limit)
    except UsageError as e:
        raise FileError(e.message) from None


def detail_files(root) -> dict:
    """key -> fingerprint for every file of the details layer of a store.Root (the layout's scan,
    after the check that memory/ stays inside the root)."""
    root.memory_dir()
    return layout.detail_files(root.path)


def memory_files(root) -> dict:
    """key -> fingerprint of the memories alone (detail files; not the episode log)."""
    return {k: fp for k, fp in detail_files(root).items() if not layout.is_episode(k)}
