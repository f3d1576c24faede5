"""Turn a query into weighted units: what it asks for, how much each part counts
towards the fit of a memory, which typos to correct, which adjacent words to join.

A unit is one meaningful term of the query. Its weight is its idf (over the corpus plus
a few imagined documents), lowered for common words, lone CJK characters, and CJK
bigrams no memory holds whose characters other bigrams already explain (a pair that
straddles two words). Common words and lone CJK characters (用, 下, 个: mostly function
characters a particle split off) count for nothing alone: a memory they alone reach is no
candidate (``Plan.info`` holds the units that count alone). In a query of several lines (the
dialogue so far) a term weighs less the earlier its last line (``RECENT``). Entries are the terms
actually looked up: the units themselves, typo corrections, compounds, and joins of adjacent words
("roll back" -> rollback).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memcli.search.tokenize import COMPOUND, CJK_BIGRAM, CJK_CHAR, STOP_CHARS, WORD, analyze, stem


BODY_MATCH = 0.8  # a query term found only in the body counts this much towards fit
FUZZY_MATCH = 0.8  # a typo-corrected term counts this much
# A term found through the glossary (the query's word in the other language: ``search.glossary``)
# counts this much: the memory holding the question's own words, or an alias its author wrote,
# ranks first.
GLOSSARY_MATCH = 0.85
CJK_OOV = 1.0  # weight of a CJK bigram that no memory contains, per character not explained otherwise
CJK_SINGLE = 0.5  # weight of a lone CJK character
# Characters that ask (who, which, what and the final particles): a bigram no memory holds that
# pairs one with its neighbour (找谁, 谁开) straddles a word and the question, like STOP_CHARS.
QUESTION_CHARS = frozenset("谁哪吗呢么什啥")
# Query-term idf is taken over the corpus plus this many imagined documents holding none
# of the query terms, so that in a small store a word shared by half the memories still
# counts against a word no memory has.
FIT_PRIOR_DOCS = 20

# Common words (and the boilerplate of questions about the past): unmatched, they say
# little about whether a memory fits, so they weigh half.
COMMON_WORDS = frozenset(
    stem(w)
    for w in """able add again ago always another answer around back bad best better big
    bit break bring call came change check close come common correct current day days
    different doesn easy else enough even ever every fail failing find first fix found give
    go going good great hard help high hour keep kind know large late later least left less
    like little long look lot low many may maybe might minute month much must need never new
    next nice normal number often old one open part people place point possible problem
    put quick quite real really right run same say second see seem set should show side
    since small sometimes soon start still stop sure take talk thing think three today
    together try turn two usual usually use want week well whole work working world wrong year
    yet issue issues error errors question data file value result name mention mentioned
    discuss discussed talked earlier recent recently""".split()
) | frozenset(
    """数据 问题 错误 使用 方法 情况 处理 信息 内容 东西 结果 原因 现象 解决 一下 怎样 提到 说过
    名字""".split()
)


# A query of several lines (the dialogue so far, a prompt after the turns before it) weighs a term
# by the last line holding it: this much less for each line after that, down to RECENT_FLOOR; each
# line weighs as a whole. On the dev conversations (`benchmarks/fit_gate.py --dry-run --sets
# conversation,conversation-long --recent R,F`), the dialogue padded with two other conversations
# is answered right first for 0.76 / 0.74 / 0.71 / 0.73 with R 0.4 / 0.6 / 0.7 / 0.8, the plain
# dialogue for 0.84 / 0.82 / 0.82 / 0.84.
RECENT, RECENT_FLOOR = 0.6, 0.15


def idf(n: int, df: int) -> float:
    """BM25 inverse document frequency of a term held by ``df`` of ``n`` documents."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def correct(word: str, candidates: Sequence[tuple[str, int, int]], name: bool = False) -> str | None:
    """The vocabulary word closest to ``word``, preferring title/tag/alias words, or None.
    ``name``: the word is written as a name (``evidence.names``), whose spellings vary (John, Jon)."""
    if len(word) <= 4:  # short words have many neighbours: only title/tag/alias words qualify
        candidates = [c for c in candidates if c[2]]
    if not candidates:
        return None
    from rapidfuzz import fuzz, process

    cutoff = 85.0 if len(word) <= 4 else 80.0
    choices = [c[0] for c in candidates]
    found = process.extract(word, choices, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None)
    # A word that is another word plus a letter is a different word, not a typo of it (backup
    # is not back, catch is not cach, the stem of cache), unless the letter doubles its
    # neighbour (lagg, commmit), the word is a name (John for Jon), or the stem lost a final e
    # the word has in another place (goroutien: goroutin, the stem of goroutine).
    found = [
        f
        for f in found
        if len(f[0]) >= len(word)
        or _doubled_letter(word, f[0])
        or (len(f[0]) == len(word) - 1 and (name or _one_edit(word, f[0] + "e")))
    ]
    if not found:
        return None
    best = min(
        found,
        key=lambda f: (-(f[1] + (3.0 if candidates[f[2]][2] else 0.0)), -candidates[f[2]][1], f[0]),
    )
    return best[0]


