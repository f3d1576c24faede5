"""The bridge between Chinese and English terms, without a model: which words of a query have a
form in the other language (the data file ``glossary.txt``: 字符集 / charset, 回滚 / rollback, 上线 / deploy).

The query planner (``search.query``) adds the other forms as entries that satisfy the same query
units, at ``query.GLOSSARY_MATCH`` of a word's own weight, so a memory holding the words of the
question (or an alias its author wrote) still ranks before one the bridge found. The tables are
built on first use, from the data file, once a process; a query without a term of the glossary
costs a dictionary lookup a word.
"""

from __future__ import annotations

from functools import lru_cache

Phrase = tuple  # the words of an English phrase, as ``tokenize.analyze`` gives them


class Tables:
    """The glossary's lines, each (Chinese terms, English terms as written), and the two lookups
    built from them when a query first needs one: ``zh`` (a question holding Chinese) and ``en``
    (one holding English words). Nothing is tokenized until a query needs it (``phrase``)."""

    __slots__ = ("lines", "_zh", "_en")

    def __init__(self, lines: list):
        self.lines = lines
        self._zh: ZhIndex | None = None
        self._en: EnIndex | None = None

    @property
    def zh(self) -> "ZhIndex":
        if self._zh is None:
            self._zh = ZhIndex(self.lines)
        return self._zh

    @property
    def en(self) -> "EnIndex":
        if self._en is None:
            self._en = EnIndex(self.lines)
        return self._en


class ZhIndex:
    """terms: Chinese term -> English terms; longest: the longest Chinese term; chars: their characters."""

    __slots__ = ("terms", "longest", "chars")

    def __init__(self, lines: list):
        terms: dict[str, list] = {}
        for cjk, english in lines:
            for w in cjk:
                terms.setdefault(w, []).extend(english)
        self.terms = {w: tuple(dict.fromkeys(v)) for w, v in terms.items()}
        self.longest = max((len(w) for w in terms), default=0)
        self.chars = frozenset("".join(terms))


class EnIndex:
    """terms: English term as written -> Chinese terms; starts: the first three letters of its
    first word (not a stopword) -> the terms (stemming cuts only the end of a word, so a query's
    stemmed word finds them)."""

    __slots__ = ("terms", "starts")

    def __init__(self, lines: list):
        from .tokenize import STOPWORDS

        terms: dict[str, list] = {}
        starts: dict[str, list] = {}
        for cjk, english in lines:
            for w in english:
                got = terms.get(w)
                if got is None:
                    terms[w] = got = []
                    first = w.partition(" ")[0]
                    if len(first) < 3 or first in STOPWORDS:  # rare: look for its first word that counts
                        first = next(
                            (x for x in w.replace("-", " ").replace("_", " ").split() if x not in STOPWORDS), ""
                        )
                    if first:
                        starts.setdefault(first[:3], []).append(w)
                got += cjk
        self.terms = terms  # a term of several lines may list a Chinese term twice: harmless
        self.starts = starts


def parse(text: str) -> Tables:
    """Tables from lines ``中文, 中文 = english, english`` (``#`` starts a comment line)."""
    lines = []
    for line in text.splitlines():
        left, sep, right = line.partition("=")
        if not sep or line.lstrip().startswith("#"):
            continue
        cjk = [w.strip() for w in left.split(",") if w.strip()]
        english = [w.strip().lower() for w in right.split(",") if w.strip()]
        if cjk and english:
            lines.append((cjk, english))
    return Tables(lines)


@lru_cache(maxsize=1)
def data() -> tuple[str, str]:
    """``glossary.txt``: the concepts recall bridges, and the everyday words (the lines after ``[common]``)."""
    from pathlib import Path

    terms, _, common = Path(__file__).with_name("glossary.txt").read_text(encoding="utf-8").partition("\n[common]\n")
    return terms, common


@lru_cache(maxsize=1)
def tables() -> Tables:
    return parse(data()[0])


@lru_cache(maxsize=4096)
def phrase(text: str) -> Phrase:
    """The words of a term of either language as the ranker looks them up (``tokenize.analyze``:
    stemmed words; CJK bigrams), compounds left out."""
    from .tokenize import COMPOUND, analyze

    return tuple(t for t, kind in analyze(text) if kind != COMPOUND)


def chinese_terms(query: str, t: Tables | None = None) -> list[str]:
    """The glossary's Chinese terms written in ``query``, longest first where one holds another
    at the same place (主从延迟, not also 主从 there); a term of one character only where it
    stands alone between non-CJK characters or particles (``tokenize`` keeps it as a term)."""
    if query.isascii():
        return []
    zh = (t or tables()).zh
    if zh.chars.isdisjoint(query):
        return []
    found: dict[str, None] = {}
    n = len(query)
    i = 0
    while i < n:
        if query[i] not in zh.chars:
            i += 1
            continue
        for size in range(min(zh.longest, n - i), 0, -1):
            w = query[i : i + size]
            if w in zh.terms and (size > 1 or _alone(query, i)):
                found[w] = None
                break
        i += 1
    return list(found)


def _alone(query: str, i: int) -> bool:
    from .tokenize import terms

    return query[i] in terms(query)


def english_phrases(words: list[str], t: Tables | None = None) -> list[str]:
    """The glossary's English phrases (as written) among ``words``, a query's stemmed words in
    order; where several start at one word, the longest."""
    en = (t or tables()).en
    found: dict[str, None] = {}
    for i, w in enumerate(words):
        best = None
        for raw in en.starts.get(w[:3], ()):
            p = phrase(raw)
            if p and p[0] == w and tuple(words[i : i + len(p)]) == p and (best is None or len(p) > len(phrase(best))):
                best = raw
        if best is not None:
            found[best] = None
    return list(found)


# ---------------------------------------------------------------- words for an alias in the other language


@lru_cache(maxsize=1)
def names() -> Tables:
    """Every line of the glossary: the concepts recall bridges, then the everyday words too common
    to bridge a search (``data``): what an alias in the other language may name."""
    return parse("".join(data()))


def chinese_for(text: str, limit: int = 8) -> list[str]:
    """The Chinese words for the English terms of ``text``, in the order they appear (for each, the
    first Chinese term of the first line that names it): reflection's alias of an English lesson."""
    from ..cjk import has_han
    from .tokenize import terms

    t = names()
    found = (next((c for c in t.en.terms[p] if has_han(c)), None) for p in english_phrases(terms(text), t))
    return list(dict.fromkeys(c for c in found if c))[:limit]


def english_for(text: str, limit: int = 8) -> list[str]:
    """The English words for the Chinese terms of ``text``, in the order they appear (for each, the
    first English term of its first line): reflection's alias of a Chinese lesson."""
    from ..cjk import has_han

    t = names()
    return list(dict.fromkeys(t.zh.terms[w][0] for w in chinese_terms(text, t) if has_han(w)))[:limit]
