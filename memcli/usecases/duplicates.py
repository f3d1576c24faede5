"""The near-duplicate check `remember` runs after a write, by heartbeat's duplicate rule
(``memcli.near_duplicates``), without reading the whole root."""

from __future__ import annotations

from collections import Counter

from ..errors import MemcliError
from ..store import layout


def _bound(a: str, counts: Counter, b: str) -> float:
    """The highest rapidfuzz ratio two texts can have: the characters they share, doubled, over
    their lengths (their longest common subsequence is no longer than that). counts: a's letters."""
    return 200 * (counts & Counter(b)).total() / (len(a) + len(b))


SLUG_BOUND = 80  # file names (slugs of titles) this close are read and compared in full
MAX_READ = 5  # at most this many unindexed memories are read per check


def near_duplicates(root, title: str, summary: str = "", limit: int = 3, exclude: str | None = None) -> list[str]:
    """Ids of memories whose title and summary nearly equal these: the indexed ones (from the index
    cache) and the few whose file name, a slug of their title, is close to this title's slug."""
    from ..near_duplicates import DUPLICATE_RATIO, compared, identifiers, lengths_allow, same_memory

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
    slug_counts = Counter(slug)
    close = []
    root.memory_dir()  # refuses a memory/ that leads outside the root
    head, tail = slug[:3], slug[-3:]
    for stem in layout.md_ids(root.path):
        # a near-duplicate title keeps the beginning or the end of its slug: the rest is not compared
        if not (stem.startswith(head) or stem.endswith(tail)):
            continue
        if stem in candidates or stem == exclude or abs(len(stem) - len(slug)) * 2 > len(stem) + len(slug):
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
    counts = Counter(mine)
    same = [mid for mid, text in candidates.items() if text == mine or same_memory(title, summary, *parts[mid])]
    # the rule could hold: the lengths allow it, and a ratio of DUPLICATE_RATIO is within reach
    maybe = {
        mid: text
        for mid, text in candidates.items()
        if mid not in same and lengths_allow(len(mine), len(text)) and _bound(mine, counts, text) >= DUPLICATE_RATIO
    }
    if maybe:
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
    return [
        f"{detail.id} nearly duplicates {', '.join(ids)}: merge them (`memcli update {ids[0]} --append ...` "
        f"and `memcli forget {detail.id}`) or make them clearly different"
    ]
