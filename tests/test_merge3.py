"""The one three-way merge, in both modes: what `edit` asks (overlaps are conflicts) and what the
git drivers ask (lines both sides only added at one place are both kept, symmetrically)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.usecases import merge as drivers
from memcli.merge3 import merge, merge3, merge_lines, merged_lines, union_lines
from tests.conftest import examples

MODES = pytest.mark.parametrize("keep_both", [False, True], ids=["conflict", "keep-both"])
enough = settings(max_examples=examples(150), deadline=None)


@st.composite
def changes(draw):
    """A base of distinct lines and hunks that never touch: each (start, end, owner, new lines),
    owner ours, theirs or both (the same change on both sides), at least one untouched base line
    between two hunks."""
    n = draw(st.integers(0, 12))
    base = [f"base {i}" for i in range(n)]
    hunks, pos, made = [], 0, 0
    while pos <= n:
        if draw(st.integers(0, 2)) == 0:
            removed = draw(st.integers(0, min(3, n - pos)))
            added = draw(st.integers(0 if removed else 1, 3))
            owner = draw(st.sampled_from(["ours", "theirs", "both"]))
            hunks.append((pos, pos + removed, owner, [f"{owner} {made + k}" for k in range(added)]))
            made += added
            pos += removed + 1
        else:
            pos += 1
    return base, hunks


def apply(base, hunks, owners):
    out, pos = [], 0
    for start, end, owner, new in hunks:
        if owner in owners:
            out += base[pos:start] + new
            pos = end
    return out + base[pos:]


@MODES
@enough
@given(changes())
def test_changes_that_do_not_touch_are_all_kept_and_shared_ones_once(keep_both, plan):
    base, hunks = plan
    ours, theirs = apply(base, hunks, {"ours", "both"}), apply(base, hunks, {"theirs", "both"})
    expected = apply(base, hunks, {"ours", "theirs", "both"})
    assert merge_lines(base, ours, theirs, keep_both=keep_both) == expected
    text = "".join(x + "\n" for x in expected)
    assert merge(*("".join(x + "\n" for x in t) for t in (base, ours, theirs)), keep_both=keep_both) == text


lines = st.lists(st.sampled_from(["a", "b", "c", "", "d"]), max_size=10)


@MODES
@enough
@given(lines, lines)
def test_one_side_unchanged_or_both_alike_is_that_side(keep_both, base, other):
    for ours, theirs in ((base, other), (other, base), (other, other)):
        assert merge_lines(base, ours, theirs, keep_both=keep_both) == other


@st.composite
def overlap(draw):
    """A base of distinct lines, one stretch of it, and what each side wrote there instead."""
    n = draw(st.integers(1, 10))
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    ours = [f"ours {k}" for k in range(draw(st.integers(0, 3)))]
    theirs = [f"theirs {k}" for k in range(draw(st.integers(0 if ours else 1, 3)))]
    return [f"base {i}" for i in range(n)], start, end, ours, theirs


@MODES
@enough
@given(overlap())
def test_both_sides_changing_the_same_lines_is_a_conflict_in_either_mode(keep_both, case):
    base, start, end, a, b = case
    ours, theirs = base[:start] + a + base[end:], base[:start] + b + base[end:]
    regions = merge3(base, ours, theirs, keep_both=keep_both)
    assert [r for r in regions if r[0] == "conflict"] == [("conflict", base[start:end], [], a, b, [])]
    assert merge_lines(base, ours, theirs, keep_both=keep_both) is None
    lines_, n = merged_lines(regions)
    assert n == 1 and lines_ == base[:start] + ["<<<<<<< ours", *a, "=======", *b, ">>>>>>> theirs"] + base[end:]


@enough
@given(st.integers(0, 8), st.integers(0, 8), st.integers(1, 3), st.integers(1, 3))
def test_lines_both_sides_added_at_one_place_conflict_or_are_both_kept(n, at, na, nb):
    base = [f"base {i}" for i in range(n)]
    at = min(at, n)
    a, b = [f"ours {k}" for k in range(na)], [f"theirs {k}" for k in range(nb)]
    ours, theirs = base[:at] + a + base[at:], base[:at] + b + base[at:]
    assert merge_lines(base, ours, theirs, keep_both=False) is None
    kept = merge_lines(base, ours, theirs, keep_both=True)
    assert kept == merge_lines(base, theirs, ours, keep_both=True) == base[:at] + min(a + b, b + a) + base[at:]


def test_keep_both_keeps_a_line_both_sides_added_once_and_a_moved_line_where_it_went():
    base = ["x", "y"]
    assert merge_lines(base, ["x", "new", "mine", "y"], ["x", "new", "yours", "y"], keep_both=True) == [
        "x",
        "new",
        "mine",
        "yours",
        "y",
    ]
    # ours moved "y" up, theirs added a line after it: "y" stays where ours put it
    assert merge_lines(["a", "y", "b"], ["y", "a", "b"], ["a", "y", "added", "b"], keep_both=True) == [
        "y",
        "a",
        "added",
        "b",
    ]


@enough
@given(lines, lines, lines)
def test_the_drivers_mode_is_symmetric(base, a, b):
    one, two = merge3(base, a, b, keep_both=True), merge3(base, b, a, keep_both=True)
    assert union_lines(one) == union_lines(two)
    assert merged_lines(one)[1] == merged_lines(two)[1]
    if not merged_lines(one)[1]:
        assert merged_lines(one)[0] == merged_lines(two)[0]
    assert drivers.merge3(base, a, b) == one  # the drivers use this mode


@enough
@given(lines, lines, lines)
def test_the_conflict_mode_is_symmetric_too(base, a, b):
    assert merge_lines(base, a, b) == merge_lines(base, b, a)