def _doubled_letter(word: str, shorter: str) -> bool:
    """``shorter`` is ``word`` with one of two equal neighbouring letters dropped."""
    return len(word) == len(shorter) + 1 and any(
        word[i] == word[i + 1] and word[:i] + word[i + 1 :] == shorter for i in range(len(word) - 1)
    )


def _one_edit(a: str, b: str) -> bool:
    """Words of one length that differ in one letter or in two neighbouring letters swapped."""
    diff = [i for i in range(len(a)) if a[i] != b[i]] if len(a) == len(b) else None
    if not diff:
        return False
    return len(diff) == 1 or (
        len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    )


class Entry:
    """A term to look up, and the query units a document holding it satisfies: factor is 1.0, or
    FUZZY_MATCH for a corrected term; bound, the most the term can add to a document's relevance;
    bridge, a form the glossary gave (it adds to a document's BM25 only where no earlier entry
    for its units did: a note holding a word in both languages is not counted twice)."""

    __slots__ = ("term", "df", "factor", "units", "bound", "bridge")

    def __init__(self, term: str, df: int, factor: float, units: tuple, bound: float = 0.0, bridge: bool = False):
        self.term, self.df, self.factor, self.units, self.bound = term, df, factor, units, bound
        self.bridge = bridge


class Plan:
    """A query, planned: unit weights (per query unit, for fit), idfs (for the soft BM25 share),
    the entries to look up and the typo corrections."""

    __slots__ = ("weights", "idfs", "entries", "fuzzy", "names", "bridged", "info", "recent")

    def __init__(self, weights: list, idfs: list, entries: list, fuzzy: list, names: list | None = None):
        self.weights, self.idfs, self.entries, self.fuzzy = weights, idfs, entries, fuzzy
        self.bridged: list[str] = []  # the terms looked up through the glossary (``search.glossary``)
        self.info: set[int] = set()  # the units that count alone: neither common words nor lone CJK characters
        self.recent: list[float] = []  # per unit, how much its line's place lowers it (``RECENT``)
        self.names = [] if names is None else names  # per name in the query (``evidence.names``), its units


