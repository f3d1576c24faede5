"""The audit: read every file once (through the cache), then run every registered check."""

from __future__ import annotations

import time
from pathlib import Path

from ..dates import now_of
from ..errors import MemcliError, UnsafePathError
from ..store import layout, markers
from ..store.fs import inside
from ..store.index import IndexDoc
from . import checks
from .base import SEVERITIES, Memo, Report, State, read_file
from .cache import read_files


def audit(store, now=None, *, write_cache: bool = True) -> Report:
    """Every check, over every file of a store.Root, reading each changed file once (see cache.CACHE_NAME)."""
    when = now_of(now)
    root = store.path
    st = State(root=store, when=when, max_lines=int(store.config["index.max_lines"]))
    findings: list = []
    files = 0

    # memory/*.md are memories; archive/ is checked too; episodes are only scanned
    timed = checks.overriding("memo")
    records, st.fingerprints = read_files(store, write_cache)
    for rel, kind, _fp, (lite, body_hash, expires_line, found) in records:
        files += 1
        findings += [checks.Finding(c, sev, rel, line, msg, fix) for c, sev, line, msg, fix in found]
        mid = rel.rsplit("/", 1)[1][:-3]  # memory/<id>.md or memory/archive/<id>.md
        if kind == layout.ARCHIVED:
            st.archived.add(mid)
        if kind != layout.DETAIL:
            continue
        if lite is None:
            st.broken.add(mid)
            continue
        title, summary, tags, importance, pinned, created, updated, expires = lite
        d = Memo(mid, rel, title, summary, tuple(tags), importance, pinned, created, updated, expires)
        st.details[mid] = d
        st.hashes[mid] = body_hash
        for f in checks.memo_findings(d, expires_line, when, timed):
            findings.append(f)
            if f.code == "expired":
                st.expired[mid] = d.expires
    del records  # the memos share their strings; the rest can go

    index_path = store.index_path
    try:
        if index_path.is_symlink() and not inside(root, index_path):
            raise UnsafePathError("MEMORY.md leads outside the memory root (a symlink?); not read")
        if index_path.exists():
            text = read_file(index_path, layout.INDEX)
            files += 1
            st.index = IndexDoc.parse(text)
            findings += checks.file_findings(
                checks.FileFacts(layout.INDEX, "index", text, marker_size=markers.size_for(index_path))
            )
    except (MemcliError, OSError) as e:
        st.index_error = getattr(e, "message", None) or str(e)

    st.temps = temp_files(root)
    findings += checks.root_findings(st)
    unlisted = 0
    if st.index is not None:
        unlisted = sum(1 for mid in st.details if mid not in st.expired) - len(st.listed())
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.path, f.line or 0, f.code))
    return Report(str(root), when.isoformat().replace("+00:00", "Z"), findings, files, st, unlisted)


def temp_files(root: Path) -> list[tuple[str, float]]:
    """(relative path, age in seconds) of every temp file an atomic write left in the root."""
    wall = time.time()
    return [(rel, wall - st.st_mtime) for rel, st in layout.temp_files(root)]
