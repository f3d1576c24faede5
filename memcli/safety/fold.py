"""Text as an injection rule should read it: the evasions that keep "ignore previous
instructions" from matching undone before the rules run.

- compatibility forms (NFKC: full-width ｉｇｎｏｒｅ, ligatures, circled letters),
- soft hyphens and zero-width characters inside words,
- Cyrillic and Greek letters that look like Latin ones (іgnore, ρrevious),
- letters spaced apart (i g n o r e), collapsed; a wider gap between the runs stays a space.

``fold`` returns the folded text and, for each of its characters, the index of the character of
the original it came from, so a match is reported where it stands; None when there is nothing to
undo (most text: a quick scan of ASCII text for spaced letters is all it costs).
"""

from __future__ import annotations

import re
import unicodedata

# the letters of other scripts that a reader takes for Latin ones
CONFUSABLE = dict(
    zip(
        "аеорсухіјѕԁԛԝһӏаАВЕКМНОРСТУХІЈЅԌαβεικνορτυχοΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijsdqwhlaABEKMHOPCTYXIJSGabeiknoptuxoABEZHIKMNOPTYX",
    )
)
DROPPED = frozenset("\u00ad\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f")
_SPACED = None
_FOLDABLE = None


def _spaced():
    global _SPACED
    if _SPACED is None:  # three or more single letters, each followed by one space, dot, dash or underscore
        _SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_·]){2,}[^\W\d_](?![^\W\d_])")
    return _SPACED


def _foldable():
    """A character fold changes: dropped ones, full-width letters and digits and the ideographic
    space, mathematical and circled letters, the look-alikes (ordinary CJK punctuation is not)."""
    global _FOLDABLE
    if _FOLDABLE is None:
        _FOLDABLE = re.compile(
            "[" + "".join(sorted(DROPPED)) + "\u3000\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
            "\u249c-\u24e9\U0001d400-\U0001d7ff" + "".join(sorted(CONFUSABLE)) + "]"
        )
    return _FOLDABLE


def _char(ch: str) -> str:
    if ch in DROPPED:
        return ""
    if ch in CONFUSABLE:
        return CONFUSABLE[ch]
    if ord(ch) < 128:
        return ch
    return "".join(CONFUSABLE.get(c, c) for c in unicodedata.normalize("NFKC", ch) if not unicodedata.combining(c))


def fold(text: str) -> tuple[str, list[int]] | None:
    """(the lines of text that hold an evasion, folded and joined by newlines; the original index of
    each of their characters), or None when no line does. Only those lines are read twice."""
    marks = [m.start() for m in _spaced().finditer(text)]
    if not text.isascii():
        marks += [m.start() for m in _foldable().finditer(text)]
    if not marks:
        return None
    spans, last_end = [], -1
    for at in sorted(marks):
        if at < last_end:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        spans.append((start, end))
        last_end = end
    chars: list = []
    where: list = []
    for start, end in spans:
        if chars:
            chars.append("\n")
            where.append(start - 1)
        for i in range(start, end):
            for c in _char(text[i]):
                chars.append(c)
                where.append(i)
    folded = "".join(chars)
    out, at, pos = [], [], 0
    for m in _spaced().finditer(folded):
        out.append(folded[pos : m.start()])
        at.extend(where[pos : m.start()])
        for k in range(m.start(), m.end(), 2):
            out.append(folded[k])
            at.append(where[k])
        pos = m.end()
    out.append(folded[pos:])
    at.extend(where[pos:])
    return "".join(out), at
