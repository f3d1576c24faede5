"""The merge drivers and conflict markers as pure functions: symmetric, lossless, deterministic."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memcli.usecases.merge import merge3, merge_detail, merge_episode, merge_index, merged_lines
from memcli.store import details as dfile
from memcli.store import markers
from memcli.store.index import IndexDoc
from memcli.model import Detail
from tests.conftest import examples

HEAD = "# MEMORY\n\n<!-- notes -->\n\n"


def line(mid, summary="s", tags=""):
    t = f" | {tags}" if tags else ""
    return f"- **{mid.title()}**: {summary}{t} | → memory/{mid}.md\n"


def test_index_union_of_both_sides_and_symmetric():
    base = HEAD + line("a") + line("b")
    ours = HEAD + line("new-ours") + line("a") + line("b")
    theirs = HEAD + line("a") + line("b", "changed") + line("new-theirs")
    m1 = merge_index(base, ours, theirs)
    assert m1 == merge_index(base, theirs, ours)
    ids = [e.id for e in IndexDoc.parse(m1).entries]
    assert sorted(ids) == ["a", "b", "new-ours", "new-theirs"]
    assert "**B**: changed" in m1
    assert m1.startswith(HEAD)
    assert markers.first_conflict(m1) is None


def test_index_removal_on_one_side_wins_and_hand_lines_are_kept():
    base = HEAD + line("a") + line("b")
    ours = HEAD + line("a") + "a note written by hand\n"
    theirs = "# MEMORY (shared)\n\n<!-- notes -->\n\n" + line("a") + line("b") + line("c")
    m = merge_index(base, ours, theirs)
    assert m == merge_index(base, theirs, ours)
    assert [e.id for e in IndexDoc.parse(m).entries] == ["a", "c"]
    assert "a note written by hand" in m and "# MEMORY (shared)" in m


def test_index_add_add_without_base():
    ours = HEAD + line("x")
    theirs = HEAD + line("y")
    m = merge_index("", ours, theirs)
    assert m == merge_index("", theirs, ours)
    assert sorted(e.id for e in IndexDoc.parse(m).entries) == ["x", "y"]


ids = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=6)


@settings(max_examples=examples(60), deadline=None)
@given(ids, ids, ids, st.booleans())
def test_index_merge_is_symmetric_and_keeps_every_addition(o, a, b, note):
    base = HEAD + "".join(line(i) for i in o)
    ours = HEAD + "".join(line(i) for i in a) + ("hand line\n" if note else "")
    theirs = HEAD + "".join(line(i, "t") for i in b)
    m = merge_index(base, ours, theirs)
    assert m == merge_index(base, theirs, ours)
    got = {e.id for e in IndexDoc.parse(m).entries}
    removed = {i for i in o if i not in a or i not in b}
    assert got == (set(a) | set(b)) - removed


def detail(summary="s", body="", updated="2026-01-01T00:00:00Z", **kw):
    d = Detail(
        id="m",
        title=kw.pop("title", "M"),
        summary=summary,
        created="2026-01-01T00:00:00Z",
        updated=updated,
        body=body,
        **kw,
    )
    return dfile.render(d)


def test_detail_later_update_wins_and_loser_goes_to_history():
    base = detail("old", "text\n")
    ours = detail("mine", "text\n\n## History\n\n- 2026-01-02: summary was: old\n", "2026-01-02T00:00:00Z")
    theirs = detail(
        "yours", "text\n\n## History\n\n- 2026-01-03: summary was: old\n", "2026-01-03T00:00:00Z", tags=("t",)
    )
    text, n = merge_detail(base, ours, theirs, "m")
    assert n == 0
    assert (text, n) == merge_detail(base, theirs, ours, "m")
    d = dfile.parse(text, "m")
    assert d.summary == "yours" and d.tags == ("t",) and d.updated == "2026-01-03T00:00:00Z"
    assert "summary was: mine" in d.body and "summary was: old" in d.body


def test_detail_appends_on_both_sides_both_kept():
    base = detail("s", "one\n")
    ours = detail("s", "one\n\nfrom ours\n", "2026-01-02T00:00:00Z")
    theirs = detail("s", "one\n\nfrom theirs\n", "2026-01-02T00:00:01Z")
    text, n = merge_detail(base, ours, theirs, "m")
    assert n == 0 and text == merge_detail(base, theirs, ours, "m")[0]
    body = dfile.parse(text, "m").body
    assert "from ours" in body and "from theirs" in body and body.count("one") == 1


def test_detail_real_body_conflict_gets_standard_markers():
    base = detail("s", "alpha\nbeta\n")
    ours = detail("s", "alpha\nBETA ours\n", "2026-01-02T00:00:00Z")
    theirs = detail("s", "alpha\nbeta theirs\n", "2026-01-02T00:00:01Z")
    text, n = merge_detail(base, ours, theirs, "m")
    assert n == 1
    assert markers.first_conflict(text) is not None
    d = dfile.parse(text, "m")  # the frontmatter stays readable
    assert d.summary == "s"
    settled, dropped = markers.settle(text, "theirs")
    assert "beta theirs" in settled and "BETA ours" not in settled and dropped == ["BETA ours"]


def test_detail_tags_removed_on_one_side_added_on_other():
    base = detail(tags=("a", "b"))
    ours = detail(tags=("a",), updated="2026-01-02T00:00:00Z")
    theirs = detail(tags=("a", "b", "c"), updated="2026-01-02T00:00:01Z")
    d = dfile.parse(merge_detail(base, ours, theirs, "m")[0], "m")
    assert set(d.tags) == {"a", "c"}


tag_lists = st.lists(st.sampled_from("abcdef"), unique=True, max_size=5).map(tuple)
days = st.sampled_from(["2026-01-01", "2026-01-02", "2026-01-03"])


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(st.none(), tag_lists), tag_lists, tag_lists, days)
@example(o=("a", "b"), a=("a", "b", "c"), b=("a",), day="2026-01-03")  # theirs removed b, and is the newer
@example(o=("a", "b"), a=("a", "b", "c"), b=("a",), day="2026-01-01")  # theirs removed b, ours is the newer
def test_detail_tag_merge_is_symmetric_and_a_tag_either_side_removed_stays_removed(o, a, b, day):
    """The documented symmetry: ours and theirs swapped give the same tags, in the same order, and
    the merged tags are both sides' minus every tag the base had that either side removed."""
    base = "" if o is None else detail(tags=o)
    ours = detail(tags=a, updated="2026-01-02T00:00:00Z")
    theirs = detail(tags=b, updated=f"{day}T00:00:00Z")
    one = dfile.parse(merge_detail(base, ours, theirs, "m")[0], "m").tags
    other = dfile.parse(merge_detail(base, theirs, ours, "m")[0], "m").tags
    assert one == other
    removed = set() if o is None else (set(o) - set(a)) | (set(o) - set(b))
    assert set(one) == (set(a) | set(b)) - removed


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from(["x", "y", "z", "", "w"]), max_size=6),
    st.lists(st.sampled_from(["x", "y", "q", ""]), max_size=6),
    st.lists(st.sampled_from(["x", "z", "r", ""]), max_size=6),
)
def test_merge3_is_symmetric_without_conflicts(o, a, b):
    left, n1 = merged_lines(merge3(o, a, b))
    right, n2 = merged_lines(merge3(o, b, a))
    assert n1 == n2
    if n1 == 0:
        assert left == right
    if a == o:
        assert left == b
    if b == o:
        assert left == a


