"""The offline engine: extractive rules, no model (docs/guide/reflect.md says what it proposes).
A turn scores by its best sentence; a fix, a cause or a decision gathers the turns around it while
they share its words (`_lesson_turns`), any other statement at most MAX_QUOTES (`_neighbour_turns`);
`lesson` names each. Deterministic: the same material gives the same proposals, in the same order."""

from __future__ import annotations

import math
import re

from ...search.tokenize import terms
from . import lesson

# what a cue says: (weight, memory type, tag)
RULE, HABIT, DECISION = (2.4, "procedure", "rule"), (1.4, "procedure", "rule"), (2.2, "fact", "decision")
FIX, CAUSE, LESSON = (2.4, "lesson", "fix"), (2.0, "lesson", "cause"), (1.6, "lesson", "lesson")
LIKING = (1.6, "preference", "preference")
# (pattern, weight, memory type, tag): the cues, English then Chinese
_CUES = [
    (r"\bremember (that|to)\b|\bnote to self\b|\bkeep in mind\b|\bdon'?t forget\b", *RULE),
    (r"\bfrom now on\b|\bgoing forward\b|\bin the future\b|\bnext time\b", *RULE),
    (r"\b(we|i|they) (have |had )?decided\b|\bdecision (is|was)\b|\bwe('ll| will) go with\b|\bwe agreed\b", *DECISION),
    (
        r"\bthe (fix|solution|workaround|answer) (is|was)\b|\bfixed (it|this|that)? ?by\b|\bsolved (it|this)? ?by\b"
        r"|\bworks? now\b|\bthat (worked|did it|fixed it)\b|^fix(ed)?:",
        *FIX,
    ),
    (
        r"\broot cause\b|\bturn(s|ed) out\b|\bthe (problem|issue|bug|cause) (is|was)\b|\bbecause of\b|\bcaused by\b",
        *CAUSE,
    ),
    (r"\blesson\b|\blearn(ed|t)\b|\bgotcha\b|\bpitfall\b|\bmistake\b|\bwatch out\b|\bbe careful\b", *LESSON),
    (r"\balways\b|\bnever\b|\bmake sure\b|\bdon'?t ever\b|\bmust\b|\bshould (always|never)\b|\bavoid\b", *HABIT),
    (
        r"\bi (really )?(prefer|like|love|enjoy|hate|can'?t stand)\b|\bmy (favou?rite|go-to)\b"
        r"|\bi'?m (a )?(big )?fan of\b"
        r"|\bi'?m (really )?(into|passionate about|keen on)\b",
        *LIKING,
    ),
    (r"记住|记得|以后|今后|下次|从现在起|规矩|统一用", *RULE),
    (r"决定|定了|约定|商量好", *DECISION),
    (r"原因是|根本原因|原来是|问题出在|因为", *CAUSE),
    (r"解决了|修好了|搞定了|修复|解决办法|解决方法|办法是|改成", *FIX),
    (r"踩坑|教训|坑|注意", *LESSON),
    (r"不要|别再|千万|一定要|务必|总是|永远|从不|必须", *HABIT),
    (r"喜欢|偏好|习惯|讨厌|最爱", *LIKING),
]
# how people state facts about themselves: first person with an event, a state, a plan or a possession
_FACTS = [
    (
        r"\bi (just |recently |finally |also |really |actually )?(went|got|bought|started|joined|moved|took|made|met|"
        r"visited|finished|won|lost|ran|signed|adopted|graduated|painted|wrote|built|received|found|tried|learned|quit|"
        r"left|saw|had|felt|began|became|gave|kept|read|heard|taught|spent|drove|flew|grew|fell|broke|sold|chose|"
        r"[a-z]+ed)\b",
        1.4,
    ),
    (
        r"\b(i'?m|we'?re|i am|we are) (\w+ly )?[a-z]+ing\b|\bi'?m (so |really |very )?(lucky|proud|grateful|thankful|"
        r"excited|inspired|passionate|interested|married|single|retired|pregnant)\b",
        1.0,
    ),
    (
        r"\bi'?ve (been|got|had|started|decided|always|never|just|recently|finally)\b|\bi have (been|a|an|two|three)\b",
        1.2,
    ),
    (
        r"\bi'?m (a|an|the|from|working|studying|going to|gonna|planning|thinking of|starting|learning|training|"
        r"currently|still|now)\b|\bi am (a|an|the|from|working|going to|planning)\b",
        1.1,
    ),
    (r"\bi (work|live|study|teach|volunteer|play|practice|practise|run|own|use)\b|\bi'?ll be\b", 1.1),
    (r"\bi (plan|want|hope|intend|aim) to\b|\bgonna\b|\bmy (goal|plan|dream) (is|was)\b", 1.0),
    (
        r"\bmy (wife|husband|partner|son|daughter|kids|children|family|mom|mother|dad|father|sister|brother|"
        r"friend|friends|dog|cat|pet|job|boss|team|house|car|name|birthday)\b",
        1.0,
    ),
    (
        r"\bwe (went|got|bought|started|moved|had|made|visited|took|adopted|are|have|just|recently|finally|[a-z]+ed)\b",
        0.9,
    ),
    (r"\bmy (youngest|oldest|eldest|son|daughter|kids?|family|fam)\b.*\b(\w+ed|took|went|got|is|was)\b", 0.6),
    (
        r"\b(yesterday|last (week|weekend|month|year|night|saturday|sunday|friday)|recently|ago|since|"
        r"next (week|month|year|weekend)|this (week|weekend|month|summer))\b",
        0.7,
    ),
    (r"我是|我在|我们在|我的|我们的|我刚|我最近|我已经|我打算|我准备|我开始|我去了|我买了", 1.2),
    (r"昨天|上周|上个月|最近|去年|明天|下周", 0.6),
]
_REACTION = re.compile(
    r"^(wow|oh|aw+|haha|lol|omg|yay|cool|nice|awesome|amazing|great|congrat|that'?s|thanks|"
    r"thank you|sounds|so glad|glad|i'?m (so )?(glad|happy|sorry) (to hear|for you)|"
    r"hey|hi|hello|好的?|哈哈|谢谢|太好了|不错)\b",
    re.I,
)
_CONFIRM = re.compile(
    r"^\W*(yes|yeah|yep|right|exactly|agreed|true|ok|okay|got it|noted|understood|will do|confirmed|"
    r"that worked|it worked|works|perfect|correct|好的?|对|是的|没错|确认|明白|收到|可以|行)\b",
    re.I,
)
_YOU = re.compile(r"\b(you|your|you're|you've|yourself)\b|你|您", re.I)
_ME = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|we|our|we're|we've|us)\b|我", re.I)
_SPECIFIC = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b|\d|[A-Za-z]+[_./-][A-Za-z0-9]+")

