"""index.rank: activity — what stays in a full MEMORY.md follows recalls from the trace; lines keep
the committed order; a merged index is planned without the trace, so clones agree."""

import pytest

from memcli.core import Memory
from memcli.store import indexrules
from memcli.store.index import IndexDoc

from conftest import git, shared_origin
from test_git import mc


def full_root(path, rank: str, max_lines: int = 10):
    Memory.init(path)
    (path / "memcli.yaml").write_text(f"index.rank: {rank}\nindex.max_lines: {max_lines}\n")
    m = Memory(path)
    room = indexrules.free_room(max_lines, m.store.read_index().fixed_lines())
    ids = [
        m.remember(f"Topic {w} notes", f"about {w}", id=f"t{i}-{w}", now=f"2026-11-{i + 1:02d}T10:00:00Z").id
        for i, w in enumerate(["alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel"][:room])
    ]
    return m, ids


def listed(m):
    return [e.id for e in m.store.read_index().entries]


@pytest.mark.parametrize("rank", ["activity", "importance"])
def test_a_full_index_demotes_what_is_not_in_use(tmp_path, rank):
    m, ids = full_root(tmp_path / rank, rank)
    used = ids[:2]  # the oldest two: the first to go by importance and date alone
    for _ in range(3):
        for mid in used:
            assert m.recall(f"{mid.split('-')[1]} notes", now="2026-11-20T10:00:00Z").hits[0].id == mid
    res = m.remember("Topic juniper notes", "new", id="new-juniper", now="2026-11-21T10:00:00Z")
    if rank == "activity":
        assert set(used) <= set(listed(m)) and res.demoted and res.demoted[0] not in used
    else:  # what the trace changes: by importance and date the oldest, in use or not, goes first
        assert res.demoted == [used[0]]
    assert listed(m) == [d.id for d in indexrules.rank(m.get(i) for i in listed(m))]  # lines keep the committed order


def test_heartbeat_fix_swaps_an_idle_line_for_a_memory_in_use(tmp_path):
    m, ids = full_root(tmp_path / "r", "activity")
    m.remember("Topic kapok notes", "x", id="kapok", importance=0.3, now="2026-10-01T10:00:00Z")  # old: no line
    assert "kapok" not in listed(m)
    for _ in range(4):
        assert m.recall("kapok notes", now="2026-11-20T10:00:00Z").hits[0].id == "kapok"
    rep = m.repair(now="2026-11-20T12:00:00Z")
    assert any("promoted kapok" in x for x in rep.applied) and "kapok" in listed(m)
    before = (m.root / "MEMORY.md").read_text()
    assert m.repair(now="2026-11-20T12:00:00Z").applied == []  # deterministic for a given trace: stable
    assert (m.root / "MEMORY.md").read_text() == before


def test_retention_weights_and_determinism():
    act = indexrules.Activity({"a": {"count": indexrules.ACCESS_CAP, "last": "2026-11-30T00:00:00Z"}}, 90.0)
    from memcli.model import Detail

    a = Detail("a", "A", importance=0.2, updated="2026-01-01T00:00:00Z")
    b = Detail("b", "B", importance=0.9, updated="2026-01-01T00:00:00Z")
    p = Detail("p", "P", importance=0.1, pinned=True, updated="2025-01-01T00:00:00Z")
    ranked = indexrules.rank([b, a, p], act)
    assert [d.id for d in ranked] == ["p", "a", "b"]  # pinned first; then recalls outweigh importance here
    assert [d.id for d in indexrules.rank([b, a, p], act)] == [d.id for d in ranked]
    assert [d.id for d in indexrules.rank([b, a, p], indexrules.Activity({}, 90.0))] == ["p", "b", "a"]
    now = indexrules._days("2026-11-30T00:00:00Z")
    assert indexrules.retention(a, act, now) == pytest.approx(
        indexrules.W_IMPORTANCE * 0.2 + indexrules.W_RECENCY * 1.0 + indexrules.W_ACCESS * 1.0
    )


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_two_clones_with_different_traces_merge_to_the_same_index(tmp_path):
    words, room = [], []

    def seed(root):
        (root / "memcli.yaml").write_text("index.rank: activity\nindex.max_lines: 10\n")
        m = Memory(root)
        room.append(indexrules.free_room(10, m.store.read_index().fixed_lines()))
        words.extend(["alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel"][: room[0] - 1])
        for i, w in enumerate(words):
            m.remember(f"Topic {w} notes", f"about {w}", id=w, now=f"2026-11-{i + 1:02d}T10:00:00Z")

    clone = shared_origin(tmp_path, mc, seed)
    clones = []
    for name, used in (("a", words[:2]), ("b", words[2:4])):
        path = clone(name)
        c = Memory(path)
        for _ in range(3):
            for w in used:
                c.recall(f"{w} notes", now="2026-11-20T10:00:00Z")
        c.remember(f"Topic {name} extra notes", "new", id=f"extra-{name}", now="2026-11-21T10:00:00Z")
        git(path, "add", "-A")
        git(path, "commit", "-qm", "work")
        clones.append(path)
    a, b = clones
    git(a, "fetch", "-q", str(b), "HEAD:refs/heads/other")
    git(b, "fetch", "-q", str(a), "HEAD:refs/heads/other")
    for r in (a, b):
        git(r, "merge", "-q", "--no-edit", "other")
        Memory(r).reconcile_index()  # what `memcli sync` does after the merge
    assert (a / ".memcli/trace.jsonl").read_text() != (b / ".memcli/trace.jsonl").read_text()
    text = (a / "MEMORY.md").read_text()
    assert text == (b / "MEMORY.md").read_text()
    entries = IndexDoc.parse(text).entries
    # both sides' entries meet over the limit: the merged index fits, ranked without either trace
    assert len(text.splitlines()) < 10
    every = [Memory(a).get(i) for i in (*words, "extra-a", "extra-b")]
    assert {e.id for e in entries} == {d.id for d in indexrules.rank(every)[: room[0]]}
    assert [e.id for e in entries] == [d.id for d in indexrules.rank(Memory(a).get(e.id) for e in entries)]
