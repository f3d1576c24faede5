"""Invisible characters in memory text: which ones hide something (reported by the injection scan
as ``invisible unicode``, or ``hidden prompt`` when tag characters spell out text, and removed by
``strip_invisible``) and which do a visible job and stay: a joiner inside an emoji sequence or
between letters of a script that needs it, a flag's tag characters, a byte-order mark at the start,
one variation selector after the character whose form it selects.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .normalize import SELECTORS

_INVISIBLE_SOURCE = (
    "[\u200b-\u200d\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff\u180e\u115f\u1160\u3164\uffa0\U000e0000-\U000e007f"
    + SELECTORS
    + "]+"
)
_FLAG_TAGS_SOURCE = "[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f"
_rx = lru_cache(maxsize=None)(re.compile)  # compiled at the first text outside ASCII


def _emoji(ch: str) -> bool:
    o = ord(ch) if ch else 0
    return (
        0x1F000 <= o <= 0x1FAFF
        or 0x2600 <= o <= 0x27BF
        or 0x2300 <= o <= 0x23FF
        or 0x2B00 <= o <= 0x2BFF
        or o in (0xFE0F, 0x20E3, 0xA9, 0xAE, 0x203C, 0x2049, 0x2122)
    )


def _joining_script(ch: str) -> bool:
    o = ord(ch) if ch else 0
    return (
        0x0590 <= o <= 0x1CFF
        or 0xA800 <= o <= 0xABFF
        or 0xFB1D <= o <= 0xFDFF
        or 0xFE70 <= o <= 0xFEFC
        or 0x10A00 <= o <= 0x11FFF
    ) and unicodedata.category(ch)[0] in "LM"


def _selects(prev: str, selector: str, after: str) -> bool:
    """Whether a variation selector after prev chooses a form of it (not of another selector)."""
    o = ord(prev) if prev else 0
    if _rx(f"[{SELECTORS}]").match(prev or " "):
        return False
    if "\u180b" <= selector <= "\u180f":
        return 0x1800 <= o <= 0x18AF
    return o >= 0x2000 or _emoji(prev) or (bool(prev) and prev in "#*0123456789" and after == "\u20e3")


def legitimate(text: str, start: int, end: int) -> bool:
    """Whether the invisible run text[start:end] does a visible job where it stands."""
    run = text[start:end]
    prev = text[start - 1] if start else ""
    nxt = text[end] if end < len(text) else ""
    if _rx(f"[{SELECTORS}]").match(run) and _selects(prev, run[0], text[start + 1 : start + 2]):
        return end == start + 1 or legitimate(text, start + 1, end)  # then perhaps a joiner
    if run == "\ufeff":
        return start == 0
    if run == "\u200d" and _emoji(prev) and _emoji(nxt):
        return True
    if run in ("\u200c", "\u200d") and _joining_script(prev) and _joining_script(nxt):
        return True
    return prev == "\U0001f3f4" and _rx(_FLAG_TAGS_SOURCE).fullmatch(run) is not None


def escape(s: str) -> str:
    """The text with each invisible character written as ``<U+200B>``."""
    return _rx(_INVISIBLE_SOURCE).sub(
        lambda m: "".join(f"<U+{ord(c):04X}>" for c in m.group()[:8]) + ("…" if len(m.group()) > 8 else ""), s
    )


def excerpt(s: str, limit: int = 120) -> str:
    """A one-line, visible excerpt of reported text."""
    s = " ".join(escape(s).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def runs(text: str):
    """(start, end, kind, excerpt) of each invisible run that hides something: tag characters
    spelling out text are a hidden prompt."""
    if text.isascii():
        return
    for m in _rx(_INVISIBLE_SOURCE).finditer(text):
        s, e = m.span()
        if legitimate(text, s, e):
            continue
        hidden = "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E)
        if len(hidden.strip()) >= 2:
            yield s, e, "hidden prompt", excerpt(f'hidden text: "{hidden}"')
        else:
            yield s, e, "invisible unicode", excerpt(text[max(0, s - 12) : min(len(text), e + 12)])


def strip_invisible(text: str) -> str:
    """The text without the invisible characters the injection scan reports."""
    if text.isascii():
        return text
    return _rx(_INVISIBLE_SOURCE).sub(lambda m: m.group() if legitimate(text, m.start(), m.end()) else "", text)