FLOOR = 1.5  # a turn scoring below this is never proposed
MAX_QUOTES = 3
MIN_CAP = 4  # proposals a short material may still give (a working session holds a few lessons)
SAME_SPEAKER_MIN = 0.5  # a follow-up by the same speaker, one exchange away, joins when it states something
NEIGHBOUR_MIN = FLOOR - 0.5  # a turn next to the statement joins at this weight when it shares its words
SHARED_MIN = 0.25
_THREAD = re.compile(r"^(session|scope) [^\s:]+")  # "session a: 4 turns folded ...", "session a cleared"
MAX_LESSON = 6  # turns one lesson quotes at most (reflect.MAX_EVIDENCE)
_ACK = re.compile(
    r"^\W*(great|perfect|nice|cool|awesome|excellent|thanks|thank you|confirmed|works( now)?|it works|"
    r"(that|it|this) (worked|works|did it|fixed it)|yes|yep|yeah|ok(ay)?|got it|noted|understood|will do|"
    r"sounds good|done|好的?|可以了|行|没问题|确认|收到|明白|谢谢|太好了|成功了|搞定|记下了|"
    r"改(?:了|完)(?:以后|之后)?好了)",
    re.I,
)
_ANAPHOR = re.compile(
    r"^\W*(please )?(remember|note|keep in mind|don'?t forget) (that|this|it)( for (next time|later|"
    r"the future))?\W*$|^\W*(记住|记下|记一下)(这个|这点|了)?\W*$",
    re.I,
)
_SHIFT = re.compile(
    r"^\W*(?:ok(?:ay)?,?\s*)?(separately|by the way|btw|another thing|unrelated|on another note|one more thing|next:|"
    r"另外|顺便|还有一件事|换个话题)",
    re.I,
)
# cue words: a turn's words shared with its lesson never count them
_FILLER = set(
    terms(
        """fix fixed cause root problem issue solution work worked great good next note must always never
        every sure need use like look check see 问题 原因 解决 好的 可以 记住 以后"""
    )
)


