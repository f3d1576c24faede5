"""The offline engine: extractive rules, no model.

A turn is a candidate when someone states something worth keeping: a lesson or a fix ("the fix
was", "root cause", "turned out", 原因是, 解决了, 踩坑), a rule ("from now on", "always",
"never", "make sure", 以后, 不要, 记住), a decision ("we decided", 决定), a preference ("I
prefer", "my favorite", 喜欢), or a fact about the speaker stated plainly ("I went", "I've been",
"I'm planning", "my kids", 我是, 我们在). Each rule adds weight; questions, short reactions and
turns about the other person take weight away; names, numbers and dates add a little. The best
turns of the material, at most `budget` per 100 turns and above a floor, become proposals of at
most three turns: the statement, the reply that confirmed it, what the same speaker said one
exchange before or after it (when that states something too: a follow-up, the cause, the fix), and
a turn next to it that shares its words.

Deterministic: the same material gives the same proposals, in the same order.
"""

from __future__ import annotations

import math
import re

# (pattern, weight, memory type or None, tag): the cues, English then Chinese
_CUES = [
    (r"\bremember (that|to)\b|\bnote to self\b|\bkeep in mind\b|\bdon'?t forget\b", 2.4, "procedure", "rule"),
    (r"\bfrom now on\b|\bgoing forward\b|\bin the future\b|\bnext time\b", 2.4, "procedure", "rule"),
    (r"\b(we|i|they) (have |had )?decided\b|\bdecision (is|was)\b|\bwe('ll| will) go with\b|\bwe agreed\b",
     2.2, "fact", "decision"),
    (r"\bthe (fix|solution|workaround|answer) (is|was)\b|\bfixed (it|this|that)? ?by\b|\bsolved (it|this)? ?by\b"
     r"|\bworks? now\b|\bthat (worked|did it|fixed it)\b", 2.4, "lesson", "fix"),
    (r"\broot cause\b|\bturn(s|ed) out\b|\bthe (problem|issue|bug|cause) (is|was)\b|\bbecause of\b|\bcaused by\b",
     2.0, "lesson", "cause"),
    (r"\blesson\b|\blearn(ed|t)\b|\bgotcha\b|\bpitfall\b|\bmistake\b|\bwatch out\b|\bbe careful\b", 1.6,
     "lesson", "lesson"),
    (r"\balways\b|\bnever\b|\bmake sure\b|\bdon'?t ever\b|\bmust\b|\bshould (always|never)\b|\bavoid\b",
     1.4, "procedure", "rule"),
    (r"\bi (really )?(prefer|like|love|enjoy|hate|can'?t stand)\b|\bmy (favou?rite|go-to)\b|\bi'?m (a )?(big )?fan of\b"
     r"|\bi'?m (really )?(into|passionate about|keen on)\b", 1.6, "preference", "preference"),
    (r"记住|记得|以后|今后|下次|从现在起", 2.4, "procedure", "rule"),
    (r"决定|定了|约定|商量好", 2.2, "fact", "decision"),
    (r"原因是|根本原因|原来是|问题出在|因为", 2.0, "lesson", "cause"),
    (r"解决了|修好了|搞定了|修复|解决办法|解决方法|办法是|改成", 2.4, "lesson", "fix"),
    (r"踩坑|教训|坑|注意", 1.6, "lesson", "lesson"),
    (r"不要|别再|千万|一定要|务必|总是|永远|从不|必须", 1.4, "procedure", "rule"),
    (r"喜欢|偏好|习惯|讨厌|最爱", 1.6, "preference", "preference"),
]
# how people state facts about themselves: first person with an event, a state, a plan or a possession
_FACTS = [
    (r"\bi (just |recently |finally |also |really |actually )?(went|got|bought|started|joined|moved|took|made|met|"
     r"visited|finished|won|lost|ran|signed|adopted|graduated|painted|wrote|built|received|found|tried|learned|quit|"
     r"left|saw|had|felt|began|became|gave|kept|read|heard|taught|spent|drove|flew|grew|fell|broke|sold|chose|"
     r"[a-z]+ed)\b", 1.4),
    (r"\b(i'?m|we'?re|i am|we are) (\w+ly )?[a-z]+ing\b|\bi'?m (so |really |very )?(lucky|proud|grateful|thankful|"
     r"excited|inspired|passionate|interested|married|single|retired|pregnant)\b", 1.0),
    (r"\bi'?ve (been|got|had|started|decided|always|never|just|recently|finally)\b|\bi have (been|a|an|two|three)\b", 1.2),
    (r"\bi'?m (a|an|the|from|working|studying|going to|gonna|planning|thinking of|starting|learning|training|"
     r"currently|still|now)\b|\bi am (a|an|the|from|working|going to|planning)\b", 1.1),
    (r"\bi (work|live|study|teach|volunteer|play|practice|practise|run|own|use)\b|\bi'?ll be\b", 1.1),
    (r"\bi (plan|want|hope|intend|aim) to\b|\bgonna\b|\bmy (goal|plan|dream) (is|was)\b", 1.0),
    (r"\bmy (wife|husband|partner|son|daughter|kids|children|family|mom|mother|dad|father|sister|brother|"
     r"friend|friends|dog|cat|pet|job|boss|team|house|car|name|birthday)\b", 1.0),
    (r"\bwe (went|got|bought|started|moved|had|made|visited|took|adopted|are|have|just|recently|finally|[a-z]+ed)\b",
     0.9),
    (r"\bmy (youngest|oldest|eldest|son|daughter|kids?|family|fam)\b.*\b(\w+ed|took|went|got|is|was)\b", 0.6),
    (r"\b(yesterday|last (week|weekend|month|year|night|saturday|sunday|friday)|recently|ago|since|"
     r"next (week|month|year|weekend)|this (week|weekend|month|summer))\b", 0.7),
    (r"我是|我在|我们在|我的|我们的|我刚|我最近|我已经|我打算|我准备|我开始|我去了|我买了", 1.2),
    (r"昨天|上周|上个月|最近|去年|明天|下周", 0.6),
]
_REACTION = re.compile(r"^(wow|oh|aw+|haha|lol|omg|yay|cool|nice|awesome|amazing|great|congrat|that'?s|thanks|"
                       r"thank you|sounds|so glad|glad|i'?m (so )?(glad|happy|sorry) (to hear|for you)|"
                       r"hey|hi|hello|好的?|哈哈|谢谢|太好了|不错)\b", re.I)
