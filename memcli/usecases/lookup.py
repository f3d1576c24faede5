"""Looking through a root: the ids and tags a shell completes, the counts of `stats`, and `search`
(lines of the memory files, like grep). Each function takes a store.Root and returns values."""

from __future__ import annotations

import re
from collections import Counter

from ..errors import FileError, MemcliError, UsageError
from ..model import Result
from ..store import layout


def ids(root, prefix: str = "") -> list[str]:
    """The ids of the memories starting with prefix, archived ones after the others (one directory
    scan each: what the shell asks for on every Tab)."""
    found = (mid for sub in (layout.MEMORY, layout.ARCHIVE) for mid in layout.md_ids(root.path, sub))
    return list(dict.fromkeys(mid for mid in found if mid.startswith(prefix) and layout.valid_id(mid)))


def tags(root, prefix: str = "") -> list[str]:
    """The tags of the indexed memories starting with prefix (a leading # ignored): their MEMORY.md
    lines and the index cache, nothing parsed or written."""
    from ..store.indexcache import cached_tags

    found = set(cached_tags(root.path))
    try:
        found.update(t for e in root.read_index().entries for t in e.tags)
    except MemcliError:
        pass
    want = prefix.lstrip("#")
    return sorted(t for t in found if t.startswith(want))


def stats(root) -> Result:
    """Counts by type, index fullness, expired / stale / archived counts, state and cache sizes."""
    from .maintain import audit

    details, problems = root.listing()
    report = audit(root)
    codes = Counter(f.code for f in report.findings)
    doc = root.read_index()
    max_lines = int(root.config["index.max_lines"])
    caches = layout.state_sizes(root.path)
    return Result(
        {
            "memories": len(details),
            "by_type": dict(sorted(Counter(d.type for d in details).items())),
            "index": {
                "entries": len(doc.entries),
                "lines": doc.line_count(),
                "max_lines": max_lines - 1,
                "free": max(0, max_lines - 1 - doc.line_count()),
            },
            "expired": codes.get("expired", 0),
            "stale": codes.get("stale", 0),
            "archived": len(root.detail_files(archived=True)),
            "duplicates": codes.get("duplicate", 0),
            "problems": len(problems),
            "findings": report.counts(),
            "state_bytes": caches,
        }
    )


def search(root, pattern: str, regex: bool = False, ignore_case: bool | None = None, archived: bool = True) -> Result:
    """Every line of every memory file matching pattern: literal (or a Python regex), smart case
    (case-insensitive unless the pattern has a capital letter)."""
    if not pattern:
        raise UsageError("the pattern is empty")
    if ignore_case is None:
        ignore_case = pattern == pattern.lower()
    flags = re.IGNORECASE if ignore_case else 0
    try:
        rx = re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error as e:
        raise UsageError(f"not a valid regular expression: {e}") from None
    from ..store.fs import followable, read_text

    matches = []
    problems = []
    paths = root.detail_files() + (root.detail_files(archived=True) if archived else [])
    for p in paths:
        rel = root.rel(p)
        if not followable(root.path, p):
            problems.append(f"{rel}: leads outside the memory root (a symlink?); not read")
            continue
        try:
            text = read_text(p, rel)
        except FileError as e:
            problems.append(e.message)
            continue
        if not rx.search(text):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = rx.search(line)
            if m:
                matches.append({"path": rel, "id": p.stem, "line": n, "column": m.start() + 1, "text": line})
    return Result(
        {
            "pattern": pattern,
            "regex": regex,
            "matches": matches,
            "files": len({m["path"] for m in matches}),
            "problems": problems,
        }
    )
