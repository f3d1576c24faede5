"""Memory owns the root: every operation is a method that takes the lock and reads its own config."""

import pytest

from memcli import Memory
from memcli.errors import CollisionError, LockTimeout, NotARootError, UsageError
from memcli.model import DEFAULT_IMPORTANCE, DEFAULT_TYPE


@pytest.fixture
def mem(root):
    (root / "memcli.yaml").write_text("lock_timeout: 0.2s\nsession.max_rounds: 1\n", encoding="utf-8")
    return Memory(root)


@pytest.mark.parametrize(
    "write",
    [
        lambda m: m.session("s").add("user", "hello"),
        lambda m: m.session("s").clear(),
        lambda m: m.scope("t").start("a task"),
        lambda m: m.scope("t").set("k", "v", agent="A"),
        lambda m: m.scope("t").end(),
        lambda m: m.remember("A title"),
        lambda m: m.rebuild_index(),
    ],
)
def test_every_write_takes_the_root_lock_itself(mem, write):
    with mem.store.lock():
        with pytest.raises(LockTimeout):
            write(Memory(mem.root))


def test_session_reads_its_own_config(mem):
    s = mem.session("chat")
    s.add("user", "first question.")
    s.add("assistant", "first answer.")
    res = s.add("user", "second question.")
    assert res["folded"] == 2 and res["turns"] == 1  # session.max_rounds: 1 from memcli.yaml
    assert s.show()["summary"].startswith("- user: first question.")
    assert s.clear()["episode"].startswith("memory/episodes/")
    assert s.show()["turns"] == []


def test_scope_methods(mem):
    sc = mem.scope("task")
    assert sc.show() is None and sc.get("k") == {"key": "k", "value": None}
    sc.start("write it")
    sc.set("k", "v1", agent="A")
    with pytest.raises(CollisionError):
        sc.set("k", "v2", agent="B")
    assert sc.set("k", "v3", agent="B", force=True)["forced"] is True
    with pytest.raises(UsageError):
        sc.set("k", "v", agent=" ")
    assert sc.get("k")["value"] == "v3"
    assert sc.read("C", ["k", "nope"]) == {"agent": "C", "keys": {"k": "v3"}, "missing": ["nope"]}
    assert [c["forced"] for c in sc.check()["collisions"]] == [False, True]
    assert sc.end()["ended"] is True and sc.show() is None


def test_remember_defaults_live_in_the_library(mem):
    mem.remember("Plain note")
    d = mem.get("plain-note")
    assert (d.type, d.importance) == (DEFAULT_TYPE, DEFAULT_IMPORTANCE)


def test_context_budget(mem):
    assert mem.context()["budget"] <= 2000
    with pytest.raises(UsageError):
        mem.context("x", budget=10)


def test_repair_dry_run_changes_nothing(mem):
    (mem.root / "MEMORY.md").write_text("# Memory\n\n- **Gone**: x | → memory/gone.md\n", encoding="utf-8")
    res = mem.repair(dry_run=True)
    assert [a.kind for a in res.actions] == ["drop-line"] and res.applied == []
    assert "gone.md" in (mem.root / "MEMORY.md").read_text()
    res = mem.repair()
    assert res.applied and "gone.md" not in (mem.root / "MEMORY.md").read_text()
    assert not [f for f in res.report.findings if f.code.startswith("index-")]


def test_init_opens_the_new_root(tmp_path):
    m = Memory.init(tmp_path / "new")
    assert m.root == (tmp_path / "new").resolve() and (m.root / "MEMORY.md").is_file()


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.mkdir(), lambda p: p.write_text("x")])
def test_opening_a_folder_that_is_not_a_root_is_an_error_and_creates_nothing(tmp_path, make):
    path = tmp_path / "typo"
    make(path)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(NotARootError):
        Memory(path)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_same_size_edit_with_the_mtime_put_back_is_seen(mem):
    import os

    mem.remember("Alpha title", "one", id="a")
    assert [d.title for _, d in mem.store.indexed()] == ["Alpha title"]
    path = mem.root / "memory" / "a.md"
    st = os.stat(path)
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as f:  # in place: same inode, same size
        f.write(text.replace("Alpha title", "Omega title"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    assert [d.title for _, d in Memory(mem.root).store.indexed()] == ["Omega title"]
