"""Pick the part of a Markdown body that best answers a query.

The body is split into sections at headings and into paragraphs at blank lines; the
section sharing the most (rarest-first) query terms wins, and it is trimmed to about
``width`` characters around its first match. Without any match, the head of the body
is returned.
"""

from __future__ import annotations

import re

from memcli.search.tokenize import terms

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


def _trim(text: str, width: int, start: int = 0) -> str:
    if len(text) <= width:
        return text
    begin = max(0, min(start - width // 4, len(text) - width))
    if begin > 0:
        space = text.find(" ", begin, begin + 20)
        begin = space + 1 if space != -1 else begin
    end = begin + width
    if end < len(text):
        space = text.rfind(" ", end - 20, end)
        end = space if space > begin else end
    out = text[begin:end].strip()
    return ("…" if begin > 0 else "") + out + ("…" if end < len(text) else "")


def _first_match(text: str, wanted: set[str]) -> int:
    """Character offset of the first word whose terms meet ``wanted`` (0 when none does)."""
    lowered = text.lower()
    for m in re.finditer(r"\S+", text):
        if wanted.intersection(terms(m.group())):
            return m.start()
    for term in wanted:  # a CJK bigram inside a longer run
        pos = lowered.find(term)
        if pos != -1:
            return pos
    return 0


def snippet(body: str, query: str, width: int = 240) -> str:
    """The best-matching section of ``body`` for ``query``, about ``width`` characters long."""
    width = max(width, 20)
    blocks = _blocks(body)
    if not blocks:
        return ""
    wanted = set(terms(query))
    if wanted:
        block_terms = [set(terms(b)) for b in blocks]
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
