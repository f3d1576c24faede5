"""A line-based three-way merge (diff3) in pure Python.

``merge(base, ours, theirs)`` gives the merged text when the two sides changed different
lines of ``base``, and None when they touched the same place differently (a conflict): the
caller then keeps both versions for a person instead of choosing one.
"""

from __future__ import annotations

from difflib import SequenceMatcher


def _matches(base: list, other: list) -> dict:
    """base line index -> other line index, for the lines the two have in common (monotonic)."""
    out = {}
    sm = SequenceMatcher(None, base, other, autojunk=False)
    for a, b, size in sm.get_matching_blocks():
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
