"""What counts as evidence for a question: the query without its framing, texts that only ask,
and the names a query is about.

- ``strip_framing`` drops the words that frame a question rather than say what it is about
  ("上次那个…的问题是怎么解决的", "what did we decide about …", "last time", the recall signal
  words), in Chinese and English, so that they neither count against a memory that lacks them
  nor carry a weak match of their own. A query that is nothing but framing is kept whole.
- ``asking_share`` says how much of a text is questions: a turn that asks ("How often do you
  walk them?") is weak evidence for a question about the same thing; the statement that answers
  it is strong. Question forms of both languages are recognised: a question mark, an English
  sentence opening with an interrogative or an auxiliary verb, Chinese interrogatives and
  final particles.
- ``names`` picks the words of a query that name a product, system or person (MongoDB, CUDA,
  VACUUM, Tom, and the Chinese names of ``CJK_NAMES``: 钉钉, 飞书): a memory that names another
  one is not the answer on meaning alone. ``name_forms`` gives a name in the other script too
  (企业微信, WeCom): a memory writing either names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ..cjk import has_cjk

# Framing, matched on the lowercased query. Chinese: how a question refers back to earlier work;
# English: the same, whole words only. Order matters little: every match is removed.
_FRAMING_ZH = (
    r"(?:是|都|又|当时|后来|最后|我们|咱们|你们)?(?:怎么|如何|怎样|咋)(?:样)?(?:解决|处理|搞定|修复|修|弄|办|做|搞|应对|改|回答|配置|配|设置|用|使用)(?:的|了|掉)?",
    r"怎么办|咋办|咋整|怎么回事|怎么样了",
    r"(?:的|那个|这个|那次|那件)?(?:问题|事情|事儿)",
    r"还记得|记不记得|记得|想起来|回忆一下|回顾一下|提醒我|告诉我|请问|帮我(?:查|找|看)?(?:一下)?",
    r"上次|上回|之前|以前|先前|前几天|前阵子|那次|那回|那时候|当时|最近|刚才|昨天|继续",
    r"那个|这个|那些|这些|那件|第[一二三四五六七八九十]个|换成|改成",
    r"说过|提到过|提过|讨论过|聊过|定过|约定过|决定过|说的|讲过|来着|是什么来着",
    r"我们|咱们|你们|大家",
)
_FRAMING_EN = (
    r"(?:do|did|can|could) (?:you|we) (?:remember|recall)",
    r"(?:what|how|which|why) (?:did|do|have|had|were|was) (?:we|you|i|they) "
    r"(?:(?:end up|ended up|finally|eventually) )?(?:say|said|decide|decided|do|does|did|done|pick|picked|choose|chose|"
    r"agree|agreed|settle|settled|use|used|fix|fixed|solve|solved|handle|handled|resolve|resolved|deal|dealt|"
    r"conclude|concluded|figure|figured|learn|learned|find|found|end up|ended up)(?: (?:on|about|with|out))?",
    r"(?:last|that|the other|previous) time|previously|earlier|before that|"
    r"as (?:before|discussed|agreed|usual|we said)",
    r"like (?:last time|before)|remind me|remember|recall|once again|again",
    r"(?:the|that|this) (?:problem|issue|thing|incident) (?:with|about|of)|"
    r"(?:the|that|this) (?:problem|issue)|problems?",
    r"that one|this one|the (?:first|second|third|other|last) one|instead",
)
# Words and characters every framing match starts with: a query holding none is not searched.
_EN_TRIGGERS = frozenset(
    """do did can could what how which why last that the other previous previously earlier
    before as like remind remember recall once again this problem problems issue issues one instead""".split()
)
_ZH_TRIGGERS = frozenset("是都又当后最我咱你怎如咋的那这问事还记想回提告请帮上之以先前刚昨继第换改说讲来大")


@lru_cache(maxsize=None)
def _framing(language: str) -> re.Pattern:
    """The framing pattern of one language, compiled when a query first needs it."""
    if language == "zh":
        return re.compile("|".join(f"(?:{p})" for p in _FRAMING_ZH))
    return re.compile(r"(?<![\w-])(?:" + "|".join(f"(?:{p})" for p in _FRAMING_EN) + r")(?![\w-])")


def _signal_pattern(signals: Iterable[str]) -> re.Pattern | None:
    words = sorted({s.strip().lower() for s in signals if s and s.strip()}, key=len, reverse=True)
    if not words:
        return None
    parts = [re.escape(w) if not w.isascii() else r"(?<![\w-])" + re.escape(w) + r"(?![\w-])" for w in words]
    return re.compile("|".join(parts))


@lru_cache(maxsize=16)
def _signals(signals: tuple) -> re.Pattern | None:
    return _signal_pattern(signals)


def strip_framing(query: str, signals: Iterable[str] = ()) -> str:
    """``query`` without the words that frame it as a question about earlier work (and the recall
    signal words): what the question is about. The query itself when nothing else would be left."""
    from .tokenize import terms

    lowered = query.lower()
    if len(lowered) != len(query):  # a letter whose lower case is longer: spans would not line up
        query = lowered
    keep = [True] * len(query)
    # Patterns are compiled only for a query that may hold what they match (a recall per turn).
    signals = tuple(s for s in signals if s and s.strip() and s.strip().lower() in lowered)
    pattern = _signals(signals) if signals else None
    rxs = [pattern] if pattern is not None else []
    if not _EN_TRIGGERS.isdisjoint(re.findall(r"[a-z]+", lowered)):
        rxs.append(_framing("en"))
    if not lowered.isascii() and not _ZH_TRIGGERS.isdisjoint(lowered):
        rxs.append(_framing("zh"))
    for rx in rxs:
        for m in rx.finditer(lowered):
            for i in range(m.start(), m.end()):
                keep[i] = False
    text = "".join(c if k else " " for c, k in zip(query, keep))
    text = "\n".join(" ".join(line.split()) for line in text.split("\n"))  # lines kept: a dialogue's turns
    return text if terms(text) else query


# ---------- texts that ask ----------


@lru_cache(maxsize=None)
def _sentences() -> re.Pattern:  # compiled once a text may ask (``_may_ask``)
    return re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


_EN_OPENERS = frozenset(
    """what what's whats how how's when when's why who who's whom whose where where's which
    do does did is are was were can could would will should shall have has had may might am
    isn't aren't wasn't weren't don't doesn't didn't won't can't couldn't wouldn't shouldn't
    haven't hasn't anyone anybody""".split()
)
_ZH_QUESTION_RE = (
    r"什么|怎么|为什么|为啥|如何|哪[里儿个些天种位]?|谁|多少|多久|几[点天个次年月号时]|是否|有没有|是不是|能不能|可不可以|"
    r"要不要|会不会|对不对|好不好|行不行|[吗嘛呢][\s。？?！!]*$"
)
_ZH_QUESTION_WORDS = (
    "什么",
    "怎么",
    "为啥",
    "如何",
    "哪",
    "谁",
    "多少",
    "多久",
    "几",
    "是否",
    "有没有",
    "是不是",
    "能不能",
    "可不可以",
    "要不要",
    "会不会",
    "对不对",
    "好不好",
    "行不行",
    "吗",
    "嘛",
    "呢",
)


@lru_cache(maxsize=None)
def _zh_question() -> re.Pattern:
    return re.compile(_ZH_QUESTION_RE)


@lru_cache(maxsize=None)
def _latin_word() -> re.Pattern:
    return re.compile(r"[A-Za-z']+")


def _is_question(sentence: str) -> bool:
    s = sentence.strip()
    if s.endswith(("?", "？")):
        return True
    if s.endswith((".", "。", "!", "！")):
        return False
    first = _latin_word().match(s)
    if first and first.group().lower() in _EN_OPENERS:
        return True
    return not s.isascii() and bool(_zh_question().search(s))


# Words of reaction and courtesy: a sentence of nothing else ("Wow, that's so cool!") neither
# asks nor states anything a question could be about.
FILLER = frozenset(
    """wow cool great awesome amazing nice good glad happy sound sounds love lovely fun fantastic wonderful
    incredible impressive beautiful sweet oh ah yeah yes yep sure haha lol totally absolutely really
    congrats congratulations thanks thank hey hi hello okay ok well hmm so just too super exciting""".split()
) | frozenset("哇 哈哈 谢谢 好的 太好 不错 厉害 真棒 恭喜".split())
_ENDS = ".!。！\n"


def _may_ask(text: str) -> bool:
    """A cheap first look, without a pattern: a question mark, a Chinese question word, or a
    sentence opening with an English interrogative or auxiliary."""
    if "?" in text or "？" in text:
        return True
    if not text.isascii() and any(w in text for w in _ZH_QUESTION_WORDS):
        return True
    start = True
    for word in text.lower().split():
        if start and word.strip("\"'(*-") in _EN_OPENERS:
            return True
        start = word[-1] in _ENDS
    return False


@lru_cache(maxsize=4096)
def asking_share(text: str) -> float:
    """The share of a text's content terms that stand in questions (0: it states; 1: it only asks).
    Sentences of common words and reactions alone ("That's great!", "谢谢") count either way."""
    from .query import COMMON_WORDS
    from .tokenize import stem, terms

    if not text or not _may_ask(text):
        return 0.0
    ignore = _ignored(COMMON_WORDS, stem)
    asked = stated = 0
    for m in _sentences().finditer(text):
        sentence = m.group()
        content = [t for t in terms(sentence) if t not in ignore]
        if not content:
            continue
        if _is_question(sentence):
            asked += len(content)
        else:
            stated += len(content)
    total = asked + stated
    return round(asked / total, 3) if total else 0.0


@lru_cache(maxsize=1)
def _ignored(common, stem) -> frozenset:
    return common | FILLER | frozenset(stem(w) for w in FILLER)


def only_asks(text: str) -> bool:
    """A text that asks and states nothing: a user's question, never evidence for one."""
    return asking_share(text) >= 0.999


