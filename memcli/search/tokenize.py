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

from memcli.cjk import CJK, is_cjk_char

WORD = 0  # a Latin (or other alphabetic) word or number, stemmed
COMPOUND = 1  # the whole of snake_case / kebab-case, as written (unstemmed)
CJK_BIGRAM = 2
CJK_CHAR = 3

_TOKEN = re.compile(r"[^\W_]+(?:['_\-][^\W_]+)*")
_JOINERS = re.compile(r"['_\-]")
# Compiled on the first text that needs them (a class of the CJK ranges and the particles cost a
# process ~2 ms to compile; most turns are English, and should-recall tokenises nothing).
_CJK_SPLIT = None  # ([CJK]+): a token's CJK runs
_PARTICLES = None  # the function words and characters that split a CJK run

# Function words and characters that split a CJK run: they glue words together but are
# (almost) never the inside of a word worth finding. Splitting, rather than dropping
# their bigrams, also keeps pairs like 久可 (多久可以) from being formed.
_FUNCTION_WORDS = """可以 什么 怎么 为什么 如何 哪里 哪个 哪些 这个 那个 这样 那样 怎样 时候 没有
    因为 所以 但是 如果 应该 还是 就是 已经 之前 以前 之后 以后 上次 记得 自己 现在 然后
    其实 知道 告诉 请问 是否 关于 有关 帮我 多久 多少 需要 觉得 比较 非常 可能""".split()
_PARTICLE_CHARS = (
    "的了吗呢吧啊呀嘛哦么是在和与及或把被我你他她它们这那都也就很又而却什怎哪几不のはがをにでともへやかねよ"
)


def _particles_pattern() -> str:
    by_first: dict[str, list[str]] = {}
    for word in _FUNCTION_WORDS:
        by_first.setdefault(word[0], []).append(word[1:])
    groups = [
        re.escape(first) + "(?:" + "|".join(sorted(map(re.escape, rest), key=len, reverse=True)) + ")"
        for first, rest in sorted(by_first.items())
    ]
    return "|".join(groups) + f"|[{_PARTICLE_CHARS}]"


def _cjk_patterns() -> tuple:
    """(_CJK_SPLIT, _PARTICLES), compiled once per process, when first needed."""
    global _CJK_SPLIT, _PARTICLES
    if _PARTICLES is None:
        _CJK_SPLIT, _PARTICLES = re.compile(rf"([{CJK}]+)"), re.compile(_particles_pattern())
    return _CJK_SPLIT, _PARTICLES


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

# Words the suffix rules would cut into another word or a stub: kept as they are (Porter2's own
# exceptional forms among them), or given their stem.
_STEM_EXCEPTIONS = {
    "user": "user",
    "users": "user",
    "alias": "alias",
    "aliases": "alias",
    "news": "news",
    "series": "series",
    "status": "status",
    "analysis": "analysis",
    "bias": "bias",
    "canvas": "canvas",
    "atlas": "atlas",
    "cosmos": "cosmos",
    "is": "is",
    "was": "was",
    "has": "has",
    "does": "does",
    "this": "this",
    "skis": "ski",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "early": "early",
    "only": "only",
    "ugly": "ugly",
    "idly": "idly",
    "gently": "gentle",
    "inning": "inning",
    "outing": "outing",
    "canning": "canning",
    "herring": "herring",
    "earring": "earring",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
    "morning": "morning",
    "evening": "evening",
    "nothing": "nothing",
    "ceiling": "ceiling",
    "beijing": "beijing",
    "nanjing": "nanjing",
    "chongqing": "chongqing",
    "hundred": "hundred",
    "embed": "embed",
    "andes": "andes",
    "howe": "howe",
}
# Porter2's R1 starts after these (generous, communism, arsenal keep their stem whole).
_R1_PREFIXES = ("gener", "commun", "arsen")
_VOWELS = frozenset("aeiouy")
_DOUBLES = frozenset(("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"))
_LI_ENDING = frozenset("cdeghkmnrt")


def _r1(w: str) -> int:
    """Start of Porter's region R1: after the first consonant that follows a vowel."""
    if w.startswith(_R1_PREFIXES):
        return next(len(p) for p in _R1_PREFIXES if w.startswith(p))
    for i in range(1, len(w)):
        if w[i] not in _VOWELS and w[i - 1] in _VOWELS:
            return i + 1
    return len(w)