_CONFIRM = re.compile(r"^\W*(yes|yeah|yep|right|exactly|agreed|true|ok|okay|got it|noted|will do|confirmed|"
                      r"that worked|it worked|works|perfect|correct|好的?|对|是的|没错|确认|明白|收到|可以|行)\b", re.I)
_YOU = re.compile(r"\b(you|your|you're|you've|yourself)\b|你|您", re.I)
_ME = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|we|our|we're|we've|us)\b|我", re.I)
_SPECIFIC = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b|\d|[A-Za-z]+[_./-][A-Za-z0-9]+")
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_COMPILED: list | None = None

FLOOR = 1.5  # a turn scoring below this is never proposed
MAX_QUOTES = 3
MIN_CAP = 2  # proposals a short material may still give
SAME_SPEAKER_MIN = 0.5  # a follow-up by the same speaker, one exchange away, joins when it states something
NEIGHBOUR_MIN = FLOOR - 0.5  # a turn next to the statement joins at this weight when it shares its words
SHARED_MIN = 0.25


def NEIGHBOURS(n: int) -> tuple:
    return (n + 1, n - 1, n + 2, n - 2)

_LEAD = re.compile(r"^\W*(?:(?:please )?remember(?: that| to)?|note(?: to self)?|from now on|going forward|"
                   r"the (?:fix|solution|lesson|rule|answer) (?:is|was)|lesson(?: learned)?|rule|tip|记住|记得|以后|注意)"
                   r"\s*[:：,，]?\s*", re.I)


def _rules():
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = ([(re.compile(p, re.I), w, t, tag) for p, w, t, tag in _CUES],
                     [(re.compile(p, re.I), w) for p, w in _FACTS])
    return _COMPILED


def _sentence_weight(sentence: str) -> tuple[float, str, list, float]:
    """(cue weight plus fact weight, memory type, tags, cue weight) of one sentence."""
    cues, facts = _rules()
    s, kind, tags, best = 0.0, "fact", [], 0.0
    for rx, w, t, tag in cues:
        if rx.search(sentence):
            s += w
            if w > best:
                best, kind = w, t
            if tag not in tags:
                tags.append(tag)
    fact = sum(w for rx, w in facts if rx.search(sentence))
    s += min(fact, 2.6)
    if sentence.rstrip().endswith(("?", "？")):
        s -= 1.5  # a question states nothing
    elif _REACTION.match(sentence):
        s -= 0.7
    return s, kind, tags, best


def score(text: str) -> tuple[float, str, list]:
    """(weight, memory type, tags) of one turn: its best sentence, then what the whole turn shows
    (names and numbers, length, only questions, talk about the other person)."""
    flat = " ".join(text.split())
    if not flat:
        return 0.0, "fact", []
    sentences = [x.strip() for x in _SENTENCE.findall(flat) if x.strip()] or [flat]
    weighed = [_sentence_weight(x) for x in sentences]
    s, kind, _, _ = max(weighed, key=lambda w: w[0])
    tags = list(dict.fromkeys(t for w in weighed for t in w[2]))
    if weighed[0][3] or any(w[3] for w in weighed):
        kind = max(weighed, key=lambda w: w[3])[1]
    words = len(flat.split()) if not re.search(r"[\u3400-\u9fff]", flat) else len(flat) // 2
    s += min(len(_SPECIFIC.findall(flat)), 4) * 0.25
    s += 0.4 if words >= 12 else (-0.8 if words < 6 else 0)
    questions = flat.count("?") + flat.count("？")
    if questions and len(sentences) <= questions:
        s -= 1.0  # only questions
    you, me = len(_YOU.findall(flat)), len(_ME.findall(flat))
    if you > me:
        s -= 0.8 * min(you - me, 3)
    return s, kind, tags


