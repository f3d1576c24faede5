"""What the offline engine makes of a group of turns: a title (the problem and the fix, in the
turns' words), a summary (the rule restated, else the fix), tags, aliases and a memory id a person
would keep. Everything is extractive: no word is made up."""

from __future__ import annotations

import re

from ...cjk import HAN
from ...search import glossary
from ...search.tokenize import STOPWORDS

CJK = re.compile(f"[{HAN}]")  # one Chinese character
SENTENCE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+|(?<=[。！？])|\n+")  # not inside "e.g. x.y"
# an error as programs print it: CODES_LIKE_THIS, SomethingError, ERR ..., a quoted message
ERROR_TOKEN = re.compile(
    r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b|\b(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception|BackOff)\b"
    r"|\bERR [a-z][a-z ]+[a-z]"
)
ERROR_PHRASE = re.compile(
    r"(?:报错|报|errors? ?[:：]|says|fails? with|failed with|exits? with)\s*[:：]?\s*"
    r"([A-Za-z][^。，,；;！!？?\n]{6,80})",
    re.I,
)
PROBLEM = re.compile(
    r"\b(errors?|fail(s|ed|ing|ure)?|broken|crash\w*|exception|timed out|times out|timing out|"
    r"garbled|hangs?|stuck|can'?t|cannot|doesn'?t work|not working|keeps? \w+ing|wrong|off by|"
    r"missing|leak\w*|too slow|out of memory|refused|denied|crashloopbackoff)\b|报错|挂了|失败|乱码|"
    r"出错|异常|不工作|连不上|超时|差了|崩溃|爆了|卡住|不对|投诉|延迟|积压|一直在涨",
    re.I,
)
FIX = [
    re.compile(p, re.I)
    for p in (
        r"\bthe (?:fix|solution|workaround|answer) (?:is|was)(?: to)?\s*[:：]?\s*(?P<x>.+)",
        r"\b(?:fixed|solved) (?:it |this |that )?by\s+(?P<x>.+)",
        r"^(?:fixed|solution|workaround|fix)\s*[:：]\s*(?P<x>.+)",
        r"(?:解决办法|解决方法|修复方法|办法)[是:：]\s*(?P<x>.+)",
        r"(?P<x>(?:已经)?改成.+)",
        r"^(?:so |then |just )?(?P<x>(?:use|add|added|set|install|raise|raised|increase|run|enable|disable|"
        r"switch|move|moved|"
        r"upgrade|pin|store|convert|replace|replaced|reuse|restart|re-added|put)\b.+)",
        r"^(?:i|we)(?: have| 've|'ve)? (?P<x>(?:added|set|installed|raised|increased|moved|switched|replaced|changed|"
        r"pinned|upgraded|converted|rebuilt)\b.+)",
    )
]
# what a restated rule starts with; the rest is the rule
RULE_LEAD = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|got it|noted|understood|agreed|confirmed|好的|明白|收到|确认\w{0,3})"
    r"(?P<colon>\s*[:：])?[,，.。!！]?\s*)*"
    r"(?P<rule>(?:please )?remember(?: that| to)?|note(?: to self)?|from now on|going forward|in the future|"
    r"lesson(?: for the team| learned)?|rule|记住|记得|以后|今后|从现在起|约定)?\s*[:：,，]?\s*",
    re.I,
)
RULE = re.compile(
    r"\b(always|never|must|make sure|from now on|going forward|every)\b|以后|今后|一律|务必|必须|不要|"
    r"千万|一定要|记住|记得|统一|保持|^\W*keep\b",
    re.I,
)
LEAD = re.compile(
    r"^\W*(?:(?:hi|hello|hey|ok(?:ay)?|so|well|also|separately|by the way|btw|yes|right)\b[!,.]?\s*)*"
    r"(?:the |our |my |a |an )?",
    re.I,
)
ABBREVIATION = re.compile(r"(?:[a-z]\.)+[a-z]?", re.I)  # e.g, i.e: never a tag nor part of an id
IDENT = re.compile(  # dotted, snake, kebab and camel names, names with digits: ASCII, so never a Chinese run
    r"[A-Za-z]\w*(?:[_.:/=+-]+\w+)+|\b[a-z]+[A-Z][A-Za-z0-9]*|\b[A-Za-z]+\d\w*|\b\d+[A-Za-z]\w*", re.A
)
ID_SKIP = frozenset(
    """shows show showing fails failed fail failing with again keeps kept get got into onto
    nightly daily new old first every each all some must should always never using use used uses set will one
    be is are was were has have had do does did it its this that there their our his her your""".split()
)


def is_cjk(text: str) -> bool:
    return len(CJK.findall(text)) * 2 >= len(re.findall(r"[A-Za-z]+", text)) and bool(CJK.search(text))


def sentences(text: str) -> list:
    return [x.strip() for x in SENTENCE.split(text.strip()) if x and x.strip()]


def clause(text: str, words: int = 9, chars: int = 30) -> str:
    """The head of a statement: up to the first break, at most `words` words (or `chars` CJK chars)."""
    text = text.strip().rstrip(".!?。！？")
    cuts = ", not |, but |; |, so |, then |, and then |: RUN |, which | when | because | since |，然后|，再|；| - "
    for cut in cuts.split("|"):
        at = text.find(cut)
        if at > 8:
            text = text[:at]
    head, colon, tail = text.partition(": ")
    if colon and len(head.split()) >= 3:
        text = head
    if is_cjk(text):
        parts = re.split(r"[，,]", text)
        text = parts[0] if len(parts[0]) >= 6 or len(parts) == 1 else parts[0] + "，" + parts[1]
        return cut_at(text, chars).rstrip("，, ")
    ws = text.split()
    return " ".join(ws[:words]).rstrip(",;:")