def plan_query(query: str, corpus, n: int, names: Sequence[str | tuple[str, ...]] = ()) -> Plan:
    """The units of ``query`` with their weights, and the entries to look up in ``corpus`` (a
    ``ranker.Corpus``: the ranker imports this module, so it is not imported back); ``names``,
    the words of the query that name something (``evidence.names``), each as the units it became;
    a name may come as a tuple of its forms, as written first, then in the other script
    (``evidence.name_forms``)."""
    first: dict[str, int] = {}
    latest: dict[str, int] = {}  # term -> the last line holding it
    lines = [ln for ln in query.split("\n") if ln.strip()] if "\n" in query else [query]
    for n_line, line in enumerate(lines):
        for term, kind in analyze(line):
            first.setdefault(term, kind)
            latest[term] = n_line
    words = list(first.items())
    joins = [
        stem(a + b) for (a, ka), (b, kb) in zip(words, words[1:]) if ka == kb == WORD and a.isalpha() and b.isalpha()
    ]
    dfs = dict(corpus.df([t for t, _ in words] + joins))
    bridge = _bridge(query, [t for t, k in analyze(query) if k == WORD], corpus)
    bridged = {t for src, _ in bridge for t in src}
    # A CJK bigram no memory holds is often a pair that straddles two words (邮件发送 ->
    # 件发). Its characters that a known bigram (or a term of the glossary) already explains
    # carry no weight.
    explained = (
        {c for term, kind in words if kind == CJK_BIGRAM and (dfs.get(term) or term in bridged) for c in term}
        | STOP_CHARS
        | QUESTION_CHARS
    )
    plan = Plan([], [], [], [])
    name_forms = [(n,) if isinstance(n, str) else tuple(n) for n in names]
    named = {t for forms in name_forms for t, _ in analyze(forms[0])} if name_forms else ()
    unit_of: dict[str, int] = {}
    prev: tuple[str, int] | None = None  # the previous plain word and its unit, for joins
    for term, kind in words:
        df = dfs.get(term, 0)
        if kind == COMPOUND:
            parts = [unit_of[p] for p in (stem(x) for x in term.replace("_", "-").split("-")) if p in unit_of]
            if df and parts:
                plan.entries.append(Entry(term, df, 1.0, tuple(dict.fromkeys(parts))))
            prev = None
            continue
        # a word of an earlier line (a turn before the last, in a dialogue) weighs less
        recent = max(RECENT_FLOOR, RECENT ** (len(lines) - 1 - latest.get(term, 0)))
        weight = idf(n + FIT_PRIOR_DOCS, df) * recent
        if kind == CJK_BIGRAM and not df and term not in bridged:
            weight *= CJK_OOV * sum(c not in explained for c in term) / 2
        elif kind == CJK_CHAR:
            weight *= CJK_SINGLE
        unit = len(plan.weights)
        if term in COMMON_WORDS:
            weight *= 0.5
        elif kind != CJK_CHAR:
            plan.info.add(unit)
        unit_of[term] = unit
        plan.weights.append(weight)
        plan.idfs.append(idf(n + FIT_PRIOR_DOCS, df) * recent)
        plan.recent.append(recent)
        if df:
            plan.entries.append(Entry(term, df, 1.0, (unit,)))
        elif kind == WORD and len(term) >= 4 and term.isalpha():
            candidates = corpus.fuzzy_candidates(term[0], len(term) - 2, len(term) + 2)
            fixed = correct(term, candidates, term in named)
            if fixed is not None:
                plan.fuzzy.append((term, fixed))
                fixed_df = next(c[1] for c in candidates if c[0] == fixed)
                plan.entries.append(Entry(fixed, fixed_df, FUZZY_MATCH, (unit,)))
        if kind == WORD:
            if prev is not None and term.isalpha() and prev[0].isalpha():
                joined = stem(prev[0] + term)
                if dfs.get(joined):  # "roll back" -> rollback, "data base" -> database
                    plan.entries.append(Entry(joined, dfs[joined], 1.0, (prev[1], unit)))
            prev = (term, unit)
        else:
            prev = None
    if bridge:
        _add_bridge(plan, bridge, unit_of, n)
    forms: list = []
    for name, *other in name_forms:
        units = tuple(dict.fromkeys(unit_of[t] for t, _ in analyze(name) if t in unit_of))
        if units and units not in plan.names:
            plan.names.append(units)
            forms += [(form, units) for form in other]
    if forms:  # a name written in the other script counts as the name (WeCom for 企业微信)
        _add_forms(plan, forms, corpus)
    if len(lines) > 1:  # each line weighs as a whole, by its place: a long turn before the prompt is no more
        totals: dict[float, float] = {}
        for u, w in enumerate(plan.weights):
            totals[plan.recent[u]] = totals.get(plan.recent[u], 0.0) + w
        plan.weights = [w / totals[plan.recent[u]] * plan.recent[u] if w else w for u, w in enumerate(plan.weights)]
    return plan


