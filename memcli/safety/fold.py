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
CONFUSABLE = dict(zip(
    "аеорсухіјѕԁԛԝһӏаАВЕКМНОРСТУХІЈЅԌ" "αβεικνορτυχοΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwhlaABEKMHOPCTYXIJSG" "abeiknoptuxoABEZHIKMNOPTYX"))
DROPPED = frozenset("\u00ad\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f")
_SPACED = None


def _spaced():
    global _SPACED
    if _SPACED is None:  # three or more single letters, each followed by one space, dot, dash or underscore
        _SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_·]){2,}[^\W\d_](?![^\W\d_])")
    return _SPACED


def fold(text: str) -> tuple[str, list[int]] | None:
    """(the folded text, the original index of each of its characters), or None when unchanged."""
    if text.isascii():
        if _spaced().search(text) is None:
            return None
        chars, where = list(text), list(range(len(text)))
    else:
        chars, where = [], []
        for i, ch in enumerate(text):
            if ch in DROPPED:
                continue
            if ch in CONFUSABLE:
                chars.append(CONFUSABLE[ch])
                where.append(i)
                continue
            if ord(ch) < 128:
                chars.append(ch)
                where.append(i)
                continue
            for c in unicodedata.normalize("NFKC", ch):
                if unicodedata.combining(c):
                    continue
                chars.append(CONFUSABLE.get(c, c))
                where.append(i)
    folded = "".join(chars)
    out, at, pos = [], [], 0
    for m in _spaced().finditer(folded):
        out.append(folded[pos:m.start()])
        at.extend(where[pos:m.start()])
        for k in range(m.start(), m.end(), 2):
            out.append(folded[k])
            at.append(where[k])
        pos = m.end()
    out.append(folded[pos:])
    at.extend(where[pos:])
    result = "".join(out)
    return (result, at) if result != text else None
