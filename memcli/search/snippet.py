"""Pick the part of a Markdown body that best answers a query.

The body is split into sections at headings and into paragraphs at blank lines; the
section sharing the most (rarest-first) query terms wins, and it is trimmed to about
``width`` characters around its first match. Without any match, the head of the body
is returned.
"""

from __future__ import annotations

import re

from memcli.cjk import is_wide
from memcli.search.tokenize import term_set, terms

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_SPACE = re.compile(r"\s+")


def _blocks(body: str) -> list[str]:
    """Paragraphs and headed sections; a heading stays with the paragraph under it."""
    blocks: list[list[str]] = []
    current: list[str] = []
    in_fence = False
    heading_only = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and _HEADING.match(line):
            if current:
                blocks.append(current)
            current = [line]
            heading_only = True
            continue
        if not in_fence and not line.strip():
            if current and not heading_only:
                blocks.append(current)
                current = []
            continue
        current.append(line)
        heading_only = False
    if current:
        blocks.append(current)
    return ["\n".join(b).strip() for b in blocks if "".join(b).strip()]


def _flatten(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _breaks(text: str, i: int) -> bool:
    """Whether cutting text at i cuts no word: at a space, or beside a CJK character."""
    if i <= 0 or i >= len(text):
        return True
    a, b = text[i - 1], text[i]
    return a.isspace() or b.isspace() or is_wide(a) or is_wide(b)


def _trim(text: str, width: int, start: int = 0) -> str:
    """About `width` characters of text around `start`, cut between words; a word longer than
    half the width is the only thing cut inside."""
    if len(text) <= width:
        return text
    begin = max(0, min(start - width // 4, len(text) - width))
    reach = width // 2
    b = next((i for i in range(begin, min(begin + reach, start + 1, len(text))) if _breaks(text, i)), begin)
    end = b + width
    if end < len(text):
        end = next((i for i in range(end, max(end - reach, b), -1) if _breaks(text, i)), end)
    out = text[b:end].strip()
    return ("…" if b > 0 else "") + out + ("…" if end < len(text) else "")


def _first_match(text: str, wanted: set[str]) -> int:
    """Character offset of the first word whose terms meet ``wanted`` (0 when none does)."""
    lowered = text.lower()
    for m in re.finditer(r"\S+", text):
        hit = wanted.intersection(terms(m.group()))
        if hit:  # inside a long run (Chinese has no spaces), the term itself
            inner = [p for p in (lowered.find(t, m.start(), m.end()) for t in hit) if p != -1]
            return min(inner) if inner else m.start()
    for term in wanted:  # a CJK bigram inside a longer run
        pos = lowered.find(term)
        if pos != -1:
            return pos
    return 0


MAX_SCAN = 100_000  # characters of a body looked at for the best section


def _window(body: str, wanted: set[str]) -> str:
    """MAX_SCAN characters of a long body, whole lines, around the first place a query term
    occurs (the head when none does): the sections are split and ranked in that part only."""
    lowered = body.lower()
    found = [p for p in (lowered.find(t) for t in wanted) if p != -1]
    at = min(found) if found else 0
    start = max(0, at - MAX_SCAN // 4)
    start = body.rfind("\n", 0, start) + 1 if start else 0
    end = body.rfind("\n", start, start + MAX_SCAN)
    return body[start : end if end > at else start + MAX_SCAN]


def snippet(body: str, query: str, width: int = 240) -> str:
    """The best-matching section of ``body`` for ``query``, about ``width`` characters long."""
    width = max(width, 20)
    if len(body) > MAX_SCAN:
        body = _window(body, set(terms(query)))
    blocks = _blocks(body)
    if not blocks:
        return ""
    wanted = set(terms(query))
    if wanted:
        block_terms = [term_set(b) for b in blocks]
        seen_in = {t: sum(t in bt for bt in block_terms) for t in wanted}
        best, best_score = -1, 0.0
        for i, bt in enumerate(block_terms):
            score = sum(1.0 / seen_in[t] for t in wanted & bt)
            if score > best_score:
                best, best_score = i, score
        if best >= 0:
            text = _flatten(blocks[best])
            return _trim(text, width, _first_match(text, wanted))
    return _trim(_flatten("\n\n".join(blocks)), width)
