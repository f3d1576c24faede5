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
    ds = [
        Detail(id=f"m{i}", title=f"t{i}", pinned=p, importance=imp, updated=f"2026-01-{day % 28 + 1:02d}")
        for i, (p, imp, day) in enumerate(specs)
    ]
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
    assert rebuilt["left_out"] == ["newest"] and "hand-written" in rebuilt.warnings[0]


def test_rebuild_sees_writes_made_while_it_read(tmp_path, monkeypatch):
    """`index rebuild` reads the detail files without the lock: a memory remembered, one
    forgotten and one edited in the meantime are taken as they are when it writes."""
    from memcli.core import Memory
    from memcli.usecases import maintain

    r = tmp_path / "r"
    mem = Memory.init(r)
    for name in ("Kept one", "Gone one", "Edited one"):
        mem.remember(name, "before")
    plain = maintain.listing

    def list_then_write(*a, **kw):
        out = plain(*a, **kw)
        other = Memory(r)
        other.remember("Written meanwhile", "during the rebuild")
        other.forget("gone-one")
        path = r / "memory" / "edited-one.md"
        path.write_text(path.read_text(encoding="utf-8").replace("summary: before", "summary: after"), encoding="utf-8")
        return out

    monkeypatch.setattr(maintain, "listing", list_then_write)
    out = Memory(r).rebuild_index()
    text = (r / "MEMORY.md").read_text(encoding="utf-8")
    assert "memory/written-meanwhile.md" in text and "memory/gone-one.md" not in text
    assert "**Edited one**: after" in text and "memory/kept-one.md" in text
    assert out["entries"] == 3


def test_rebuild_drops_a_memory_written_and_forgotten_while_it_read(tmp_path, monkeypatch):
    """A memory written after the rebuild took its first look at the files, read by its listing,
    then forgotten before it takes the lock, is in neither look: it still gets no line."""
    from memcli.core import Memory
    from memcli.usecases import maintain

    r = tmp_path / "r"
    mem = Memory.init(r)
    mem.remember("Kept one", "before")
    plain = maintain.listing

    def write_list_forget(*a, **kw):
        other = Memory(r)
        other.remember("Brief one", "written and forgotten during the rebuild")
        out = plain(*a, **kw)
        assert "brief-one" in {d.id for d in out.details}
        other.forget("brief-one")
        return out

    monkeypatch.setattr(maintain, "listing", write_list_forget)
    Memory(r).rebuild_index()
    assert "brief-one" not in (r / "MEMORY.md").read_text(encoding="utf-8")
    assert not Memory(r).check_index()


# ---------------------------------------------------------------- the one planner


def _memory(mid, importance=0.5, pinned=False, day=1):
    return Detail(
        id=mid,
        title=mid.title(),
        summary=f"about {mid}",
        importance=importance,
        pinned=pinned,
        updated=f"2026-01-{day:02d}T00:00:00Z",
    )


def _line(mid):
    return f"- **{mid.title()}**: about {mid} | → memory/{mid}.md"


def test_the_planner_keeps_every_line_it_cannot_use_and_drops_only_when_tidy():
    """One rule for every caller: a line that is not a memory's, or whose memory cannot be read, stays
    as written; a second line of a memory, a line whose file is gone and a line of an expired memory
    go only in a tidy plan (repair, rebuild, the reconciliation after a merge), never in a write."""
    from memcli.store.index import IndexDoc

    text = (
        "\n".join(
            [
                "# MEMORY",
                "",
                _line("alpha"),
                _line("broken"),
                _line("gone"),
                _line("alpha"),
                _line("old"),
                "- **Elsewhere**: a link out | → ../outside.md",
            ]
        )
        + "\n"
    )
    memories = {"alpha": _memory("alpha"), "broken": indexrules.UNREADABLE, "old": indexrules.EXPIRED}
    write = indexrules.plan(IndexDoc.parse(text), memories, max_lines=40)
    tidy = indexrules.plan(IndexDoc.parse(text), memories, max_lines=40, tidy=True)
    for p in (write, tidy):
        assert [d.id for d in p.listed] == ["alpha"]
        out = p.doc.render()
        assert _line("broken") in out and "../outside.md" in out
    assert write.doc.render() == text and write.dropped == []
    assert sorted((mid, why) for _, mid, why in tidy.dropped) == [
        ("alpha", indexrules.DUPLICATE),
        ("gone", indexrules.MISSING),
        ("old", indexrules.EXPIRED),
    ]
    assert _line("gone") not in tidy.doc.render() and tidy.doc.render().count(_line("alpha")) == 1
    assert sorted(why for _, _, why in tidy.kept) == [indexrules.NOT_A_MEMORY, indexrules.UNREADABLE]


