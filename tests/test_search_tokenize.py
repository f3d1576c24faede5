import string

from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.search.tokenize import (
    CJK_BIGRAM,
    CJK_CHAR,
    COMPOUND,
    WORD,
    analyze,
    is_cjk,
    stem,
    term_set,
    terms,
)
from tests.conftest import examples


def test_lowercases_and_normalises_width():
    assert terms("MySQL ＵＴＦ８ＭＢ４") == ["mysql", "utf8mb4"]


def test_keeps_alphanumeric_identifiers_whole():
    assert terms("set utf8mb4 on ed25519 keys") == ["set", "utf8mb4", "ed25519", "key"]


def test_drops_english_stopwords():
    assert terms("what is the charset of the table") == ["charset", "tabl"]


def test_stemmer_joins_inflections():
    assert len({stem(w) for w in ["encode", "encoding", "encoded", "encodes"]}) == 1
    assert len({stem(w) for w in ["cache", "caches", "caching", "cached"]}) == 1
    assert stem("policies") == stem("policy")
    assert stem("running") == "run"
    assert stem("rolling") == "roll"
    assert stem("coding") == stem("code")
    assert stem("using") == stem("used") == "use"


def test_stemmer_does_not_cut_a_word_into_another():
    # Porter2's conditions: "eed" stays in speed, the e of a short syllable stays (state)
    assert stem("speed") == stem("speeding") == "speed"
    assert stem("state") == stem("states") == stem("stated") == "state"
    assert stem("need") == "need" and stem("agreed") == stem("agree")
    # words the rules would cut into another word or a stub
    assert stem("evening") != stem("even")
    assert stem("beijing") == "beijing" and stem("morning") == stem("mornings") == "morning"
    assert stem("earrings") == "earring"  # kept after the plural is cut, as Porter2 does
    assert stem("embed") == stem("embedded") == stem("embedding")
    # no derivational steps: business is not busy, the organisation not the organ
    assert stem("business") != stem("busy")
    assert stem("organization") != stem("organ")


# Stems of the English Snowball stemmer (snowballstemmer 3.1) for words it only inflects; a final
# i of Snowball's is a y here (policy, not polici).
SNOWBALL = {
    "speeds": "speed",
    "states": "state",
    "hoping": "hope",
    "hopped": "hop",
    "dating": "date",
    "staging": "stage",
    "cached": "cach",
    "caching": "cach",
    "queried": "query",
    "queries": "query",
    "agreed": "agre",
    "proceed": "proceed",
    "exceeded": "exceed",
    "succeeding": "succeed",
    "weekly": "week",
    "nightly": "night",
    "monthly": "month",
    "quickly": "quick",
    "daily": "daily",
    "dying": "die",
    "tying": "tie",
    "skies": "sky",
    "ties": "tie",
    "cries": "cry",
    "gaps": "gap",
    "added": "add",
    "fizzed": "fizz",
    "filing": "file",
    "falling": "fall",
    "controlling": "control",
    "classes": "class",
    "corpus": "corpus",
    "news": "news",
    "atlas": "atlas",
    "canning": "canning",
    "hundred": "hundr",
    "install": "instal",
    "deploying": "deploy",
    "replays": "replay",
    "conflated": "conflat",
    "rolled": "roll",
}


def test_stems_agree_with_snowball_on_inflections():
    differ = {w: (stem(w), s) for w, s in SNOWBALL.items() if stem(w) != s}
    assert set(differ) == {"hundred"}, differ  # kept whole: "hundr" is no word


def test_stemmer_leaves_short_words_and_non_ascii_alone():
    assert stem("sql") == "sql"
    assert stem("straße") == "straße"
    assert stem("utf8mb4") == "utf8mb4"


def test_snake_and_kebab_case_give_parts_and_compound():
    assert analyze("proxy_read_timeout") == [
        ("proxy", WORD),
        ("read", WORD),
        ("timeout", WORD),
        ("proxy_read_timeout", COMPOUND),
    ]
    assert terms("kebab-case") == ["kebab", "case", "kebab-case"]


def test_camel_case_and_brand_names_stay_whole():
    assert terms("MySQL GitHub OOMKilled") == ["mysql", "github", stem("oomkilled")]


def test_possessive_and_contractions():
    assert terms("the user's key; don't") == ["user", "key"]


def test_cjk_runs_become_overlapping_bigrams():
    assert terms("数据库") == ["数据", "据库"]
    assert analyze("数据库") == [("数据", CJK_BIGRAM), ("据库", CJK_BIGRAM)]


def test_a_lone_cjk_character_is_kept():
    assert analyze("锁") == [("锁", CJK_CHAR)]


def test_mixed_latin_and_chinese_split_at_the_script_boundary():
    assert terms("token爆炸") == ["token", "爆炸"]
    assert terms("MySQL中文乱码") == ["mysql", "中文", "文乱", "乱码"]


def test_a_chinese_phrase_is_not_one_token():
    found = terms("生产环境发布流程")
    assert "生产环境发布流程" not in found
    assert {"生产", "环境", "发布", "流程"} <= set(found)


def test_function_characters_do_not_form_bigrams():
    found = terms("我的数据库连接不上了")
    assert not [t for t in found if "的" in t or "了" in t or "我" in t]
    assert {"数据", "据库", "连接"} <= set(found)


def test_function_words_split_runs():
    found = terms("发布后多久可以走人")
    assert "久可" not in found and "以走" not in found
    assert {"发布", "走人"} <= set(found)


def test_only_function_words_gives_nothing():
    assert terms("的了是") == []
    assert terms("我们的") == []


def test_japanese_and_korean_become_bigrams():
    assert "検索" in terms("日本語のテキストを検索する")
    assert terms("데이터") == ["데이", "이터"]


def test_is_cjk():
    assert is_cjk("爆炸") and is_cjk("テキ") and is_cjk("데이")
    assert not is_cjk("token") and not is_cjk("")


def test_empty_and_punctuation_only():
    assert terms("") == []
    assert terms("  ,.;!?— \n") == []


@given(st.text())
@settings(max_examples=examples(300))
def test_terms_of_any_text_are_non_empty_and_have_no_whitespace(text):
    found = terms(text)
    assert all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in found)
    assert found == terms(text)
    assert [t for t, _ in analyze(text)] == found


_ALPHABET = string.ascii_letters + string.digits + " _-.,'" + "数据库中文乱码爆炸的了是我日本語テキスト한국어"


@given(st.text(alphabet=_ALPHABET, max_size=40), st.text(alphabet=_ALPHABET, max_size=40))
def test_text_separated_by_a_line_break_tokenises_piecewise(a, b):
    assert terms(a + "\n" + b) == terms(a) + terms(b)


@given(st.lists(st.text(alphabet=_ALPHABET, max_size=30), max_size=6))
def test_an_episode_file_has_the_terms_of_its_blocks(lines):
    """A block of an episode file starts a line, so no term spans two: the terms a server keeps
    per block (``term_set``) are the file's."""
    from memcli.store.episodes import blocks

    text = "".join(f"**user** (10:0{i}): {x}\n" if i % 2 else f"## {x}\n{x}\n" for i, x in enumerate(lines))
    assert set().union(*map(term_set, blocks(text))) == set(terms(text))
