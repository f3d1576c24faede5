"""The everyday commands' library: stats, search, rename, list formats and the near-duplicate
check on remember; export and import live in `transfer`. Each function takes a Memory and
returns values; writes take the root lock."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import FileError, MemcliError, UsageError
from .transfer import export, import_, read_source  # noqa: F401  (the package's API)

LIST_COLUMNS = ("id", "title", "type", "importance", "flags", "tags")
LIST_FORMATS = ("json", "tsv", "md")


# ---------------------------------------------------------------- list

def listing_data(listing) -> dict:
    """A Listing as the `list --json` data."""
    rows = [{"id": d.id, "title": d.title, "summary": d.summary, "type": d.type, "importance": d.importance,
             "pinned": d.pinned, "tags": list(d.tags), "updated": d.updated, "path": d.path,
             "indexed": d.id in listing.indexed and "/archive/" not in d.path,
             "archived": "/archive/" in d.path} for d in listing.details]
    return {"memories": rows, "problems": [str(p) for p in listing.problems]}


def json_text(value, indent=None) -> str:
    """JSON with no raw control character: json escapes C0 itself; DEL and C1 become \\u escapes."""
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}",
                  json.dumps(value, ensure_ascii=False, indent=indent))


def _cells(row: dict) -> list[str]:
    flags = ",".join(f for f, on in (("pinned", row["pinned"]), ("indexed", row["indexed"]),
                                      ("archived", row["archived"])) if on) or "-"
    return [row["id"], row["title"], row["type"], f"{row['importance']:g}", flags,
            " ".join("#" + t for t in row["tags"])]


def format_listing(rows: list, fmt: str, header: bool = True) -> str:
    """rows as json (one array), tsv (a header line, then one row a line) or md (a table)."""
    if fmt == "json":
        return json_text(rows, indent=1) + "\n"
    if fmt == "tsv":
        clean = [[re.sub(r"[\t\r\n]+", " ", c) for c in _cells(r)] for r in rows]
        lines = (["\t".join(LIST_COLUMNS)] if header else []) + ["\t".join(c) for c in clean]
        return "".join(ln + "\n" for ln in lines)
    if fmt == "md":
        def cell(text: str) -> str:
            return text.replace("\\", "\\\\").replace("|", "\\|")
        lines = ["| " + " | ".join(LIST_COLUMNS) + " |", "|" + "---|" * len(LIST_COLUMNS)]
        lines += ["| " + " | ".join(cell(c) for c in _cells(r)) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    raise UsageError(f"--format must be one of {', '.join(LIST_FORMATS)}, got {fmt!r}")


# ---------------------------------------------------------------- near-duplicates

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text.lower()).strip()


def _bound(a: str, counts: dict, b: str) -> float:
    """The highest rapidfuzz ratio two texts can have: the characters they share, doubled, over
    their lengths (their longest common subsequence is no longer than that). counts: a's letters."""
    shared = sum(min(counts.get(c, 0), b.count(c)) for c in set(b))
    return 200 * shared / (len(a) + len(b))


def _counts(text: str) -> dict:
    return {c: text.count(c) for c in set(text)}


def _may_match(mine: str, counts, other: str) -> bool:
    """Whether the heartbeat's duplicate rule could hold: both at least 12 characters, lengths
    within about 80% of each other, and a ratio of DUPLICATE_RATIO (90) within reach."""
    la, lb = len(mine), len(other)
    if min(la, lb) < 12 or min(la, lb) * 5 < max(la, lb) * 4:
        return False
    return _bound(mine, counts, other) >= 90


SLUG_BOUND = 80  # file names (slugs of titles) this close are read and compared in full
MAX_READ = 5  # at most this many unindexed memories are read per check


