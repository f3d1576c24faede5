"""Turn text into search terms.

Text is NFKC-normalised and lowercased. Latin, Cyrillic, Greek ... words are split on
punctuation and on ``snake_case`` / ``kebab-case`` joins (the whole compound is kept
too), lightly stemmed, and English stopwords are dropped; ``camelCase`` and brand names
(MySQL, GitHub) stay whole. Chinese, Japanese and Korean runs become overlapping
character bigrams; function words and characters (的 了 是 可以 …) split a run so that
they never form bigrams, and a lone character is kept as itself.

``terms(text)`` is what documents and queries are indexed by. ``analyze(text)`` gives
the same terms with their kind, which the ranker uses to weigh query terms.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from memcli.model import CJK, is_cjk_char

WORD = 0  # a Latin (or other alphabetic) word or number, stemmed
COMPOUND = 1  # the whole of snake_case / kebab-case, as written (unstemmed)
CJK_BIGRAM = 2
CJK_CHAR = 3

_TOKEN = re.compile(r"[^\W_]+(?:['_\-][^\W_]+)*")
_CJK_SPLIT = re.compile(rf"([{CJK}]+)")
_JOINERS = re.compile(r"['_\-]")

# Function words and characters that split a CJK run: they glue words together but are
# (almost) never the inside of a word worth finding. Splitting, rather than dropping
# their bigrams, also keeps pairs like 久可 (多久可以) from being formed.
_FUNCTION_WORDS = """可以 什么 怎么 为什么 如何 哪里 哪个 哪些 这个 那个 这样 那样 怎样 时候 没有
    因为 所以 但是 如果 应该 还是 就是 已经 之前 以前 之后 以后 上次 记得 自己 现在 然后
    其实 知道 告诉 请问 是否 关于 有关 帮我 多久 多少 需要 觉得 比较 非常 可能""".split()
_PARTICLE_CHARS = "的了吗呢吧啊呀嘛哦么是在和与及或把被我你他她它们这那都也就很又而却什怎哪几不のはがをにでともへやかねよ"


def _particles_pattern() -> str:
    by_first: dict[str, list[str]] = {}
    for word in _FUNCTION_WORDS:
        by_first.setdefault(word[0], []).append(word[1:])
    groups = [
        re.escape(first) + "(?:" + "|".join(sorted(map(re.escape, rest), key=len, reverse=True)) + ")"
        for first, rest in sorted(by_first.items())
    ]
    return "|".join(groups) + f"|[{_PARTICLE_CHARS}]"


_PARTICLES = re.compile(_particles_pattern())
STOP_CHARS = frozenset("一没有个要会能去来到说让给做对为以于从向比等还再才只各每某该此其如若则即所之得地着过请样里")
# Bigrams dropped where they stand (splitting on them could cut a word: 统一下载).
_STOP_BIGRAMS = frozenset("一个 一些 一下 一样 一次 一直 越来 来越 越多 还记 有没 办法 出现".split())

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven having he
    her here hers herself him himself his how i if in into is isn it its itself just let ll
    me more most my myself no nor not now of off on once only or other our ours ourselves
    out over own re same shan she should shouldn so some such than that the their theirs
    them themselves then there these they this those through to too under until up very
    was wasn we were weren what when where which while who whom why will with won would
    wouldn you your yours yourself yourselves ve also can't could've etc eg ie via per
    s t d m o y
    please tell remember recall previously last time told say said ask asked know anything
    something thing things someone way ways get gets got getting does did done make made
    happen happened happens we've i'm i've i'd yes ok okay hi hello thanks thank""".split()
)