def test_episode_sections_of_both_sides_in_time_order():
    base = "# Episodes 2026-01-01\n\n## 2026-01-01T01:00:00Z session default\n\nfirst\n"
    ours = base + "\n## 2026-01-01T03:00:00Z session default\n\nours\n"
    theirs = base + "\n## 2026-01-01T02:00:00Z session other\n\ntheirs\n"
    m = merge_episode(base, ours, theirs)
    assert m == merge_episode(base, theirs, ours)
    assert m.index("first") < m.index("theirs") < m.index("ours")
    assert m.startswith("# Episodes 2026-01-01\n") and m.endswith("ours\n")
    assert merge_episode("", ours, theirs).count("first") == 1


def test_markers_found_only_in_order():
    assert markers.first_conflict("a\n=======\n>>>>>>> x\n<<<<<<< y\n") is None
    text = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\nd\n"
    assert markers.first_conflict(text) == 2
    assert markers.union(text) == "a\nb\nc\nd\n"
    f = markers.findings("memory/m.md", text)
    assert f[0].code == "conflict-markers" and f[0].line == 2 and "memcli resolve m" in f[0].fix


def test_a_line_moved_by_an_earlier_merge_is_not_a_conflict():
    base = ["h", "b-app", "a15", ""]
    ours = ["h", "b-app", "a15", "b24", ""]
    theirs = ["h", "a15", "c29", "b-app", "b24", ""]
    out, n = merged_lines(merge3(base, ours, theirs))
    assert n == 0 and out == merged_lines(merge3(base, theirs, ours))[0]
    assert sorted(x for x in out if x) == ["a15", "b-app", "b24", "c29", "h"]


def test_a_line_changed_on_both_sides_is_a_conflict():
    out, n = merged_lines(merge3(["x", "keep"], ["x1", "keep"], ["x2", "keep"]))
    assert n == 1 and out[0].startswith("<<<<<<< ") and "x1" in out and "x2" in out


text_lines = st.lists(
    st.text(alphabet="ab c-#=<>", min_size=0, max_size=8).filter(
        lambda s: not s.startswith(("<<<<<<<", "=======", ">>>>>>>", "|||||||"))
    ),
    max_size=5,
)


@settings(max_examples=examples(80), deadline=None)
@given(text_lines, text_lines, text_lines, text_lines)
def test_conflict_markers_round_trip(before, ours, theirs, after):
    text = "\n".join(before + ["<<<<<<< HEAD"] + ours + ["======="] + theirs + [">>>>>>> other"] + after)
    assert markers.first_conflict(text) == len(before) + 1
    kept, dropped = markers.settle(text, "ours")
    assert kept == "\n".join(before + ours + after)
    assert markers.first_conflict(kept) is None
    assert markers.settle(text, "theirs")[0] == "\n".join(before + theirs + after)
    both = markers.settle(text, "both")[0].split("\n")
    assert all(x in both for x in before + ours + theirs + after)
    if ours != theirs and "".join(theirs).strip():
        assert dropped == ["\n".join(theirs)]