def near_duplicates(mem, title: str, summary: str = "", limit: int = 3, exclude: str | None = None) -> list[str]:
    """Ids of memories whose title and summary nearly equal these, by the heartbeat's duplicate rule.
    Compared: the indexed memories (from the index cache) and the few others whose file name, the
    slug of their title, is close to this title's slug. Nothing is parsed or loaded beyond that:
    rapidfuzz and the rule only when some memory could match."""
    from ..store.fs import slugify
    from ..store.indexcache import indexed

    from ..similar import same_memory

    mine = _norm(f"{title} {summary}")
    if len(mine) < 8:
        return []
    candidates: dict[str, str] = {}
    parts: dict[str, tuple[str, str]] = {}  # id -> (title, summary), for the same-title and summary rules
    for e, d in indexed(mem):
        if e.id != exclude:
            parts[e.id] = (e.title, d.summary if d is not None else e.summary)
            candidates[e.id] = _norm(" ".join(parts[e.id]))
    slug = slugify(title)
    slug_counts = _counts(slug)
    close = []
    try:
        names = os.listdir(mem.memory_dir())
    except OSError:
        names = []
    head, tail = slug[:3], slug[-3:] + ".md"
    for name in names:
        # a near-duplicate title keeps the beginning or the end of its slug: the rest is not compared
        if not (name.startswith(head) or name.endswith(tail)):
            continue
        stem = name[:-3]
        if (not name.endswith(".md") or stem in candidates or stem == exclude
                or abs(len(stem) - len(slug)) * 2 > len(stem) + len(slug)):
            continue
        score = _bound(slug, slug_counts, stem)
        if score >= SLUG_BOUND:
            close.append((-score, stem))
    for _, stem in sorted(close)[:MAX_READ]:
        try:
            d = mem.get(stem)
        except MemcliError:
            continue
        parts[stem] = (d.title, d.summary)
        candidates[stem] = _norm(f"{d.title} {d.summary}")
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


def duplicate_warnings(mem, detail) -> list[str]:
    """A warning naming the memories a memory just written nearly duplicates (none when it cannot tell)."""
    try:
        ids = near_duplicates(mem, detail.title, detail.summary, exclude=detail.id)
    except MemcliError:
        return []
    if not ids:
        return []
    return [f"{detail.id} nearly duplicates {', '.join(ids)}: merge them (`memcli update {ids[0]} --append ...` "
            f"and `memcli forget {detail.id} --yes`) or make them clearly different"]


# ---------------------------------------------------------------- stats

def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(dirpath, f), follow_symlinks=False).st_size
            except OSError:
                pass
    return total


def stats(mem) -> dict:
    """Counts by type, index fullness, expired / stale / archived counts, state and cache sizes."""
    listing = mem.list()
    by_type: dict[str, int] = {}
    for d in listing.details:
        by_type[d.type] = by_type.get(d.type, 0) + 1
    report = mem.audit()
    codes: dict[str, int] = {}
    for f in report.findings:
        codes[f.code] = codes.get(f.code, 0) + 1
    doc = mem.read_index()
    max_lines = int(mem.config["index.max_lines"])
    state = mem.root / ".memcli"
    caches = {}
    if state.is_dir() and not state.is_symlink():
        for p in sorted(state.iterdir()):
            caches[p.name] = _size(p)
    return {
        "memories": len(listing.details),
        "by_type": dict(sorted(by_type.items())),
        "index": {"entries": len(doc.entries), "lines": doc.line_count(), "max_lines": max_lines - 1,
                  "free": max(0, max_lines - 1 - doc.line_count())},
        "expired": codes.get("expired", 0),
        "stale": codes.get("stale", 0),
        "archived": len(mem.detail_files(archived=True)),
        "duplicates": codes.get("duplicate", 0),
        "problems": len(listing.problems),
        "findings": report.counts(),
        "state_bytes": caches,
    }


# ---------------------------------------------------------------- search

def search(mem, pattern: str, regex: bool = False, ignore_case: bool | None = None, archived: bool = True) -> dict:
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
    paths = mem.detail_files() + (mem.detail_files(archived=True) if archived else [])
    for p in paths:
        rel = mem.rel(p)
        if not followable(mem.root, p):
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
    return {"pattern": pattern, "regex": regex, "matches": matches, "files": len({m["path"] for m in matches}),
            "problems": problems}


# ---------------------------------------------------------------- rename

from ..usecases.rename import rename  # noqa: E402,F401  (resumable, journalled)
