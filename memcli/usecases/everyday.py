"""The everyday commands: stats, search, and the near-duplicate check on remember. Each function
takes a store.Root and returns values (export and import are `transfer`'s, rename `rename`'s)."""

from __future__ import annotations

import re

from ..errors import FileError, MemcliError, UsageError
from ..model import Result
from ..store import layout


# ---------------------------------------------------------------- completion

def ids(root, prefix: str = "") -> list[str]:
    """The ids of the memories starting with prefix, archived ones after the others (one directory
    scan each: what the shell asks for on every Tab)."""
    out: dict = {}
    for sub in (layout.MEMORY, layout.ARCHIVE):
        for mid in layout.md_ids(root.path, sub):
            if mid.startswith(prefix) and layout.valid_id(mid):
                out.setdefault(mid, None)
    return list(out)


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


# ---------------------------------------------------------------- near-duplicates

def _bound(a: str, counts: dict, b: str) -> float:
    """The highest rapidfuzz ratio two texts can have: the characters they share, doubled, over
    their lengths (their longest common subsequence is no longer than that). counts: a's letters."""
    shared = sum(min(counts.get(c, 0), b.count(c)) for c in set(b))
    return 200 * shared / (len(a) + len(b))


def _counts(text: str) -> dict:
    return {c: text.count(c) for c in set(text)}


def _may_match(mine: str, counts, other: str) -> bool:
    """Whether the heartbeat's duplicate rule could hold: the lengths allow it, and a ratio of
    DUPLICATE_RATIO is within reach."""
    from ..similar import DUPLICATE_RATIO, lengths_allow

    return lengths_allow(len(mine), len(other)) and _bound(mine, counts, other) >= DUPLICATE_RATIO


SLUG_BOUND = 80  # file names (slugs of titles) this close are read and compared in full
MAX_READ = 5  # at most this many unindexed memories are read per check


def near_duplicates(root, title: str, summary: str = "", limit: int = 3, exclude: str | None = None) -> list[str]:
    """Ids of memories whose title and summary nearly equal these, by the heartbeat's duplicate rule.
    Compared: the indexed memories (from the index cache) and the few others whose file name, the
    slug of their title, is close to this title's slug. Nothing is parsed or loaded beyond that:
    rapidfuzz and the rule only when some memory could match."""
    from ..similar import compared, same_memory

    mine = compared(f"{title} {summary}")
    if len(mine) < 8:
        return []
    candidates: dict[str, str] = {}
    parts: dict[str, tuple[str, str]] = {}  # id -> (title, summary), for the same-title and summary rules
    for e, d in root.indexed():
        if e.id != exclude:
            parts[e.id] = (e.title, d.summary if d is not None else e.summary)
            candidates[e.id] = compared(" ".join(parts[e.id]))
    slug = layout.slugify(title)
    slug_counts = _counts(slug)
    close = []
    root.memory_dir()  # refuses a memory/ that leads outside the root
    head, tail = slug[:3], slug[-3:]
    for stem in layout.md_ids(root.path):
        # a near-duplicate title keeps the beginning or the end of its slug: the rest is not compared
        if not (stem.startswith(head) or stem.endswith(tail)):
            continue
        if (stem in candidates or stem == exclude
                or abs(len(stem) - len(slug)) * 2 > len(stem) + len(slug)):
            continue
        score = _bound(slug, slug_counts, stem)
        if score >= SLUG_BOUND:
            close.append((-score, stem))
    for _, stem in sorted(close)[:MAX_READ]:
        try:
            d = root.get(stem)
        except MemcliError:
            continue
        parts[stem] = (d.title, d.summary)
        candidates[stem] = compared(f"{d.title} {d.summary}")
    counts = _counts(mine)
    same = [mid for mid, text in candidates.items() if text == mine or same_memory(title, summary, *parts[mid])]
    maybe = {mid: text for mid, text in candidates.items() if mid not in same and _may_match(mine, counts, text)}
    if maybe:
        from ..similar import DUPLICATE_RATIO, identifiers

        ident = identifiers(mine)  # the rule holds only for texts with the same numbers: checked first
        maybe = {mid: text for mid, text in maybe.items() if identifiers(text) == ident}
    if maybe:
        from rapidfuzz import fuzz

        same += [mid for mid, text in maybe.items() if fuzz.ratio(mine, text, score_cutoff=DUPLICATE_RATIO)]
    return same[:limit]


def duplicate_warnings(root, detail) -> list[str]:
    """A warning naming the memories a memory just written nearly duplicates (none when it cannot tell)."""
    try:
        ids = near_duplicates(root, detail.title, detail.summary, exclude=detail.id)
    except MemcliError:
        return []
    if not ids:
        return []
    return [f"{detail.id} nearly duplicates {', '.join(ids)}: merge them (`memcli update {ids[0]} --append ...` "
            f"and `memcli forget {detail.id}`) or make them clearly different"]


# ---------------------------------------------------------------- stats

def stats(root) -> Result:
    """Counts by type, index fullness, expired / stale / archived counts, state and cache sizes."""
    from .maintain import audit

    details, problems = root.listing()
    by_type: dict[str, int] = {}
    for d in details:
        by_type[d.type] = by_type.get(d.type, 0) + 1
    report = audit(root)
    codes: dict[str, int] = {}
    for f in report.findings:
        codes[f.code] = codes.get(f.code, 0) + 1
    doc = root.read_index()
    max_lines = int(root.config["index.max_lines"])
    caches = layout.state_sizes(root.path)
    return Result({
        "memories": len(details),
        "by_type": dict(sorted(by_type.items())),
        "index": {"entries": len(doc.entries), "lines": doc.line_count(), "max_lines": max_lines - 1,
                  "free": max(0, max_lines - 1 - doc.line_count())},
        "expired": codes.get("expired", 0),
        "stale": codes.get("stale", 0),
        "archived": len(root.detail_files(archived=True)),
        "duplicates": codes.get("duplicate", 0),
        "problems": len(problems),
        "findings": report.counts(),
        "state_bytes": caches,
    })


# ---------------------------------------------------------------- search

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
    return Result({"pattern": pattern, "regex": regex, "matches": matches,
                   "files": len({m["path"] for m in matches}), "problems": problems})
