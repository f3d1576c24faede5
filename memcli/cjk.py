"""Which characters are Chinese, Japanese or Korean: the one home of every CJK range memcli uses.
``CJK_RANGES``: CJK script (Hangul Jamo, kana, the ideographs and their extensions, Hangul
syllables), what the tokenizer splits into bigrams; ``CJK`` is the same as a regex class's inside.
"""

from __future__ import annotations

from bisect import bisect_right

CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x3005, 0x3005),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3134F),
)
CJK = "".join(chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
_BOUNDS = tuple(x for lo, hi in CJK_RANGES for x in (lo, hi + 1))

HAN_RANGE = (0x3400, 0x9FFF)  # CJK ideographs: extension A and the unified block (is a sentence Chinese?)
HAN = f"{chr(HAN_RANGE[0])}-{chr(HAN_RANGE[1])}"  # the same, as the inside of a regex class
HAN_BASIC = f"{chr(0x4E00)}-{chr(0x9FA5)}"  # the unified block as GBK text uses it (street names, pii)

FULLWIDTH = (0xFF00, 0xFFEF)  # halfwidth and fullwidth forms
_WIDE = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), FULLWIDTH)  # radicals to ideographs, Hangul, ...
WIDE_FROM = _WIDE[0][0]  # from here on a character counts two in a summary's length


def is_cjk_char(c: str) -> bool:
    """One character of CJK script (no regex: compiling a class this large costs a process ~2 ms)."""
    return bisect_right(_BOUNDS, ord(c)) % 2 == 1


def has_cjk(text: str) -> bool:
    return not text.isascii() and any(map(is_cjk_char, text))


def has_han(text: str) -> bool:
    """Whether text holds a CJK ideograph (``HAN``)."""
    lo, hi = HAN_RANGE
    return any(lo <= ord(c) <= hi for c in text)


def is_fullwidth(c: str) -> bool:
    return FULLWIDTH[0] <= ord(c) <= FULLWIDTH[1]


def is_wide(c: str) -> bool:
    """A CJK ideograph, kana, hangul, CJK punctuation or full-width form: a word of its own when a line is cut."""
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _WIDE)