_LEAD = re.compile(
    r"^\W*(?:(?:separately|by the way|btw|另外|顺便)[,，]?\s*)?"
    r"(?:(?:please )?remember(?: that| to)?|note(?: to self)?|from now on|going forward|"
    r"(?:we|i) (?:have )?decided(?: that| to)?|decision|"
    r"the (?:fix|solution|lesson|rule|answer) (?:is|was)|lesson(?: learned)?|rule|tip|记住|记得|以后|注意)?"
    r"\s*[:：,，]?\s*",
    re.I,
)


_CUE_RULES = [(re.compile(p, re.I), w, t, tag) for p, w, t, tag in _CUES]
_FACT_RULES = [(re.compile(p, re.I), w) for p, w in _FACTS]


def _sentence_weight(sentence: str) -> tuple[float, str, list, float]:
    """(cue weight plus fact weight, memory type, tags, cue weight) of one sentence."""
    s, kind, tags, best = 0.0, "fact", [], 0.0
    for rx, w, t, tag in _CUE_RULES:
        if rx.search(sentence):
            s += w
            if w > best:
                best, kind = w, t
            if tag not in tags:
                tags.append(tag)
    fact = sum(w for rx, w in _FACT_RULES if rx.search(sentence))
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
    sentences = lesson.sentences(flat) or [flat]
    weighed = [_sentence_weight(x) for x in sentences]
    s, kind, _, _ = max(weighed, key=lambda w: w[0])
    tags = list(dict.fromkeys(t for w in weighed for t in w[2]))
    if any(w[3] for w in weighed):
        kind = max(weighed, key=lambda w: w[3])[1]
    words = len(flat.split()) if not lesson.CJK.search(flat) else len(flat) // 2
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


def _key_sentence(text: str) -> str:
    """The sentence that carries the statement: the first with a cue, else the first stated one."""
    sentences = lesson.sentences(" ".join(text.split()))
    if not sentences:
        return " ".join(text.split())
    for x in sentences:
        if any(rx.search(x) for rx, *_ in _CUE_RULES):
            return x
    for x in sentences:
        if "?" not in x and not _REACTION.match(x) and any(rx.search(x) for rx, _ in _FACT_RULES):
            return x
    stated = [x for x in sentences if "?" not in x and not _REACTION.match(x)]
    return (stated or sentences)[0]


def _title(sentence: str) -> str:
    head, colon, tail = sentence.partition(": ")
    if colon and len(tail.split()) >= 4 and any(rx.search(tail) for rx, *_ in _CUE_RULES):
        sentence = tail  # "I looked at the logs: the root cause is ..." -> what follows the colon
    rest = _LEAD.sub("", sentence, count=1).strip()
    if len(rest) >= 8:
        sentence = lesson.capital(rest)
    words = sentence.rstrip(".!?。！？").split()
    if len(words) <= 1 and len(sentence) > 40:  # Chinese: no spaces
        short = lesson.cut_at(sentence.rstrip(".!?。！？"), 30)
        return short.rstrip("，,。.") + ("…" if len(short) < len(sentence.rstrip(".!?。！？")) else "")
    return " ".join(words[:12]) + ("…" if len(words) > 12 else "")


