"""The near-duplicate rule, shared by heartbeat's audit and remember's warning: two memories whose
title and summary reach a rapidfuzz ratio of DUPLICATE_RATIO and carry the same numbers and
one-letter words ("release 2026-12" and "release 2027-01" are different memories)."""

from __future__ import annotations

import re

DUPLICATE_RATIO = 90.0  # rapidfuzz ratio of title + summary from which two memories are near-duplicates
_NUMBER = re.compile(r"\d+")
_LETTER = re.compile(r"(?<!\w)[^\W\d_](?!\w)")


def identifiers(text: str) -> tuple | None:
    """The numbers and one-letter words of a text: what near-duplicates must share exactly."""
    numbers = _NUMBER.findall(text)
    letters = _LETTER.findall(text)
    return (tuple(numbers), tuple(sorted(letters))) if numbers or letters else None