_STEM_EXCEPTIONS = {
    "using": "use", "used": "use", "uses": "use", "user": "user", "users": "user",
    "alias": "alias", "aliases": "alias", "news": "news", "series": "series",
    "status": "status", "analysis": "analysis", "bias": "bias", "canvas": "canvas",
    "is": "is", "was": "was", "has": "has", "does": "does", "this": "this",
}
_VOWELS = frozenset("aeiouy")


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def _restore(s: str) -> str:
    """After cutting -ing/-ed: runn -> run, but cod -> code, tun -> tune."""
    if len(s) > 3 and s[-1] == s[-2] and s[-1] not in "lsz" and s[-1] not in _VOWELS:
        return s[:-1]
    if len(s) == 3 and s[0] not in _VOWELS and s[1] in _VOWELS and s[2] not in _VOWELS and s[2] not in "wxy":
        return s + "e"
    return s


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """A light English stemmer: plurals, -ing, -ed, -ly and a final -e.

    Only plain ASCII letters are stemmed; anything else is returned unchanged. It aims
    at making ``encode``/``encoding``/``encoded`` meet, not at linguistic accuracy.
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    if word in _STEM_EXCEPTIONS:
        return _STEM_EXCEPTIONS[word]
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    if w.endswith("ing") and len(w) >= 6 and _has_vowel(w[:-3]):
        w = _restore(w[:-3])
    elif w.endswith("ed") and len(w) >= 5 and _has_vowel(w[:-2]):
        w = _restore(w[:-2])
    elif w.endswith("ly") and len(w) >= 7:
        w = w[:-2]
    if len(w) >= 5 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


_CACHE_LIMIT = 200_000
_word_cache: dict[str, tuple[tuple[str, int], ...]] = {}  # word -> its terms and kinds
_plain_cache: dict[str, tuple[str, ...]] = {}  # word -> its terms


def _words(token: str) -> tuple[tuple[str, int], ...]:
    """Terms of one lowercased Latin-script token."""
    if "'" in token:  # user's -> user, don't -> don (a stopword)
        token = token.split("'", 1)[0]
    parts = _JOINERS.split(token) if ("_" in token or "-" in token) else [token]
    out = []
    for part in parts:
        # camelCase and brand names (MySQL, GitHub, OOMKilled) stay whole
        if not part or part in STOPWORDS or (len(part) == 1 and not part.isdigit()):
            continue
        term = stem(part)
        if term not in STOPWORDS:  # "times", "asking" go the way of "time", "ask"
            out.append((term, WORD))
    if len(parts) > 1 and len(token) <= 64:
        out.append((token, COMPOUND))
    return tuple(out)


def _cjk_terms(run: str) -> list[str]:
    """Terms of one run of CJK characters: bigrams, or a lone character."""
    out: list[str] = []
    for segment in _PARTICLES.split(run):
        n = len(segment)
        if n > 2:
            pairs = [segment[i : i + 2] for i in range(n - 1)]
            if not _STOP_BIGRAMS.isdisjoint(pairs):
                pairs = [p for p in pairs if p not in _STOP_BIGRAMS]
            out += pairs
        elif n == 2:
            if segment not in _STOP_BIGRAMS:
                out.append(segment)
        elif n == 1 and segment not in STOP_CHARS:
            out.append(segment)
    return out


def _cjk(run: str) -> tuple[tuple[str, int], ...]:
    return tuple((t, CJK_BIGRAM if len(t) == 2 else CJK_CHAR) for t in _cjk_terms(run))


def _pieces(text: str) -> list[tuple[str, str]]:
    """(CJK run, "") or ("", word) pieces of ``text``, lowercased and NFKC-normalised."""
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    if len(_word_cache) > _CACHE_LIMIT or len(_plain_cache) > _CACHE_LIMIT:
        _word_cache.clear()
        _plain_cache.clear()
    out: list[tuple[str, str]] = []
    for token in _TOKEN.findall(text.lower()):
        if token.isascii():
            out.append(("", token))
            continue
        parts = _CJK_SPLIT.split(token)
        if len(parts) == 1:
            out.append(("", token))
            continue
        for i, part in enumerate(parts):
            if i % 2:
                out.append((part, ""))
            else:
                part = part.strip("'_-")
                if part:
                    out.append(("", part))
    return out


def analyze(text: str) -> list[tuple[str, int]]:
    """Terms of ``text`` in order, each with its kind (WORD, COMPOUND, CJK_BIGRAM, CJK_CHAR)."""
    if not text:
        return []
    out: list[tuple[str, int]] = []
    words = _word_cache
    for cjk, word in _pieces(text):
        if word:
            found = words.get(word)
            if found is None:
                found = words[word] = _words(word)
            out += found
        else:
            out += _cjk(cjk)
    return out


def terms(text: str) -> list[str]:
    """The search terms of ``text``, in order, repeats kept."""
    if not text:
        return []
    out: list[str] = []
    plain = _plain_cache
    for cjk, word in _pieces(text):
        if word:
            found = plain.get(word)
            if found is None:
                found = plain[word] = tuple(t for t, _ in _words(word))
            out += found
        else:
            out += _cjk_terms(cjk)
    return out


def is_cjk(term: str) -> bool:
    """True when ``term`` is a CJK bigram or character (tested without a regex: compiling a class of
    the CJK ranges costs a process about a millisecond)."""
    return bool(term) and not term.isascii() and all(map(is_cjk_char, term))
