"""The one line-based three-way merge (diff3), for `edit` and the git drivers: regions of lines
taken as they are and conflicts, where both sides changed the same place differently. With
``keep_both`` (the git drivers) a place where neither side deleted or changed a base line, only
added or moved lines, keeps every line once, in an order that does not depend on which side is
ours. Symmetric: swapping ours and theirs swaps only the sides of a conflict."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from difflib import SequenceMatcher

SMALL_GAP = 250_000  # a gap without anchors this small (lines × lines) is left to difflib


def matching_blocks(a: list, b: list) -> list[tuple[int, int, int]]:
    """The lines a and b have in common, as difflib's ``get_matching_blocks``. Near-linear on long
    texts: the common start and end, then lines unique to each side anchor the rest (patience
    diff), recursively; a small gap between anchors is left to difflib."""
    if len(a) * len(b) <= SMALL_GAP:  # what memories usually are: difflib, as always
        return [(x.a, x.b, x.size) for x in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]
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
    """(i, j) pairs to split the gap on: the longest increasing run of lines unique to both; else, in a
    long gap, the lines both sides hold equally (and rarely) often, paired in order."""
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


def _sync_regions(base: list, a: list, b: list) -> list:
    """(base start, base end, a start, a end, b start, b end) of each stretch all three share."""
    ia = ib = 0
    am = matching_blocks(base, a)
    bm = matching_blocks(base, b)
    out = []
    while ia < len(am) and ib < len(bm):
        abase, amatch, alen = am[ia]
        bbase, bmatch, blen = bm[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            asub, bsub = amatch + (lo - abase), bmatch + (lo - bbase)
            out.append((lo, hi, asub, asub + hi - lo, bsub, bsub + hi - lo))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    out.append((len(base), len(base), len(a), len(a), len(b), len(b)))
    return out


def merge3(base: list, a: list, b: list, *, keep_both: bool = False) -> list:
    """Regions of a three-way merge of lists of lines: ("ok", lines) or
    ("conflict", base, head, a, b, tail), head and tail being what both sides hold alike around
    the lines they disagree on."""
    out: list = []
    iz = ia = ib = 0
    every: tuple = ()  # the lines of each side, as sets, made at the first overlap
    for zs, ze, as_, ae, bs, be in _sync_regions(base, a, b):
        ra, rb, rz = a[ia:as_], b[ib:bs], base[iz:zs]
        if ra or rb:
            if ra == rb:
                out.append(("ok", ra))
            elif ra == rz:
                out.append(("ok", rb))
            elif rb == rz:
                out.append(("ok", ra))
            else:
                if keep_both:
                    every = every or (set(a), set(b))
                out.append(_overlap(rz, ra, rb, every))
        if ze > zs:
            out.append(("ok", base[zs:ze]))
        iz, ia, ib = ze, ae, be
    return out


def _overlap(base: list, a: list, b: list, every: tuple) -> tuple:
    """Both sides changed base: a conflict, or with ``every`` (keep_both) both sides' lines when
    neither removed a base line."""
    # trim what both sides hold at the start and at the end (git's "zealous" merge)
    pre = 0
    while pre < min(len(a), len(b)) and a[pre] == b[pre]:
        pre += 1
    post = 0
    while post < min(len(a), len(b)) - pre and a[len(a) - 1 - post] == b[len(b) - 1 - post]:
        post += 1
    head, tail = a[:pre], a[len(a) - post :] if post else []
    ma, mb = a[pre : len(a) - post], b[pre : len(b) - post]
    if every and set(base) <= every[0] and set(base) <= every[1]:
        # Neither side deleted or changed a line here, only added lines or moved them: keep every
        # line once (a line one side moved away stays where that side put it), in the order of the
        # smaller of "ours, then theirs' new lines" and "theirs, then ours' new lines".
        all_a, all_b = every
        in_a, in_b = set(ma), set(mb)
        moved = {x for x in base if (x not in in_a and x in all_a) or (x not in in_b and x in all_b)}
        keep = _union(
            [x for x in ma if x not in moved or not x.strip()], [x for x in mb if x not in moved or not x.strip()]
        )
        return ("ok", head + keep + tail)
    return ("conflict", base, head, ma, mb, tail)


def _union(a: list, b: list) -> list:
    in_a, in_b = set(a), set(b)
    one = a + [x for x in b if x not in in_a or not x.strip()]
    two = b + [x for x in a if x not in in_b or not x.strip()]
    return min(one, two)


def merged_lines(regions: list, marker: int = 7, labels=("ours", "theirs")) -> tuple[list, int]:
    """The lines, with standard markers around each conflict; (lines, number of conflicts)."""
    out, n = [], 0
    for r in regions:
        if r[0] == "ok":
            out += r[1]
            continue
        _, _, head, ma, mb, tail = r
        n += 1
        out += head + ["<" * marker + f" {labels[0]}"] + ma + ["=" * marker] + mb + [">" * marker + f" {labels[1]}"]
        out += tail
    return out, n


def union_lines(regions: list) -> list:
    """The lines, each conflict kept as both sides (sorted, so symmetric): for text that must not conflict."""
    out = []
    for r in regions:
        if r[0] == "ok":
            out += r[1]
        else:
            _, _, head, ma, mb, tail = r
            out += head + _union(ma, mb) + tail
    return out


def merge_lines(base: list, ours: list, theirs: list, *, keep_both: bool = False) -> list | None:
    """The merged lines, or None on a conflict."""
    regions = merge3(base, ours, theirs, keep_both=keep_both)
    if any(r[0] == "conflict" for r in regions):
        return None
    return [x for r in regions for x in r[1]]


def merge(base: str, ours: str, theirs: str, *, keep_both: bool = False) -> str | None:
    """Three-way merge of texts, line by line (line ends kept); None on a conflict."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    merged = merge_lines(
        base.splitlines(keepends=True),
        ours.splitlines(keepends=True),
        theirs.splitlines(keepends=True),
        keep_both=keep_both,
    )
    return None if merged is None else "".join(merged)
