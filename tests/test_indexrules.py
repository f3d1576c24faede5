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


def test_rebuild_without_an_index_stays_under_the_limit(tmp_path):
    """A root with memcli.yaml but no MEMORY.md: `index rebuild` writes the template plus as many
    entries as fit, and `index check` accepts the result (the blank line put between the template
    and the entries is counted)."""
    from memcli.core import Memory
    from memcli.store.index import IndexDoc

    r = tmp_path / "r"
    Memory.init(r)
    mem = Memory(r)
    for i in range(45):
        mem.remember(f"Memory number {i}", f"summary {i}")
    (r / "MEMORY.md").unlink()
    (r / "memcli.yaml").write_text("", encoding="utf-8")
    out = Memory(r).rebuild_index()
    lines = (r / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 39 and out["entries"] == 35, (len(lines), out["entries"])
    assert Memory(r).check_index() == []
    assert IndexDoc.parse("# M\n\ncomment\n\n\n").fixed_lines() == 4


def test_hand_written_lines_never_push_listed_entries_out(tmp_path):
    """Hand-written lines that take the room of listed entries: a new memory is saved unlisted,
    every listed entry stays, and the warning names the hand-written lines."""
    from memcli.core import Memory

    r = tmp_path / "r"
    mem = Memory.init(r)
    mem.remember("Pinned one", "p", pinned=True)
    mem.remember("Plain one", "q")
    with open(r / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("".join(f"- call Bob {i}\n" for i in range(40)))
    res = Memory(r).remember("Newest", "n", importance=1.0)
    text = (r / "MEMORY.md").read_text(encoding="utf-8")
    assert "memory/pinned-one.md" in text and "memory/plain-one.md" in text and "newest" not in text
    assert not res.indexed and (r / "memory" / "newest.md").exists()
    assert any("hand-written lines of MEMORY.md (lines 1-" in w for w in res.warnings), res.warnings
    rebuilt = Memory(r).rebuild_index()
    text = (r / "MEMORY.md").read_text(encoding="utf-8")
    assert "memory/pinned-one.md" in text and "memory/plain-one.md" in text
    assert rebuilt["left_out"] == ["newest"] and "hand-written" in rebuilt["warnings"][0]


def test_rebuild_sees_writes_made_while_it_read(tmp_path, monkeypatch):
    """`index rebuild` reads the detail files without the lock: a memory remembered, one
    forgotten and one edited in the meantime are taken as they are when it writes."""
    from memcli.core import Memory

    r = tmp_path / "r"
    mem = Memory.init(r)
    for name in ("Kept one", "Gone one", "Edited one"):
        mem.remember(name, "before")
    plain = Memory.list

    def list_then_write(self, *a, **kw):
        out = plain(self, *a, **kw)
        other = Memory(r)
        other.remember("Written meanwhile", "during the rebuild")
        other.forget("gone-one")
        path = r / "memory" / "edited-one.md"
        path.write_text(path.read_text(encoding="utf-8").replace("summary: before", "summary: after"),
                        encoding="utf-8")
        return out

    monkeypatch.setattr(Memory, "list", list_then_write)
    out = Memory(r).rebuild_index()
    text = (r / "MEMORY.md").read_text(encoding="utf-8")
    assert "memory/written-meanwhile.md" in text and "memory/gone-one.md" not in text
    assert "**Edited one**: after" in text and "memory/kept-one.md" in text
    assert out["entries"] == 3
