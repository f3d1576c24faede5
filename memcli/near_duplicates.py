"""The near-duplicate rule of heartbeat's audit and remember's warning: title and summary reaching
a rapidfuzz ratio of DUPLICATE_RATIO with the same numbers and one-letter words, or the same
title, or one summary holding the other whole (``same_memory``)."""

from __future__ import annotations

import re

from .cjk import WIDE_FROM

DUPLICATE_RATIO = 90.0  # rapidfuzz ratio of title + summary from which two memories are near-duplicates
MIN_COMPARED = 12  # characters of title + summary below which the ratio is not asked
_WS = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def compared(text: str) -> str:
    """Title and summary (or a body) as the ratio compares them: lower case, spaces collapsed."""
    return _WS.sub(" ", text.lower()).strip()


def lengths_allow(la: int, lb: int) -> bool:
    """Whether compared texts of these lengths can reach DUPLICATE_RATIO (the ratio's prefilter)."""
    short, long = (la, lb) if la <= lb else (lb, la)
    return short >= MIN_COMPARED and short * 5 >= long * 4


_LETTER = re.compile(r"(?<!\w)[^\W\d_](?!\w)")


def identifiers(text: str) -> tuple | None:
    """The numbers and one-letter words of a text: what near-duplicates must share exactly."""
    numbers = _NUMBER.findall(text)
    letters = _LETTER.findall(text)
    return (tuple(numbers), tuple(sorted(letters))) if numbers or letters else None


_PUNCT_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
MIN_CONTAINED = 16  # a summary this long (a CJK character counts two: cjk.WIDE_FROM) inside another makes a duplicate


def normal(text: str) -> str:
    """Text for comparing titles and summaries: NFKC, case folded, spaces collapsed, no punctuation at the ends."""
    import unicodedata

    text = unicodedata.normalize("NFKC", text or "").casefold()
    return _PUNCT_EDGES.sub("", _WS.sub(" ", text).strip())


def _width(text: str) -> int:
    return sum(2 if ord(c) >= WIDE_FROM else 1 for c in text)


def same_memory(title_a: str, summary_a: str, title_b: str, summary_b: str) -> str | None:
    """Why two memories are one written twice, or None: the same title (case, width and spacing
    aside), or one summary holding the other whole, the same numbers and one-letter words in both."""
    ta, tb = normal(title_a), normal(title_b)
    if ta and ta == tb:
        return "the same title"
    sa, sb = normal(summary_a), normal(summary_b)
    short, long = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    if (
        not short
        or _width(short) < MIN_CONTAINED
        or identifiers(short) != identifiers(long)
        or identifiers(ta) != identifiers(tb)
    ):
        return None  # "Plan A" and "Plan B", "Release 2026-12" and "Release 2027-01" are two memories
    at = long.find(short)
    while at != -1:
        end = at + len(short)
        # whole words only: "summary number 1" is not inside "summary number 10"
        if not (at and long[at - 1].isalnum() and short[0].isalnum()) and not (
            end < len(long) and long[end].isalnum() and short[-1].isalnum()
        ):
            return "the same summary" if short == long else "one summary inside the other"
        at = long.find(short, at + 1)
    return None