def cut_at(text: str, chars: int) -> str:
    """The first `chars` characters of a text without spaces, an identifier cut there kept whole."""
    cut = text[:chars]
    if cut[-1:].isascii() and cut[-1:].strip():
        cut += re.match(r"[A-Za-z0-9_=.:/+-]*", text[chars:]).group()  # type: ignore[union-attr]
    return cut


def capital(text: str) -> str:
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return text[:1].upper() + text[1:] if text[:1].islower() and not IDENT.fullmatch(first) else text


def error_tokens(text: str) -> list:
    """Error strings as the turns print them, the most specific first."""
    found = [m.group().strip() for m in ERROR_TOKEN.finditer(text)]
    found.sort(key=lambda t: 0 if re.fullmatch(r"[A-Z0-9_]+", t) else 1)
    phrases = [clause(m.group(1), 8, 40) for m in ERROR_PHRASE.finditer(text)]
    return list(dict.fromkeys(found + [p for p in phrases if len(p.split()) >= 3]))


def fix_of(text: str) -> tuple[str, str] | None:
    """(the sentence that states a fix, the fix itself) in a turn, or None."""
    for s in sentences(text):
        if s.rstrip().endswith(("?", "？")):
            continue
        for rx in FIX:
            m = rx.search(s)
            if m and len(m.group("x").split()) + len(CJK.findall(m.group("x"))) // 2 >= 2:
                return s, clause(m.group("x"))
    return None


def problem_of(text: str) -> tuple[str, str] | None:
    """(the sentence that states a problem, a short name for it: component and error) or None."""
    for s in sentences(text):
        if s.rstrip().endswith(("?", "？")) or not PROBLEM.search(s):
            continue
        errors = [t for t in error_tokens(s) if len(t.split()) <= 6]
        body = LEAD.sub("", s, count=1)
        if errors:
            first = min((body.find(e) for e in errors if body.find(e) >= 0), default=-1)
            m = ERROR_TOKEN.search(body)
            if m is not None and (first < 0 or m.start() < first):
                first = m.start()
            before = body[:first].strip(" :[(") if first > 0 else ""
            words = before.split()[-6:]
            if is_cjk(before):
                before = re.sub(r"[，,。：:\s]*(报错|报|出现|提示)?[，,。：:\s]*$", "", before)
                before = re.split(r"[，,。]", before)[-1].strip()
                return s, f"{before} {errors[0]}".strip()
            return s, capital(" ".join(words + [errors[0]]).strip())
        body = re.sub(r"\s*(again|又)\s*$", "", body.rstrip(".!?。！？"))
        return s, capital(clause(body, 10, 20))
    return None


def rule_of(text: str) -> str | None:
    """The rule a turn restates ("Noted: always ...", "记住：..."), lead words removed, or None."""
    for s in sentences(text):
        m = RULE_LEAD.match(s)
        if m is None:  # it matches any text (every part of it is optional)
            continue
        rest = s[m.end() :].strip()
        if s.rstrip().endswith(("?", "？")) or not (RULE.search(s) or m.group("colon") or m.group("rule")):
            continue
        if len(rest.split()) + len(CJK.findall(rest)) // 2 >= 4:
            return capital(rest)
    return None


def identifiers(text: str) -> list:
    """Settings, packages, error codes and other names written as code."""
    found = [m.group().strip(".:/=-+") for m in IDENT.finditer(text)]
    found = [w for w in found if len(w) >= 3 and not ABBREVIATION.fullmatch(w)]
    return list(dict.fromkeys(w for w in found if not w.lower().startswith(("http", "www"))))


def memory_id(problem: str | None, fix: str | None, title: str) -> str:
    """A short readable id: the component, then the identifiers and the last word of the fix."""
    from ...paths import slugify

    def words(text: str) -> list:
        out = []
        for w in re.findall(r"[A-Za-z0-9][\w.+-]*[A-Za-z0-9]|[A-Za-z0-9]|" f"[{HAN}]+", text or ""):
            if CJK.match(w):
                out.append(max(re.split(f"[{_PARTICLES}]", w), key=len)[:4])
            elif w.lower() not in ID_SKIP and w.lower() not in STOPWORDS and not ABBREVIATION.fullmatch(w):
                out.append(w)
        return out

    if problem and fix:
        head = [w for w in words(problem) if not re.search(r"[A-Z]{2,}_|Error$", w)][:2] or words(problem)[:2]
        tail = words(fix)
        named = [w for w in tail if re.search(r"[_.:=-]|[A-Za-z]\d|\d[A-Za-z]", w)][:2]
        last = [w for w in tail if w not in named and re.fullmatch(r"[a-z][a-z]+|[A-Z][a-z]+", w)][-1:]
        picked = head + [w for w in tail if w in named or w in last]
    else:
        all_words = words(title)
        named = [w for w in all_words if re.search(r"[_.:=-]|[A-Za-z]\d|\d[A-Za-z]", w)]
        plain = [w for w in all_words if w not in named]
        keep = set(named[:2]) | set(plain[: max(2, 4 - len(named[:2]))])
        picked = [w for w in all_words if w in keep]
    slug = slugify(" ".join(dict.fromkeys(picked))) if picked else slugify(title)
    if len(slug) > 48:
        slug = slug[:48].rsplit("-", 1)[0]
    return slug.strip("-") or slugify(title)


_PARTICLES = "的了又是在把被也都就还很吗呢吧啊我你他她它们这那和与及或要会能"


def other_language(text: str, cjk_title: bool) -> str:
    """An alias in the other language: its words for the terms of `text`."""
    words = glossary.english_for(text) if cjk_title else glossary.chinese_for(text)
    return " ".join(words)
