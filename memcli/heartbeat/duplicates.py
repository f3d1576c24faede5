"""Near-duplicate memories, found without comparing every pair."""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict

from ..cjk import CJK
from ..model import Finding
from ..near_duplicates import DUPLICATE_RATIO, compared, identifiers as _identifiers, lengths_allow, normal as _normal
from ..near_duplicates import same_memory as _same
from .base import rank

_BLOCK_MAX = 30  # a word in more memories than this makes no duplicate block
_WINDOW = 4  # neighbours compared in sorted title order
_WORDS = re.compile(rf"[a-z0-9]{{3,}}|[{CJK}]+")


def _tokens(text: str, intern=sys.intern) -> tuple:
    """Words of three letters or more, CJK bigrams; interned, so equal words share one string."""
    out = set()
    for w in _WORDS.findall(text):
        if w.isascii() or len(w) == 1:
            out.add(w)
        else:
            out.update(w[i : i + 2] for i in range(len(w) - 1))
    return tuple(intern(t) for t in out)


def find(details: list, body_hashes: dict) -> list[Finding]:
    """Near-duplicates without comparing every pair: exact keys first, then rapidfuzz inside
    blocks of memories that share a rare token, plus neighbours in sorted-title order."""
    n = len(details)
    if n < 2:
        return []
    from rapidfuzz import fuzz

    texts = [compared(f"{d.title} {d.summary}") for d in details]
    parent = list(range(n))

    def root_of(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = root_of(i), root_of(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    hashes = [body_hashes.get(d.id) for d in details]
    first: dict = {}
    titles = [_normal(d.title) for d in details]
    for i in range(n):
        if hashes[i] is not None:
            union(first.setdefault(("b", hashes[i]), i), i)
        if len(texts[i]) >= 8:
            union(first.setdefault(("t", texts[i]), i), i)
        if titles[i]:
            union(first.setdefault(("T", titles[i]), i), i)

    numbers = [_identifiers(t) for t in texts]
    sizes = [len(t) for t in texts]

    def compare(a: int, b: int) -> None:
        # numbers and one-letter names tell things apart: "release 2026-12" and "release 2027-01", or
        # "plan a" and "plan b", are two memories
        if root_of(a) == root_of(b):
            return
        if _same(details[a].title, details[a].summary, details[b].title, details[b].summary):
            union(a, b)
            return
        if not lengths_allow(sizes[a], sizes[b]) or numbers[a] != numbers[b]:
            return
        if fuzz.ratio(texts[a], texts[b], score_cutoff=DUPLICATE_RATIO):
            union(a, b)

    # blocks: memories sharing one of their two rarest words (or CJK bigrams) are compared pairwise;
    # a word shared by many memories says nothing about any two of them and makes no block.
    toks = [_tokens(t) for t in texts]
    df = Counter(t for ts in toks for t in ts)
    blocks = defaultdict(list)
    for i, ts in enumerate(toks):
        rare = [(df[t], t) for t in ts if 1 < df[t] <= _BLOCK_MAX]
        if len(rare) > 2:
            rare.sort()
        for _, t in rare[:2]:
            blocks[t].append(i)
    del df, toks
    for members in blocks.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                compare(members[x], members[y])
    del blocks
    # and neighbours in sorted order catch the ones whose words are all common
    order = sorted(range(n), key=texts.__getitem__)
    for x in range(n - 1):
        for y in range(x + 1, min(x + 1 + _WINDOW, n)):
            compare(order[x], order[y])

    groups = defaultdict(list)
    for i in range(n):
        groups[root_of(i)].append(i)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: rank(details[i]))
        keep = members[0]
        k = details[keep]
        for i in members[1:]:
            d = details[i]
            if hashes[i] is not None and hashes[i] == hashes[keep]:
                why = "the same body"
            elif texts[i] == texts[keep]:
                why = "the same title and summary"
            elif fuzz.ratio(texts[i], texts[keep]) < DUPLICATE_RATIO and (
                same := _same(d.title, d.summary, k.title, k.summary)
            ):
                why = same
            else:
                why = f"title and summary {fuzz.ratio(texts[i], texts[keep]):.0f}% alike"
            out.append(
                Finding(
                    "duplicate",
                    "warning",
                    d.path,
                    None,
                    f"{d.id} looks like a duplicate of {k.path} ({why})",
                    f"merge it into {k.id} (`memcli update {k.id} --append ...`) and "
                    f"`memcli forget {d.id}`, or make the two clearly different",
                )
            )
    return out
