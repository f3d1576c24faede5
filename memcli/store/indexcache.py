"""The indexed memories, read cheaply: a JSON cache of the detail files that MEMORY.md lists,
checked against each file's stat on every call, so hot commands need no YAML parsing."""

from __future__ import annotations

import contextlib
import json
import os

from ..errors import FileError, UnsafePathError, UsageError
from ..model import DETAIL_KEYS, Detail
from .fs import atomic_write, state_dir
from .layout import INDEX_CACHE, STATE_DIR, detail_rel, file_fingerprint, fingerprint, valid_id
from .outcomes import LAST, SUCCESSES, USES

_BODY = 65_536
_FIELDS = (*DETAIL_KEYS[1:], "extra")  # a cached record holds a Detail's fields but its id, body and path
_EXTRA = (USES, SUCCESSES, LAST)  # the other frontmatter keys kept: outcome counters, which recall weighs


_read: tuple | None = None  # (path, fingerprint, contents) of the cache file read last: read only
_made: dict = {}  # (id, fingerprint) -> (the cache's record, the Detail made from it): a long-lived process


def indexed(root, entries: list) -> list:
    """(entry, Detail or None) for every entry (of MEMORY.md) with an id, in order; root: a store.Root."""
    global _read
    listed = [(e, mid) for e in entries if (mid := e.id)]  # an entry's id is parsed from its link once
    cache_path = root.path / STATE_DIR / INDEX_CACHE
    try:
        state_dir(root.path)  # a .memcli/ that leads outside the root is not read
        seen = file_fingerprint(cache_path, follow_symlinks=False)
        if seen is not None and _read is not None and _read[:2] == (cache_path, seen):
            cache = _read[2]  # the file this process read last, unchanged (a long-lived process)
        else:
            # O_NOFOLLOW: a cache file that is a symlink is not followed out of the root
            fd = os.open(cache_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, encoding="utf-8") as f:
                cache = json.load(f)
            if not isinstance(cache, dict):
                cache = {}
            _read = (cache_path, seen, cache)
    except (OSError, ValueError, RecursionError, FileError, UnsafePathError):
        cache = {}
    out: list = []
    fresh: dict = {}
    dirty = False
    try:
        base = str(root.folder())
    except (UnsafePathError, UsageError):
        base = None
    for e, mid in listed:
        # a memory file that is no symlink is stat-ed once, without a Path; a link goes through the
        # root's rule (followed only when it stays inside the root)
        if not valid_id(mid):
            out.append((e, None))
            continue
        try:
            st = os.lstat(f"{base}/{mid}.md") if base is not None else None
        except OSError:
            st = None
        if base is not None and (st is None or st.st_mode & 0o170000 != 0o120000):
            path, fp = None, None if st is None else fingerprint(st)
        else:
            try:
                path = root.detail_path(mid)
            except (UnsafePathError, UsageError):
                out.append((e, None))
                continue
            fp = file_fingerprint(path)
        hit = cache.get(mid)
        if fp is not None and isinstance(hit, dict) and hit.get("fp") == fp:
            made = _made.get((mid, fp))
            d = made[1] if made is not None and made[0] is hit else None
            if d is None:
                try:
                    fields: dict = {k: (tuple(hit[k]) if k in ("tags", "aliases") else hit[k]) for k in _FIELDS}
                    d = Detail(id=mid, path=detail_rel(mid), body=hit.get("body", ""), **fields)
                except (KeyError, TypeError):
                    d = None
                else:
                    if len(_made) >= 4096:
                        _made.clear()
                    _made[(mid, fp)] = (hit, d)
            if d is not None:
                fresh[mid] = hit
                out.append((e, d))
                continue
        d = None
        if fp is not None:
            try:
                d = root.load(path if path is not None else root.detail_path(mid))
            except (FileError, UnsafePathError, UsageError):
                d = None
        if d is not None:
            fresh[mid] = {k: getattr(d, k) for k in _FIELDS}
            fresh[mid].update(fp=fp, body=d.body[:_BODY], extra={k: d.extra[k] for k in _EXTRA if k in d.extra})
        dirty = True
        out.append((e, d))
    if dirty or set(fresh) != set(cache):
        with contextlib.suppress(OSError, FileError, UnsafePathError):
            state_dir(root.path)
            atomic_write(cache_path, json.dumps(fresh, ensure_ascii=False), durable=False)
    return out


def cached_tags(root) -> list:
    """The tags the index cache holds (for completion: read, never written)."""
    try:
        with open(root / STATE_DIR / INDEX_CACHE, encoding="utf-8") as f:
            cache = json.load(f)
    except (OSError, ValueError, RecursionError):
        return []
    out = []
    for hit in cache.values() if isinstance(cache, dict) else ():
        out += [t for t in (hit.get("tags", ()) if isinstance(hit, dict) else ()) if isinstance(t, str)]
    return out
