"""MEMORY.md parse and render: entries round-trip, every other line survives byte for byte."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.model import Entry
from memcli.store.index import IndexDoc, parse_line, render_line
from tests.conftest import examples

SEED_LINE = (
    "- **MySQL charset double encoding**: set utf8mb4 on the connection, not only the table"
    " | #mysql #charset | → memory/mysql-charset.md"
)

text = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=0, max_size=40)
tag = st.text(st.characters(whitelist_categories=("Ll", "Lo", "Nd"), min_codepoint=48), min_size=1, max_size=10)
ident = st.from_regex(r"[a-z0-9\u4e00-\u9fff][a-z0-9\u4e00-\u9fff-]{0,20}", fullmatch=True)


@st.composite
def entries(draw):
    title = draw(text.filter(lambda s: s.strip()))
    return Entry(title, draw(text), tuple(draw(st.lists(tag, max_size=4))), f"memory/{draw(ident)}.md")


@settings(max_examples=examples(300))
@given(entries())
def test_entry_round_trips(e):
    assert parse_line(render_line(e)) == e


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.one_of(
            entries(),
            st.sampled_from(
                [
                    "# MEMORY",
                    "",
                    "<!-- a comment -->",
                    "hand-written note",
                    "## 二级标题",
                    "  - nested bullet",
                    "- a plain bullet",
                    "* **bold** but not an entry",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_document_round_trips_and_keeps_other_lines(items):
    text = "".join((render_line(x) if isinstance(x, Entry) else x) + "\n" for x in items)
    doc = IndexDoc.parse(text)
    assert doc.render() == text
    assert [x for x in doc.lines if isinstance(x, str)] == [x for x in items if isinstance(x, str)]


def test_seed_format_and_variants():
    e = parse_line(SEED_LINE)
    assert e == Entry(
        "MySQL charset double encoding",
        "set utf8mb4 on the connection, not only the table",
        ("mysql", "charset"),
        "memory/mysql-charset.md",
    )
    assert render_line(e) == SEED_LINE
    assert parse_line("- **标题**: 结论 | #tag1 #tag2 | 详情→filename.md").path == "memory/filename.md"
    assert parse_line("- **T**: summary | -> memory/t.md") == Entry("T", "summary", (), "memory/t.md")
    assert parse_line("- **T**: a | b | → memory/t.md").summary == "a | b"
    assert parse_line("- **T**: no link here") is None
    assert parse_line("# heading") is None


def test_escapes_survive():
    e = Entry("a**b | c", "x | y \\ z", ("t",), "memory/q.md")
    assert parse_line(render_line(e)) == e


def test_hand_edited_entry_kept_verbatim_when_it_agrees():
    raw = "- **T**:   summary   | -> memory/t.md"
    doc = IndexDoc.parse("# M\n" + raw + "\n")
    same = doc.with_entries([Entry("T", "summary", (), "memory/t.md")])
    assert same.render() == "# M\n" + raw + "\n"
    changed = doc.with_entries([Entry("T", "new summary", (), "memory/t.md")])
    assert changed.render() == "# M\n- **T**: new summary | → memory/t.md\n"


def test_crlf_and_bom_tolerated():
    text = "# M\r\n<!-- c -->\r\n" + SEED_LINE + "\r\n"
    doc = IndexDoc.parse("\ufeff" + text)
    assert doc.entries[0].id == "mysql-charset"
    assert doc.render() == text
    grown = doc.with_entries([doc.entries[0], Entry("N", "s", (), "memory/n.md")])
    assert grown.render().endswith("\r\n- **N**: s | → memory/n.md\r\n")


def test_entries_fill_slots_and_extra_ones_follow_the_last_slot():
    doc = IndexDoc.parse("# M\n- **A**: a | → memory/a.md\n\nfooter note\n")
    out = doc.with_entries([Entry("B", "b", (), "memory/b.md"), Entry("A", "a", (), "memory/a.md")])
    assert out.render() == "# M\n- **B**: b | → memory/b.md\n- **A**: a | → memory/a.md\n\nfooter note\n"
    assert doc.with_entries([]).render() == "# M\n\nfooter note\n"


def test_repeated_byte_order_marks_are_dropped():
    doc = IndexDoc.parse("\ufeff\ufeff\ufeff# Memory\n")
    assert doc.render() == "# Memory\n"