def confidence(s: float) -> float:
    return round(1 / (1 + math.exp(-(s - 2.5))), 3)


def _key_sentence(text: str, cue_first: bool = True) -> str:
    """The sentence that carries the statement: the first with a cue, else the first stated one."""
    sentences = [x.strip() for x in _SENTENCE.findall(" ".join(text.split())) if x.strip()]
    if not sentences:
        return " ".join(text.split())
    cues, facts = _rules()
    for x in sentences:
        if any(rx.search(x) for rx, *_ in cues):
            return x
    for x in sentences:
        if "?" not in x and not _REACTION.match(x) and any(rx.search(x) for rx, _ in facts):
            return x
    stated = [x for x in sentences if "?" not in x and not _REACTION.match(x)]
    return (stated or sentences)[0]


def _title(sentence: str) -> str:
    head, colon, tail = sentence.partition(": ")
    if colon and len(tail.split()) >= 4 and any(rx.search(tail) for rx, *_ in _rules()[0]):
        sentence = tail  # "I looked at the logs: the root cause is ..." -> what follows the colon
    rest = _LEAD.sub("", sentence, count=1).strip()
    if len(rest) >= 8:
        sentence = rest[0].upper() + rest[1:]
    words = sentence.rstrip(".!?。！？").split()
    if len(words) <= 1 and len(sentence) > 40:  # Chinese: no spaces
        return sentence[:30].rstrip("，,。") + ("…" if len(sentence) > 30 else "")
    return " ".join(words[:12]) + ("…" if len(words) > 12 else "")


def _said(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 600 else _key_sentence(text)


def _terms(text: str) -> set:
    from ...search.tokenize import terms

    return set(terms(text))


def propose(material: dict, budget: int = 15) -> list[dict]:
    """Proposals (the engines' common format, see memcli.usecases.reflect) for the material."""
    # turns of consecutive sections of one session (or scope) are one thread: a fold makes a section
    # every few turns, and a reply may land in the next one
    thread, threads = None, []
    for item in material["items"]:
        name = (item.get("episode"), (item.get("heading") or "").split(":")[0])
        threads.append(threads[-1] if threads and name == thread else len(threads))
        thread = name
    turns = [(threads[si], ti, t, si) for si, item in enumerate(material["items"]) for ti, t in enumerate(item["turns"])]
    if not turns:
        return []
    scored = []
    for n, (_, _, t, _) in enumerate(turns):
        if t["role"] not in ("user", "assistant"):
            continue
        s, kind, tags = score(t["text"])
        if s >= FLOOR:
            scored.append((s, n, kind, tags))
    cap = max(MIN_CAP, math.floor(budget * len(turns) / 100 + 0.5))
    used: set = set()
    out = []
    for s, n, kind, tags in sorted(scored, key=lambda x: (-x[0], x[1])):  # strongest first: it leads its neighbours
        if len(out) >= cap:
            break
        if n in used:
            continue
        si, ti, t, _ = turns[n]
        quotes = [n]
        confirms: set = set()
        used.add(n)
        mine = _terms(t["text"])
        for m in NEIGHBOURS(n):  # the reply that confirmed it; what was said next to it on its subject
            if len(quotes) >= MAX_QUOTES or not 0 <= m < len(turns) or m in used or turns[m][0] != si:
                continue
            other = turns[m][2]
            if m == n + 1 and other["role"] != t["role"] and _CONFIRM.match(other["text"]):
                quotes.append(m)
                used.add(m)
                if len(other["text"].split()) < 6 and len(other["text"]) < 12:
                    confirms.add(m)  # a bare "ok": evidence, not text (a reply that restates it is both)
                continue
            if other["role"] not in ("user", "assistant"):
                continue
            weight = score(other["text"])[0]
            theirs = _terms(other["text"])
            shared = len(mine & theirs) / min(len(mine), len(theirs)) if mine and theirs else 0.0
            same = other["role"] == t["role"]
            if (same and weight >= SAME_SPEAKER_MIN) or (weight >= NEIGHBOUR_MIN and shared >= SHARED_MIN):
                quotes.append(m)
                used.add(m)
        sentence = _key_sentence(t["text"])
        out.append({"at": n,
            "kind": "new", "title": _title(sentence), "summary": sentence[:300], "type": kind,
            "tags": tags, "text": "\n\n".join(_said(turns[q][2]["text"]) for q in sorted(quotes) if q not in confirms),
            "confidence": confidence(s),
            "evidence": [{"ref": material["items"][turns[q][3]]["ref"], "turn": turns[q][1]} for q in sorted(quotes)],
        })
    out.sort(key=lambda x: x.pop("at"))
    return out
