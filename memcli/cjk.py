"""Which characters are Chinese, Japanese or Korean: the one home of every CJK range memcli uses.

- ``CJK_RANGES`` (``CJK``, ``is_cjk_char``, ``has_cjk``): CJK script (Hangul Jamo, kana, the CJK
  ideographs and their extensions, Hangul syllables), as code point ranges: what the tokenizer
  splits into bigrams, what the signal words, the token estimate and the duplicate blocks count
  as CJK. ``CJK`` is the same as the inside of a regex class.
- ``HAN``: the ideographs alone (extension A and the unified block), what reflection counts when
  it asks whether a sentence is Chinese; ``HAN_BASIC``: the unified block as GB 2312 and GBK text
  uses it, what a Chinese street name is written in (personal-data masking).
- ``FULLWIDTH``: the halfwidth and fullwidth forms, which take a CJK character's room;
  ``is_wide``: a character a line may be cut beside (the snippet's rule); ``WIDE_FROM``: from
  this code point on a character counts two when a summary's length is measured.

Plain data and arithmetic: a class this large is costly to compile, so ``is_cjk_char`` looks a
character up without a regex.
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

HAN_RANGE = (0x3400, 0x9FFF)  # CJK ideographs: extension A and the unified block
HAN = f"{chr(HAN_RANGE[0])}-{chr(HAN_RANGE[1])}"  # the same, as the inside of a regex class
HAN_BASIC = f"{chr(0x4E00)}-{chr(0x9FA5)}"  # regex class inside: the unified block as GB 2312 / GBK text uses it

FULLWIDTH = (0xFF00, 0xFFEF)  # halfwidth and fullwidth forms
_WIDE = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), FULLWIDTH)  # radicals to ideographs, Hangul, ...
WIDE_FROM = _WIDE[0][0]


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
    """A CJK ideograph, kana, hangul, CJK punctuation or full-width form: a word of its own when a
    line is cut."""
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _WIDE)