def test_the_planner_fits_only_when_asked_and_offers_free_lines():
    from memcli.store.index import IndexDoc

    lines = ["# MEMORY", ""] + [_line(m) for m in ("a", "b", "c")]
    memories = {m: _memory(m, importance=i) for m, i in (("a", 0.9), ("b", 0.5), ("c", 0.1), ("d", 0.95))}
    doc = IndexDoc.parse("\n".join(lines) + "\n")
    # room for 2 entries (5 lines, 2 of them fixed): a write keeps what is listed and says so ...
    write = indexrules.plan(doc, memories, max_lines=5)
    assert (
        [d.id for d in write.listed] == ["a", "b", "c"]
        and not write.demoted
        and write.warnings == [indexrules.crowded(doc, 5, 3, [])]
    )
    # ... a repair demotes the lowest to fit, a new memory takes the place of the lowest
    assert indexrules.plan(doc, memories, max_lines=5, fit=True).demoted == ["c"]
    assert [d.id for d in indexrules.plan(doc, memories, max_lines=6, add=memories["d"]).listed] == ["d", "a", "b"]
    assert indexrules.plan(doc, memories, max_lines=6, add=memories["d"], on_full="refuse").refused
    # a free line is offered to the best memory not listed
    roomy = indexrules.plan(doc, memories, max_lines=10, promote=memories.values())
    assert roomy.promoted == ["d"] and [d.id for d in roomy.listed] == ["d", "a", "b", "c"]


def test_every_caller_keeps_the_line_of_a_memory_it_cannot_read(tmp_path):
    """remember, `index rebuild`, `heartbeat --fix` and the reconciliation after a merge follow the
    same plan: the line of a memory whose file is broken stays as it was written."""
    from memcli.core import Memory

    r = tmp_path / "r"
    mem = Memory.init(r)
    mem.remember("Broken soon", "its line must stay", id="broken-soon")
    (r / "memory" / "broken-soon.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    line = next(ln for ln in (r / "MEMORY.md").read_text(encoding="utf-8").splitlines() if "broken-soon" in ln)
    for step in (
        lambda: mem.remember("Another", "a new memory"),
        mem.rebuild_index,
        lambda: mem.repair(dry_run=False),
        mem.reconcile_index,
    ):
        step()
        assert line in (r / "MEMORY.md").read_text(encoding="utf-8").splitlines(), step


def test_a_pinned_memory_that_finds_the_index_full_of_pinned_ones_is_saved_and_named(tmp_path):
    """The index has room for one entry and it is pinned: a second pinned memory is written, kept out
    of MEMORY.md, and the write says both that the index is full of pinned entries and which memory
    was moved out (the planner's pinned branch, which no other test reached)."""
    from memcli.core import Memory

    r = tmp_path / "r"
    Memory.init(r)
    (r / "memcli.yaml").write_text("index:\n  max_lines: 6\n", encoding="utf-8")  # 4 fixed lines: room for 1
    mem = Memory(r)
    # the more important one keeps the line whatever second each is written in (the newer wins a tie)
    assert mem.remember("Pinned first", "p", pinned=True, importance=0.9).warnings == []
    res = mem.remember("Pinned second", "q", pinned=True, importance=0.5)
    assert "the index is full of pinned entries; some pinned memories are not listed" in res.warnings
    assert any("pinned-second is not listed in MEMORY.md" in w for w in res.warnings), res.warnings
    text = (r / "MEMORY.md").read_text(encoding="utf-8")
    assert "memory/pinned-first.md" in text and "memory/pinned-second.md" not in text
    assert (r / "memory" / "pinned-second.md").is_file() and Memory(r).check_index() == []