# ---------- names ----------

# Capitalised words that name a kind of thing rather than one product or system: a memory
# that says "memory" or "certificate" instead is about the same thing.
GENERIC = frozenset(
    """ram cpu gpu ssd hdd os io api apis rest http https url urls uri json xml yaml csv sql db dbs ui ux
    cli gui sdk ide ci cd pr prs mr qa tls ssl ssh vpn dns tcp udp ip ipv4 ipv6 lan wifi id ids uuid
    utc gmt pdf png jpg html css js ai ml llm llms pm am ok faq tl dr etc eta fyi asap""".split()
)


# Products and companies people name in Chinese, with the names they go by in Latin letters: a
# question naming one is about it, not about a note on another (钉钉 is not 企业微信), and a memory
# writing it in either script names it (企业微信, WeCom). Words that are also everyday words or
# parts of place names (平安, 小米, 京东, 苹果) are left out.
CJK_NAMES = {
    "阿里云": ("aliyun",),
    "阿里巴巴": ("alibaba",),
    "腾讯云": ("tencentcloud",),
    "腾讯会议": ("voov",),
    "腾讯": ("tencent",),
    "华为云": ("huaweicloud",),
    "华为": ("huawei",),
    "百度": ("baidu",),
    "火山引擎": ("volcengine",),
    "七牛云": ("qiniu",),
    "又拍云": ("upyun",),
    "金山云": ("ksyun",),
    "钉钉": ("dingtalk",),
    "飞书": ("feishu", "lark"),
    "企业微信": ("wecom",),
    "微信": ("wechat", "weixin"),
    "支付宝": ("alipay",),
    "淘宝": ("taobao",),
    "天猫": ("tmall",),
    "拼多多": ("pinduoduo",),
    "美团": ("meituan",),
    "抖音": ("douyin", "tiktok"),
    "小红书": ("xiaohongshu", "rednote"),
    "微博": ("weibo",),
    "知乎": ("zhihu",),
    "哔哩哔哩": ("bilibili",),
    "携程": ("ctrip",),
    "高德": ("amap",),
    "字节跳动": ("bytedance",),
    "网易": ("netease",),
    "谷歌": ("google",),
    "微软": ("microsoft",),
    "亚马逊": ("amazon",),
}


