from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.search.snippet import snippet
from tests.conftest import examples

BODY = """## What happened

Rows written by the import job showed up as garbage and queries by name returned nothing,
even though the table was declared utf8mb4.

## Fix

Set the charset on the connection too: charset=utf8mb4 in the DSN or SET NAMES utf8mb4
right after connecting. Check with SHOW VARIABLES from the application's own connection.

## Repairing old rows

Already double-encoded rows can be repaired with CONVERT(CAST(CONVERT(col USING latin1)
AS BINARY) USING utf8mb4); test on a copy first.
"""

ZH = """## 步骤

1. 在跳板机上执行迁移，确认全部成功。
2. 滚动重启 api，每次只重启一个实例。

## 回滚

如果错误率超过 1%，立即执行 deploy.sh rollback，它会切回上一个镜像标签。

## 注意

周五下午不发布。
"""


def test_returns_the_matching_section_not_the_head():
    out = snippet(BODY, "repair double-encoded rows")
    assert "Repairing old rows" in out
    assert "import job" not in out


def test_prefers_the_section_with_the_rarer_terms():
    out = snippet(BODY, "connection SHOW VARIABLES")
    assert "SHOW VARIABLES" in out


def test_is_trimmed_around_the_first_match():
    long_body = "intro words here. " * 40 + "\n\n" + "filler text " * 30 + "the kafka lag spiked " + "tail " * 60
    out = snippet(long_body, "kafka lag", width=80)
    assert "kafka lag" in out
    assert len(out) <= 82
    assert out.startswith("…") and out.endswith("…")


def test_chinese_sections():
    assert "deploy.sh rollback" in snippet(ZH, "回滚")
    assert snippet(ZH, "周五发布").startswith("## 注意")


def test_falls_back_to_the_head():
    out = snippet(BODY, "量子计算", width=60)
    assert out.startswith("## What happened")
    assert len(out) <= 62


def test_headings_inside_code_fences_do_not_split():
    body = "Intro.\n\n```\n# not a heading\nkafka settings\n```\n\n## Other\n\nnothing"
    assert "kafka settings" in snippet(body, "kafka")
    assert "# not a heading" in snippet(body, "kafka")


def test_empty_inputs():
    assert snippet("", "anything") == ""
    assert snippet("   \n\n  ", "x") == ""
    assert snippet("just one line", "") == "just one line"


@given(st.text(), st.text(), st.integers(min_value=0, max_value=400))
def test_never_fails_and_respects_the_width(body, query, width):
    out = snippet(body, query, width=width)
    assert isinstance(out, str)
    assert len(out) <= max(width, 20) + 2


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=120), pick=st.integers(min_value=0), width=st.integers(30, 120))
def test_snippets_are_cut_between_words(words, pick, width):
    body = " ".join(words)
    query = words[pick % len(words)]
    out = snippet(body, query, width)
    inner = out.removeprefix("…").removesuffix("…").split()
    assert all(w in words for w in inner), (out, body)


def test_a_cjk_term_inside_a_long_run_is_in_the_snippet():
    body = "前面的内容很长很长" * 30 + "数据库字符集" + "后面也很长" * 30
    assert "字符集" in snippet(body, "字符集", 40)


def test_only_a_word_longer_than_half_the_width_is_cut():
    url = "https://example.com/" + "a/" * 100
    out = snippet(f"see {url} then the end of it", "end", 40)
    assert out.endswith("the end of it") and out.startswith("…")
