"""Detail files: YAML normalised once; every trap pinned."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.model import Detail
from memcli.store import details as dfile
from memcli.store.details import FrontmatterError
from tests.conftest import examples

line = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs")), min_size=1, max_size=30)
words = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x85\u2028\u2029"), max_size=200)


@st.composite
def details(draw):
    stamp = draw(st.sampled_from([None, "2026-11-29", "2026-11-29T10:00:00Z", "2026-01-02T03:04:05+08:00"]))
    return Detail(
        id="x",
        title=draw(line).strip() or "t",
        summary=draw(line).strip(),
        tags=tuple(
            dict.fromkeys(draw(st.lists(st.from_regex(r"[a-z0-9\u4e00-\u9fff]{1,8}", fullmatch=True), max_size=4)))
        ),
        aliases=tuple(dict.fromkeys(a.strip() for a in draw(st.lists(line, max_size=3)) if a.strip())),
        type=draw(st.sampled_from(["fact", "lesson", "note"])),
        importance=draw(st.sampled_from([0.0, 0.5, 0.8, 1.0])),
        pinned=draw(st.booleans()),
        created=stamp,
        updated=stamp,
        expires=draw(st.sampled_from([None, "2027-01-31"])),
        source=draw(st.sampled_from([None, "yes", "no", "on"])),
        extra=draw(
            st.dictionaries(
                st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True).filter(lambda k: k not in dfile.DETAIL_KEYS),
                st.one_of(st.integers(), line, st.lists(line, max_size=3)),
                max_size=3,
            )
        ),
        body=(lambda b: b if not b or b.endswith("\n") else b + "\n")(draw(words)),
    )


def norm(d: Detail) -> Detail:
    """What a value is after one trip through a file: one-line fields collapse whitespace."""
    from memcli.model import one_line

    return d.replace(
        title=one_line(d.title), summary=one_line(d.summary), aliases=tuple(one_line(a) for a in d.aliases)
    )


@settings(max_examples=examples(300))
@given(details())
def test_detail_round_trips(d):
    d = norm(d)
    back = dfile.parse(dfile.render(d), "x")
    assert back == d
    assert back.extra == d.extra
    assert list(back.extra) == list(d.extra)


@settings(max_examples=examples(200))
@given(details())
def test_render_is_stable(d):
    text = dfile.render(norm(d))
    assert dfile.render(dfile.parse(text, "x")) == text
    assert text.count("\n---\n") >= 1 and text.startswith("---\n")


def test_dates_stay_strings_and_yes_no_stay_words():
    d = dfile.parse(
        "---\ntitle: T\ncreated: 2026-11-29T10:00:00Z\nupdated: 2026-11-29\n"
        "source: no\ntags: [yes, on, 2026]\npinned: yes\n---\nbody\n",
        "t",
    )
    assert d.created == "2026-11-29T10:00:00Z" and d.updated == "2026-11-29"
    assert d.source == "no" and d.tags == ("yes", "on", "2026")
    assert d.pinned is True
    assert "created: 2026-11-29T10:00:00Z" in dfile.render(d)


def test_bom_and_crlf_tolerated():
    d = dfile.parse("\ufeff---\r\ntitle: T\r\nsummary: s\r\n---\r\nline one\r\nline two\r\n", "t")
    assert (d.title, d.summary, d.body) == ("T", "s", "line one\nline two\n")


def test_unknown_keys_kept_in_order():
    d = dfile.parse("---\nzeta: 1\ntitle: T\nalpha: [a, b]\nnested: {k: v}\n---\n", "t")
    assert list(d.extra) == ["zeta", "alpha", "nested"]
    text = dfile.render(d)
    assert text.index("zeta") < text.index("alpha") < text.index("nested")
    assert text.index("source:") < text.index("zeta")


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("---\ntitle: T\n", 1, "never closed"),
        ("---\ntitle: [unclosed\n---\n", 3, "broken YAML"),
        ("---\n- a\n- b\n---\n", 2, "list"),
        ("---\njust a scalar\n---\n", 2, "str"),
        (
            "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n",
            2,
            "too",
        ),
        ("---\nx: " + "[" * 100 + "]" * 100 + "\n---\n", 2, "too"),
    ],
)
def test_broken_frontmatter_names_the_line(text, line, words):
    with pytest.raises(FrontmatterError) as e:
        dfile.parse(text, "t", "memory/t.md")
    assert e.value.problem.line == line
    assert words in e.value.problem.message
    assert str(e.value).startswith(f"memory/t.md:{line}:")


def test_no_frontmatter_is_a_plain_note():
    d = dfile.parse("# A heading\n\ntext\n", "plain")
    assert d.title == "A heading" and d.body.startswith("# A heading")


def test_a_second_fence_in_the_body_is_body():
    d = dfile.parse("---\ntitle: T\n---\n---\nnot: frontmatter\n---\n", "t")
    assert d.extra == {} and d.body.startswith("---\nnot")
    assert dfile.parse(dfile.render(d), "t").body == d.body


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from(["---", "--- ", "---\r", "id: x", "a: 1\r", "", "body", "\ufeff---", " ---"]), max_size=8),
    st.sampled_from(["\n", "\r\n"]),
)
def test_the_fence_is_read_one_way(lines, end):
    """``frontmatter.span`` (where the block is, as written: rename's in-place edit, the size check
    of a rendered file) finds the block ``split`` (the reader) reads, for any first lines."""
    from memcli.store.frontmatter import opens, span, split

    text = end.join(lines)
    block = span(text)
    try:
        fm, _, _ = split(text)
    except ValueError:
        fm = None
    assert (None if block is None else text[block[0] : block[1]].replace("\r\n", "\n")) == fm
    assert block is None or opens(text)
