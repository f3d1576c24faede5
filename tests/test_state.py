"""Sessions and scopes as files: bounded, never blocking, recoverable; the summarizer runs unlocked."""

from __future__ import annotations

import json

import pytest

from memcli.core import Memory
from memcli.errors import UsageError
from memcli.store import scope as scope_store
from memcli.store import session as session_store


@pytest.fixture
def mem(tmp_path):
    return Memory.init(tmp_path / "r")


def test_a_scope_value_over_the_limit_is_refused_with_the_limit(mem):
    with pytest.raises(UsageError, match=f"limit is {scope_store.MAX_VALUE}"):
        mem.scope().set("k", "v" * (scope_store.MAX_VALUE + 1), "a")
    assert not (mem.root / ".memcli" / "scopes" / "default.json").exists()


def _plant_scope(mem, keys: dict, log: list) -> None:
    path = mem.root / ".memcli" / "scopes" / "default.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "name": "default",
                "task": None,
                "started": "2026-11-30T00:00:00Z",
                "keys": keys,
                "log": log,
                "collisions": [],
            }
        ),
        encoding="utf-8",
    )


def test_a_scope_never_grows_past_its_byte_limit(mem):
    item = {"value": "v" * scope_store.MAX_VALUE, "agent": "a", "time": "t", "writers": ["a"], "writes": 1}
    _plant_scope(mem, {f"k{i}": item for i in range(scope_store.MAX_BYTES // scope_store.MAX_VALUE - 1)}, [])
    path = mem.root / ".memcli" / "scopes" / "default.json"
    before = path.read_bytes()
    with pytest.raises(UsageError, match=f"the limit is {scope_store.MAX_BYTES}"):
        mem.scope().set("one-more", "v" * scope_store.MAX_VALUE, "a")
    assert path.read_bytes() == before
    assert mem.scope().end()["ended"]


def test_the_scope_log_keeps_the_newest_entries(mem):
    _plant_scope(
        mem,
        {},
        [{"time": "t", "agent": "a", "key": f"old{i}", "action": "set"} for i in range(scope_store.MAX_LOG + 50)],
    )
    mem.scope().set("k", "v", "a")
    log = mem.scope().show()["log"]
    assert len(log) == scope_store.MAX_LOG and log[-1]["key"] == "k" and log[0]["key"] == "old51"


def test_a_broken_session_is_moved_aside_by_the_next_turn(mem):
    path = mem.root / ".memcli" / "sessions" / "default.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{broken", encoding="utf-8")
    assert mem.session().show().warnings
    res = mem.session().add("user", "hello")
    assert "moved it to .memcli/sessions/default.json.broken-" in res.warnings[0]
    kept = [p for p in path.parent.iterdir() if p.name.startswith("default.json.broken-")]
    assert [p.read_text(encoding="utf-8") for p in kept] == ["{broken"]
    assert [t["text"] for t in mem.session().show()["turns"]] == ["hello"]


def test_a_fold_is_planned_again_when_the_session_changed_while_summarizing(tmp_path, monkeypatch):
    """The summarizer runs without the lock; a turn added meanwhile is kept, the turns are
    folded once, and nothing is lost."""
    monkeypatch.setenv("MEMCLI_SUMMARIZER", "cat")
    r = tmp_path / "r"
    Memory.init(r)
    (r / "memcli.yaml").write_text("session:\n  max_rounds: 1\n", encoding="utf-8")
    plain = session_store.summarize
    calls = []

    def summarize(command, timeout, previous, turns, limit, cwd=None):
        calls.append([t["text"] for t in turns])
        if len(calls) == 1:  # another writer adds a turn while the first summarizer runs
            Memory(r).session().add("user", "third question")
        return plain(None, timeout, previous, turns, limit)

    monkeypatch.setattr(session_store, "summarize", summarize)
    Memory(r).session().add("user", "first question")
    res = Memory(r).session().add("user", "second question")
    data = Memory(r).session().show()
    assert [t["text"] for t in data["turns"]] == ["third question"]
    assert "first question" in data["summary"] and "second question" in data["summary"]
    episodes = "".join(p.read_text(encoding="utf-8") for p in (r / "memory" / "episodes").glob("*.md"))
    assert episodes.count("first question") == 1 and episodes.count("second question") == 1
    assert res["folded"] == 0 and calls[0] == ["first question"]


def test_one_folded_turn_is_named_in_the_singular(tmp_path):
    r = tmp_path / "r"
    Memory.init(r)
    (r / "memcli.yaml").write_text("session:\n  max_rounds: 1\n", encoding="utf-8")
    Memory(r).session().add("user", "first question")
    assert Memory(r).session().add("user", "second question")["folded"] == 1
    log = "".join(p.read_text(encoding="utf-8") for p in (r / "memory" / "episodes").glob("*.md"))
    assert "session default: 1 turn folded into the summary" in log and "1 turns" not in log
