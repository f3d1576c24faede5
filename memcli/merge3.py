"""A line-based three-way merge (diff3) in pure Python.

``merge(base, ours, theirs)`` gives the merged text when the two sides changed different
lines of ``base``, and None when they touched the same place differently (a conflict): the
caller then keeps both versions for a person instead of choosing one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from difflib import SequenceMatcher

SMALL_GAP = 250_000  # a gap without anchors this small (lines × lines) is left to difflib


def matching_blocks(a: list, b: list) -> list[tuple[int, int, int]]:
    """The lines a and b have in common, as difflib's ``get_matching_blocks``: increasing
    (i, j, n) triples ending with (len(a), len(b), 0). Texts of up to about 500 lines go to
    difflib itself. Near-linear on long ones: the common start and end are taken first, then lines that occur once in each side anchor the rest
    (patience diff), recursively; a small gap between anchors is left to difflib; a long one with
    nothing to anchor it (the same lines over and over) is matched by its lines' occurrences
    when both sides hold them equally often, and is otherwise left unmatched."""
    if len(a) * len(b) <= SMALL_GAP:  # what memories usually are: difflib, as always
        return [tuple(x) for x in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]
    pairs: list = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        anchors = _anchors(a, alo, ahi, b, blo, bhi)
        if anchors:
            i0, j0 = alo, blo
            for i, j in anchors:
                pairs.append((i, j))
                todo.append((i0, i, j0, j))
                i0, j0 = i + 1, j + 1
            todo.append((i0, ahi, j0, bhi))
        elif (ahi - alo) * (bhi - blo) <= SMALL_GAP:
            sm = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            for i, j, n in sm.get_matching_blocks():
                pairs += [(alo + i + k, blo + j + k) for k in range(n)]
    pairs.sort()
    blocks: list = []
    for i, j in pairs:
        if blocks and blocks[-1][0] + blocks[-1][2] == i and blocks[-1][1] + blocks[-1][2] == j:
            blocks[-1][2] += 1
        else:
            blocks.append([i, j, 1])
    return [tuple(x) for x in blocks] + [(len(a), len(b), 0)]


def _anchors(a: list, alo: int, ahi: int, b: list, blo: int, bhi: int) -> list:
    """Matching (i, j) pairs to split a[alo:ahi] and b[blo:bhi] on, in order: the longest
    increasing run of lines unique to both; else, for a long gap, the lines both sides hold
    equally often and rarely, paired in order."""
    ca, cb = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    where = {b[j]: j for j in range(blo, bhi) if cb[b[j]] == 1}
    unique = [(i, where[a[i]]) for i in range(alo, ahi) if ca[a[i]] == 1 and a[i] in where]
    if unique:
        return _longest_increasing(unique)
    if (ahi - alo) * (bhi - blo) <= SMALL_GAP:
        return []
    rare = min((n for x, n in ca.items() if cb.get(x) == n), default=0)
    if not rare or rare > 64:
        return []
    seen: dict = {}
    inb: dict = {}
    for j in range(blo, bhi):
        if ca.get(b[j]) == rare and cb[b[j]] == rare:
            inb.setdefault(b[j], []).append(j)
    pairs = []
    for i in range(alo, ahi):
        js = inb.get(a[i])
        if js is not None:
            k = seen.get(a[i], 0)
            seen[a[i]] = k + 1
            pairs.append((i, js[k]))
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list) -> list:
    """The longest subsequence of (i, j) pairs (i increasing) whose j also increases (patience sort)."""
    tops: list = []  # the smallest j ending a run of each length
    ends: list = []  # the index in pairs of that run's last pair
    back = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
        back[n] = ends[k - 1] if k else -1
    out = []
    n = ends[-1] if ends else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    return out[::-1]


def _matches(base: list, other: list) -> dict:
    """base line index -> other line index, for the lines the two have in common (monotonic)."""
    out = {}
    for a, b, size in matching_blocks(base, other):
        for n in range(size):
            out[a + n] = b + n
    return out


def merge_lines(base: list, ours: list, theirs: list) -> list | None:
    """The merged lines, or None on a conflict."""
    mo, mt = _matches(base, ours), _matches(base, theirs)
    out: list = []
    i = j = k = 0
    while True:
        n = i
        while n < len(base) and not (n in mo and n in mt):
            n += 1
        end_o = mo[n] if n < len(base) else len(ours)
        end_t = mt[n] if n < len(base) else len(theirs)
        b, o, t = base[i:n], ours[j:end_o], theirs[k:end_t]
        if o == b:
            out += t
        elif t == b or o == t:
            out += o
        else:
            return None
        if n == len(base):
            return out
        out.append(base[n])
        i, j, k = n + 1, mo[n] + 1, mt[n] + 1


def merge(base: str, ours: str, theirs: str) -> str | None:
    """Three-way merge of texts, line by line; None when both sides changed the same lines."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    merged = merge_lines(base.splitlines(keepends=True), ours.splitlines(keepends=True),
                         theirs.splitlines(keepends=True))
    return None if merged is None else "".join(merged)