@lru_cache(maxsize=1)
def _latin_forms() -> dict:
    """Latin name -> the Chinese name it is another form of (``CJK_NAMES`` read backwards)."""
    return {latin: cjk for cjk, forms in CJK_NAMES.items() for latin in forms}


def name_forms(name: str) -> tuple[str, ...]:
    """A name (as ``names`` gives it) and the forms it has in the other script, if known."""
    forms = CJK_NAMES.get(name)
    if forms is not None:
        return (name, *forms)
    cjk = _latin_forms().get(name)
    return (name,) if cjk is None else (name, cjk, *(f for f in CJK_NAMES[cjk] if f != name))


def _cjk_names(query: str) -> list[str]:
    """The names of ``CJK_NAMES`` in ``query``, longest first where one holds another (企业微信, not 微信)."""
    found = [n for n in CJK_NAMES if n in query]
    if len(found) > 1:
        found.sort(key=len, reverse=True)
        kept: list[str] = []
        for n in found:
            if not any(n in k for k in kept):
                kept.append(n)
        found = kept
    return found


@lru_cache(maxsize=None)
def _name() -> re.Pattern:
    return re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._+#-][A-Za-z0-9]+)*")


def names(query: str) -> list[str]:
    """Words of ``query`` written as names: all capitals (CUDA, JVM, VACUUM), a capital inside
    (MongoDB, OOMKilled), letters and digits (ES6, k8s), or, not first in an English sentence, a
    capital first (Postgres, Tom); in a Chinese question, any capitalised Latin word; and the
    products and companies of ``CJK_NAMES`` in either script (钉钉, DingTalk). Lowercased. (A
    lower-case word opening a Chinese question is no name: measured on the dev sets, reading it as
    one made recall's confidence no better.)"""
    out = _latin_names(query) if any(c.isupper() or c.isdigit() for c in query) else []
    if not query.isascii():
        out += [n for n in _cjk_names(query) if n not in out]
    if any(w.strip(".,;:!?()[]\"'") in _latin_forms() for w in query.lower().split()):
        out += [w for w in _name().findall(query.lower()) if w in _latin_forms() and w not in out]
    return out


def _latin_names(query: str) -> list[str]:
    cjk = has_cjk(query)
    out = []
    for m in _name().finditer(query):
        word = m.group()
        letters = [c for c in word if c.isalpha()]
        if len(letters) < 2:
            continue
        upper_inside = any(c.isupper() for c in word[1:])
        digits = any(c.isdigit() for c in word)
        capital = word[0].isupper()
        start = m.start()
        before = query[:start].rstrip()
        sentence_start = not before or before[-1] in ".!?。！？:：\n"
        if word.isupper() and len(letters) >= 2:
            out.append(word.lower())
        elif upper_inside or (digits and len(letters) >= 1):
            out.append(word.lower())
        elif capital and (cjk or not sentence_start):
            out.append(word.lower())
    return [w for w in dict.fromkeys(out) if w not in GENERIC]