def _bridge(query: str, words: list, corpus) -> list:
    """(the query's terms a glossary term covers, [(a term of its other form to look up, df)]) for
    each glossary term in the query, in either language (``search.glossary``). The other form is
    looked up only when the store holds all of its terms, by its least common one: a phrase is
    found by its most telling word (tuple for dead tuple), a Chinese term by its rarest bigram."""
    from . import glossary

    t = glossary.tables() if (not query.isascii() or words) else None
    if t is None:
        return []
    pairs = []  # (source terms, [other forms as lists of terms])
    for w in glossary.chinese_terms(query, t):
        pairs.append((glossary.phrase(w), [glossary.phrase(p) for p in t.zh.terms[w]]))
    for p in glossary.english_phrases(words, t) if words else ():
        pairs.append((glossary.phrase(p), [glossary.phrase(z) for z in t.en.terms[p]]))
    if not pairs:
        return []
    dfs = dict(corpus.df(list(dict.fromkeys(x for _, forms in pairs for f in forms for x in f))))
    out = []
    for src, forms in pairs:
        held = [
            min(((x, dfs[x]) for x in f), key=lambda e: (e[1], e[0])) for f in forms if f and all(dfs.get(x) for x in f)
        ]
        if held:
            out.append((src, held))
    return out


def _add_bridge(plan: Plan, bridge: list, unit_of: dict, n: int) -> None:
    """Entries for the other-language forms of the query's glossary terms, each satisfying the
    units of the words it translates at GLOSSARY_MATCH (merged when two terms share a form). A
    word of the query no memory holds weighs no more than the form it is found by: `ship`, held by
    no note, is not worth more through 发版 than `prod`, which a note holds, is by itself."""
    found: dict[str, list] = {}
    reached = {u for e in plan.entries for u in e.units}  # by the query's own words (or their typo fixes)
    for src, held in bridge:
        units = tuple(dict.fromkeys(unit_of[x] for x in src if x in unit_of))
        if not units:
            continue
        most = idf(n + FIT_PRIOR_DOCS, max(df for _, df in held))
        for u in units:
            if u not in reached:
                plan.weights[u] = min(plan.weights[u], most)
        for term, df in held:
            entry = found.setdefault(term, [df, {}])
            entry[1].update(dict.fromkeys(units))
    for term, (df, units) in found.items():
        plan.entries.append(Entry(term, df, GLOSSARY_MATCH, tuple(units), bridge=True))
        plan.bridged.append(term)


def _add_forms(plan: Plan, forms: list, corpus) -> None:
    """Entries for the other-script forms of the query's names, each satisfying the name's units:
    a Latin form by its words, a Chinese one by its least common bigram the store holds."""
    looked = [(form, units, [t for t, _ in analyze(form)]) for form, units in forms]
    dfs = dict(corpus.df(list(dict.fromkeys(t for _, _, ts in looked for t in ts))))
    have = {e.term for e in plan.entries}
    for form, units, ts in looked:
        held = [t for t in ts if dfs.get(t)]
        if not held or (len(held) < len(ts) and form.isascii()):
            continue
        if not form.isascii():
            held = [min(held, key=lambda t: (dfs[t], t))]
        for t in held:
            if t not in have:
                plan.entries.append(Entry(t, dfs[t], 1.0, units))
                have.add(t)
