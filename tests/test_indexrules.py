"""The index rules: ranking, free room and demotion, shared by writes and the heartbeat."""

from hypothesis import given, strategies as st

from memcli.model import Detail
from memcli.store import indexrules


def quadratic(ranked, room):
    """The rule as first written: drop unpinned from the bottom, then pinned from the bottom."""
    keep, demoted = list(ranked), []
    for d in reversed(ranked):
        if len(keep) <= room:
            break
        if not d.pinned:
            keep.remove(d)
            demoted.append(d)
    while len(keep) > max(room, 0):
        demoted.append(keep.pop())
    return keep, demoted


memories = st.lists(st.tuples(st.booleans(), st.sampled_from([0.1, 0.5, 0.9]), st.integers(0, 30)), max_size=60)


@given(memories, st.integers(-3, 45))
def test_demote_keeps_the_rule(specs, room):
    ds = [Detail(id=f"m{i}", title=f"t{i}", pinned=p, importance=imp, updated=f"2026-01-{day % 28 + 1:02d}")
          for i, (p, imp, day) in enumerate(specs)]
    ranked = indexrules.rank(ds)
    kept, demoted = indexrules.demote(ranked, room)
    want_kept, want_demoted = quadratic(ranked, room) if len(ranked) > room else (ranked, [])
    assert [d.id for d in kept] == [d.id for d in want_kept]
    assert [d.id for d in demoted] == [d.id for d in want_demoted]


def test_free_room():
    assert indexrules.free_room(40, 5) == 34
