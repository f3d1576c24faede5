"""Text as an injection rule should read it: the evasions that keep "ignore previous instructions"
from matching undone (compatibility forms and accents, invisible characters and variation
selectors, look-alike letters of other scripts, blanks and `_`/`.` for spaces, s p a c e d letters;
the list is in docs/safety.md). ``fold`` maps each folded character back to the original, so a
match is reported where it stands.
"""

from __future__ import annotations

import os
import re
import unicodedata

CUTS = "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # a soft hyphen and zero-width ones: cut a word, a key, a number unseen
DROPPED = frozenset(CUTS + "\u2061\u2062\u2063\u2064\u180e\u034f")
SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180f"  # variation selectors (a regex class)
BLANKS = "\u2800\u3164\u115f\u1160\uffa0"  # blank characters that stand for a space
_MARKED: dict = {}  # character -> whether it marks its line (``_marks``)
_OTHER = re.compile(r"[^\x00-\x7f]+")
# three or more single letters, each followed by one space, dot, dash or underscore
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_·]){2,}[^\W\d_](?![^\W\d_])")
# three or more words of letters joined by `_` or `.`, not a path, a host name or a file name's end;
# looked for only in the lines where a search that starts at the `_` or `.` (a quarter of the time
# over a long text) finds two joins in a row
_JOINED = re.compile(r"(?<![\w./-])[^\W\d_]+(?:[_.][^\W\d_]+){2,}(?![\w/-]|\.\w)")
_JOINS = re.compile(r"[_.](?<=[^\W\d_][_.])[^\W\d_]+[_.](?=[^\W\d_])")
_TABLE: dict = {}


def table() -> dict:
    """{character: the ASCII it passes for} from ``rules/confusables.txt``, and the blanks."""
    if not _TABLE:
        with open(os.path.join(os.path.dirname(__file__), "rules", "confusables.txt"), encoding="utf-8") as f:
            found = re.findall(r"^([0-9A-F]+) ;\t([0-9A-F ]+) ;", f.read(), re.M)
        _TABLE.update((chr(int(s, 16)), "".join(chr(int(c, 16)) for c in t.split())) for s, t in found)
        _TABLE.update(dict.fromkeys(BLANKS, " "))
    return _TABLE


def _marks(ch: str) -> bool:
    """Whether a character outside ASCII holds an evasion fold undoes (its line is then read
    folded): a dropped or blank one, or a letter, digit, mark or format character that folds to
    something else. Punctuation alone does not (ordinary CJK text is full of it)."""
    known = _MARKED.get(ch)
    if known is None:
        known = _MARKED[ch] = (
            ch in DROPPED or ch in BLANKS or (unicodedata.category(ch)[0] in "LMNC" and _char(ch) != ch)
        )
    return known


def _char(ch: str) -> str:
    if ch in DROPPED:
        return ""
    if ord(ch) < 128:
        return ch
    tr39 = table()  # NFKD, then no mark (combining, enclosing, a variation selector) is kept
    return "".join(tr39.get(c, c) for c in unicodedata.normalize("NFKD", ch) if unicodedata.category(c)[0] != "M")


def fold(text: str) -> tuple[str, list[int]] | None:
    """(the lines of text that hold an evasion, folded and joined by newlines; the original index of
    each of their characters), or None when no line does. Only those lines are read twice."""
    marks = [m.start() for m in _SPACED.finditer(text)]
    end = -1
    for m in _JOINS.finditer(text):
        if m.start() > end:
            end = text.find("\n", m.start())
            end = len(text) if end < 0 else end
            hit = _JOINED.search(text, text.rfind("\n", 0, m.start()) + 1, end)
            marks += [hit.start()] if hit else []
    if not text.isascii():
        marks += [m.start() for m in _OTHER.finditer(text) if any(map(_marks, set(m.group())))]
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
        if text.isascii() or text[start:end].isascii():  # nothing to fold but spaces: one for one
            chars.extend(text[start:end])
            where.extend(range(start, end))
            continue
        for i in range(start, end):
            for c in _char(text[i]):
                chars.append(c)
                where.append(i)
    # `_` or `.` as the space it stands for, one character for one: `where` still holds
    folded = _JOINED.sub(lambda m: re.sub("[_.]", " ", m.group()), "".join(chars))
    out: list[str] = []
    origin: list[int] = []
    pos = 0
    for m in _SPACED.finditer(folded):
        out.append(folded[pos : m.start()])
        origin.extend(where[pos : m.start()])
        for k in range(m.start(), m.end(), 2):
            out.append(folded[k])
            origin.append(where[k])
        pos = m.end()
    out.append(folded[pos:])
    origin.extend(where[pos:])
    return "".join(out), origin