def _said(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 600 else _key_sentence(text)


def _terms(text: str) -> set:
    return set(terms(text))


def propose(material: dict, budget: int = 15) -> list[dict]:
    """Proposals (the engines' common format, see memcli.usecases.reflect) for the material."""
    # turns of consecutive sections of one session (or scope) are one thread: a fold makes a section
    # every few turns, and a reply may land in the next one
    thread = None
    threads: list = []
    for item in material["items"]:
        head = item.get("heading") or ""
        m = _THREAD.match(head)
        name = (item.get("episode"), m.group(0) if m else head.split(":")[0])
        threads.append(threads[-1] if threads and name == thread else len(threads))
        thread = name
    turns = [
        (threads[si], ti, t, si) for si, item in enumerate(material["items"]) for ti, t in enumerate(item["turns"])
    ]
    if not turns:
        return []
    texts = [t["text"] for _, _, t, _ in turns]
    mixed = any(lesson.is_cjk(x) for x in texts) and any(
        len(re.findall(r"[A-Za-z]{2,}", x)) >= 3 and not lesson.is_cjk(x) for x in texts
    )
    scored = []
    for n, (_, _, t, _) in enumerate(turns):
        if t["role"] not in ("user", "assistant") or acknowledges(t["text"]):
            continue  # a confirmation is evidence for what it confirms, never a proposal of its own
        s, kind, tags = score(t["text"])
        if s >= FLOOR:
            scored.append((s, n, kind, tags))
    cap = max(MIN_CAP, math.floor(budget * len(turns) / 100 + 0.5))
    used: set = set()
    out: list = []
    for s, n, kind, tags in sorted(scored, key=lambda x: (-x[0], x[1])):  # strongest first: it leads its neighbours
        if len(out) >= cap:
            break
        if n in used:
            continue
        if {"fix", "cause", "decision"} & set(tags):  # a lesson or a decision: the turns that lead to it
            quotes, confirms = _lesson_turns(turns, n, used)
        else:
            quotes, confirms = _neighbour_turns(turns, n, used)
        used.update(quotes)
        shaped = _shape([turns[q][2] for q in quotes], quotes.index(n), kind, mixed)
        text = "\n\n".join(_said(turns[q][2]["text"]) for q in quotes if q not in confirms)
        evidence = [{"ref": material["items"][turns[q][3]]["ref"], "turn": turns[q][1]} for q in quotes]
        out.append({"at": n, "kind": "new", **shaped, "text": text, "confidence": confidence(s), "evidence": evidence})
    out.sort(key=lambda x: x.pop("at"))
    return out


def _neighbour_turns(turns: list, n: int, used: set) -> tuple[list, set]:
    """A statement with the reply that confirmed it and what was said next to it on its subject
    (at most MAX_QUOTES turns): (the turns in order, the bare confirmations among them)."""
    si, _, t, _ = turns[n]
    quotes = [n]
    confirms: set = set()
    mine = _terms(t["text"])
    for m in (n + 1, n - 1, n + 2, n - 2):
        if len(quotes) >= MAX_QUOTES or not 0 <= m < len(turns) or m in used or turns[m][0] != si:
            continue
        other = turns[m][2]
        if _SHIFT.match((other if m > n else t)["text"]):
            continue  # "by the way, ...": another subject starts there
        if m == n + 1 and other["role"] != t["role"] and _CONFIRM.match(other["text"]):
            quotes.append(m)
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
    return sorted(quotes), confirms


def _lesson_turns(turns: list, n: int, used: set) -> tuple[list, set]:
    """The turns of one lesson around its strongest statement: back to the problem it answers (a
    question asking for the fix bridges), forward through the confirmation and the rule restated,
    while the turns share its words and no turn changes the subject. (turns, bare confirmations)."""
    si = turns[n][0]
    group = [n]
    words = _content(turns[n][2]["text"])
    confirms: set = set()

    def usable(m):
        return (
            0 <= m < len(turns) and m not in used and turns[m][0] == si and turns[m][2]["role"] in ("user", "assistant")
        )

    m = n - 1
    while len(group) < MAX_LESSON and usable(m) and not _SHIFT.match(turns[group[0]][2]["text"]):
        text = turns[m][2]["text"]
        mine = _content(text)
        if _SHIFT.match(turns[m + 1][2]["text"]):
            break
        if acknowledges(text):  # a confirmation between this and the fix it confirms, restated here
            if usable(m - 1) and _content(turns[m - 1][2]["text"]) & words:
                group.insert(0, m)
                confirms.add(m)
                m -= 1
                continue
            break
        if text.rstrip().endswith(("?", "？")) and len(text) < 80 and not mine & words:
            if usable(m - 1) and (
                lesson.problem_of(turns[m - 1][2]["text"]) or _content(turns[m - 1][2]["text"]) & words
            ):
                m -= 1  # "so how do we fix it?": the turn before it is what it asks about
                continue
            break
        if not (mine & words or lesson.problem_of(text)):
            break
        group.insert(0, m)
        words |= mine
        m -= 1
    m = n + 1
    while len(group) < MAX_LESSON and usable(m):
        text = turns[m][2]["text"]
        if _SHIFT.match(text):
            break
        mine = _content(text)
        if acknowledges(text):
            group.append(m)
            confirms.add(m)
        elif mine & words and (score(text)[0] >= SAME_SPEAKER_MIN or _CONFIRM.match(text)):
            group.append(m)
            words |= mine
        else:
            break
        m += 1
    return group, confirms


def _shape(said: list, seed: int, kind: str, mixed: bool) -> dict:
    """Title, summary, type, tags, aliases and memory id of a group of turns (see `lesson`)."""
    texts = [t["text"] for t in said]
    problem = next((p for p in map(lesson.problem_of, texts[: seed + 1]) if p), None)
    fix = next((f for f in map(lesson.fix_of, texts[seed:] + texts[:seed][::-1]) if f), None)
    after = texts[(texts.index(fix[0]) if fix and fix[0] in texts else seed) :]
    rules = [r for r in map(lesson.rule_of, after) if r]
    key = _key_sentence(texts[seed])
    if problem and (fix or rules):
        kind = "lesson"
        head = fix[1] if fix else lesson.clause(rules[-1], 10, 30)
        sep = "：" if lesson.is_cjk(problem[1]) and lesson.is_cjk(head) else ": "
        title = f"{problem[1]}{sep}{head}"
        summary = fix[0] if fix and not rules else rules[-1]
    else:  # a statement, a rule, a decision, a preference: its own sentence
        title, summary = _title(key), key
    everything = " ".join(texts)
    errors = lesson.error_tokens(everything)
    names = lesson.identifiers(everything)
    aliases = [e for e in lesson.error_tokens(problem[0]) if len(e.split()) > 1 or "_" in e][:3] if problem else []
    if mixed:
        other = lesson.other_language(f"{title} {summary}", lesson.is_cjk(title))
        if other:
            aliases.append(other)
    mid = lesson.memory_id(problem[1] if problem else None, (fix[1] if fix else None), title)
    tags = list(dict.fromkeys([e for e in errors if len(e.split()) == 1] + names))
    if len(tags) < 3:  # the subject's words, as the id names them
        tags += [w for w in mid.split("-") if len(w) > 2 and not w.isdigit() and not any(w in t for t in tags)]
    return {"title": title, "summary": summary[:300], "type": kind, "tags": tags[:10], "aliases": aliases, "id": mid}


def acknowledges(text: str) -> bool:
    """A turn that only confirms or reacts ("Great, that worked. Remember that for next time.", 好的)."""
    said = [x.strip() for x in lesson.sentences(text)]
    short = [len(x.split()) + len(lesson.CJK.findall(x)) // 2 <= 8 for x in said]
    return all((_ACK.match(x) and brief) or _ANAPHOR.match(x) for x, brief in zip(said, short))


def _content(text: str) -> set:
    """The words a turn shares with its lesson: its search terms, cue words left out."""
    return _terms(text) - _FILLER