def _r2(w: str, r1: int) -> int:
    for i in range(r1 + 1, len(w)):
        if w[i] not in _VOWELS and w[i - 1] in _VOWELS:
            return i + 1
    return len(w)


def _short_syllable(w: str) -> bool:
    """``w`` ends in a short syllable: consonant, vowel, consonant (not w, x or Y), or is a
    vowel and a consonant."""
    if len(w) == 2:
        return w[0] in _VOWELS and w[1] not in _VOWELS
    return len(w) > 2 and w[-3] not in _VOWELS and w[-2] in _VOWELS and w[-1] not in _VOWELS and w[-1] not in "wxY"


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """An English stemmer for inflections: Porter2's (the English Snowball stemmer's) rules for
    plurals, -ed, -ing, -ly and a final -e or double l, with its conditions (speed keeps its
    "eed", state its "e"; R1, short syllables), and without its derivational steps, which merge
    words of different meaning (business, busy). A final y stays a y (policies, policy ->
    policy). A few words the rules would cut into another word or a stub are kept.

    Only plain ASCII letters are stemmed; anything else is returned unchanged.
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    found = _STEM_EXCEPTIONS.get(word)
    if found is not None:
        return found
    w = word
    if "y" in w:  # a y that starts the word or follows a vowel is a consonant
        w = ("Y" + w[1:]) if w[0] == "y" else w
        w = "".join("Y" if c == "y" and i and w[i - 1] in _VOWELS else c for i, c in enumerate(w))
    last = w[-1]
    if last == "s":
        if w.endswith("sses"):
            w = w[:-2]
        elif w.endswith(("ies", "ied")):
            w = w[:-3] + "y" if len(w) > 4 else w[:-1]
        elif not w.endswith(("ss", "us", "is")) and any(c in _VOWELS for c in w[:-2]):
            w = w[:-1]
        found = _STEM_EXCEPTIONS.get(w)  # mornings, earrings
        if found is not None:
            return found
    elif last == "d" and w.endswith("ied"):
        w = w[:-3] + "y" if len(w) > 4 else w[:-1]
    if w.endswith(("ed", "ing", "ly")):
        if w.endswith(("eed", "eedly")):
            cut = 3 if w.endswith("eed") else 5
            if len(w) - cut >= _r1(w):
                w = w[:-cut] + "ee"
        else:
            cut = 5 if w.endswith("ingly") else 4 if w.endswith("edly") else 3 if w.endswith("ing") else 2
            base = w[:-cut]
            if w.endswith("ly") and cut == 2:
                if len(base) >= 3 and base[-1] in _LI_ENDING and len(base) >= _r1(w):
                    w = base
            elif any(c in _VOWELS for c in base):
                if cut == 3 and len(base) == 2 and base[1] == "y":  # dying, vying
                    w = base[0] + "ie"
                elif base.endswith(("at", "bl", "iz")):
                    w = base + "e"
                elif base[-2:] in _DOUBLES:
                    w = base if len(base) == 3 and base[0] in _VOWELS else base[:-1]  # add, hopping
                elif _r1(base) >= len(base) and _short_syllable(base):
                    w = base + "e"  # hoping -> hope
                else:
                    w = base
    if w[-1] == "e":
        r1 = _r1(w)
        n = len(w) - 1
        if n >= r1 and (n >= _r2(w, r1) or not _short_syllable(w[:-1])):
            w = w[:-1]
    elif w.endswith("ll"):
        r1 = _r1(w)
        if len(w) - 1 >= _r2(w, r1):
            w = w[:-1]
    return w.replace("Y", "y") if "Y" in w else w


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
    for segment in (_PARTICLES or _cjk_patterns()[1]).split(run):
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
        parts = (_CJK_SPLIT or _cjk_patterns()[0]).split(token)
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


@lru_cache(maxsize=8192)
def term_set(text: str) -> frozenset:
    """The distinct terms of a passage (a section, a turn, a paragraph), kept: a server meets the
    same passages recall after recall (a day's episode log grows by a few turns), and tokenises
    only the new ones."""
    return frozenset(terms(text))


def is_cjk(term: str) -> bool:
    """True when ``term`` is a CJK bigram or character (tested without a regex: compiling a class of
    the CJK ranges costs a process about a millisecond)."""
    return bool(term) and not term.isascii() and all(map(is_cjk_char, term))
