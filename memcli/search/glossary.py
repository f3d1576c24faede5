"""The bridge between Chinese and English terms, without a model: which words of a query have a
form in the other language (``glossary_data``: 字符集 / charset, 回滚 / rollback, 上线 / deploy).

The query planner (``search.query``) adds the other forms as entries that satisfy the same query
units, at ``query.GLOSSARY_MATCH`` of a word's own weight, so a memory holding the words of the
question (or an alias its author wrote) still ranks before one the bridge found. The tables are
built on first use, from the data module, once a process; a query without a term of the glossary
costs a dictionary lookup a word.
"""

from __future__ import annotations

from functools import lru_cache

Phrase = tuple  # the words of an English phrase, as ``tokenize.analyze`` gives them


class Tables:
    """zh: Chinese term -> English phrases as written; en: English phrase as written -> Chinese
    terms; starts: the first three letters of an English phrase's first word -> the phrases as
    written (stemming cuts only the end of a word, so a query's stemmed word finds them);
    longest: the length of the longest Chinese term; chars: every character of a Chinese term.
    Nothing is tokenized until a query needs it (``phrase``): building the tables costs a split
    of each line."""

    __slots__ = ("zh", "en", "starts", "longest", "chars")

    def __init__(self):
        self.zh: dict[str, tuple[str, ...]] = {}
        self.en: dict[str, tuple[str, ...]] = {}
        self.starts: dict[str, tuple[str, ...]] = {}
        self.longest = 0
        self.chars: frozenset = frozenset()


def parse(text: str) -> Tables:
    """Tables from lines ``中文, 中文 = english, english`` (``#`` starts a comment line)."""
    from .tokenize import STOPWORDS

    zh: dict[str, dict] = {}
    en: dict[str, dict] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        left, _, right = line.partition("=")
        cjk = [w.strip() for w in left.split(",") if w.strip()]
        english = [w.strip().lower() for w in right.split(",") if w.strip()]
        for w in cjk:
            zh.setdefault(w, {}).update(dict.fromkeys(english))
        for w in english:
            en.setdefault(w, {}).update(dict.fromkeys(cjk))
    t = Tables()
    t.zh = {w: tuple(ps) for w, ps in zh.items()}
    t.en = {p: tuple(ws) for p, ws in en.items()}
    starts: dict[str, list] = {}
    for p in t.en:
        first = next((w for w in p.replace("-", " ").replace("_", " ").split() if w not in STOPWORDS), "")
        if first:
            starts.setdefault(first[:3], []).append(p)
    t.starts = {k: tuple(v) for k, v in starts.items()}
    t.longest = max((len(w) for w in t.zh), default=0)
    t.chars = frozenset(c for w in t.zh for c in w)
    return t


@lru_cache(maxsize=1)
def tables() -> Tables:
    from .glossary_data import TERMS

    return parse(TERMS)


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
    t = t or tables()
    if query.isascii() or t.chars.isdisjoint(query):
        return []
    found: dict[str, None] = {}
    n = len(query)
    i = 0
    while i < n:
        if query[i] not in t.chars:
            i += 1
            continue
        for size in range(min(t.longest, n - i), 0, -1):
            w = query[i:i + size]
            if w in t.zh and (size > 1 or _alone(query, i)):
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
    t = t or tables()
    found: dict[str, None] = {}
    for i, w in enumerate(words):
        best = None
        for raw in t.starts.get(w[:3], ()):
            p = phrase(raw)
            if p and p[0] == w and tuple(words[i:i + len(p)]) == p and (best is None or len(p) > len(phrase(best))):
                best = raw
        if best is not None:
            found[best] = None
    return list(found)
