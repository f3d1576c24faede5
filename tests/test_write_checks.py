"""What the library checks on the way in: control characters, secrets in every committed field,
a body's frontmatter keys, the trace log's size and roots nested in a memory folder."""

from __future__ import annotations

import json
import random
import string

import pytest

from memcli import Memory
from memcli.errors import SecretError, UsageError
from memcli.usecases.init import init_root
from memcli.store.trace import access


def token(seed: int = 7) -> str:
    rng = random.Random(seed)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.fixture
def mem(tmp_path):
    init_root(tmp_path / "r")
    return Memory(tmp_path / "r")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.remember("t\x1b[2J", "s"),
        lambda m: m.remember("t", "s", tags=["a\tb"]),
        lambda m: m.remember("t", "s", source="x\x07"),
        lambda m: m.session().add("user", "hi \x9b"),
        lambda m: m.scope().start("task\x00"),
        lambda m: m.scope().set("k\n", "v", "a"),
        lambda m: m.scope().set("k", "v", "a\x7f"),
    ],
    ids=["title", "tag-tab", "source", "turn-c1", "task", "key-newline", "agent"],
)
def test_control_characters_are_refused_by_the_library(mem, call):
    with pytest.raises(UsageError, match="control character"):
        call(mem)


def test_free_text_keeps_tabs_and_line_breaks(mem):
    mem.session().add("user", "line one\r\nline\ttwo")
    mem.remember("Tabbed", "a\tb")


def test_an_update_is_checked_like_a_new_memory(mem):
    mem.remember("T", "s")
    with pytest.raises(UsageError, match="control character"):
        mem.update("t", summary="x\x1b]0;X\x07")
    with pytest.raises(UsageError, match="limit"):
        mem.update("t", tags=[f"t{i}" for i in range(101)])
    with pytest.raises(SecretError):
        mem.update("t", append=f"key {token()}")


def test_redact_covers_the_id_and_other_frontmatter_keys(mem):
    (mem.root / "memcli.yaml").write_text("write:\n  secrets: redact\n", encoding="utf-8")
    m = Memory(mem.root)
    res = m.remember("t", "s", id=token(), body=f"---\n{token(8)}: {token(9)}\n---\nB\n")
    text = (m.root / res.path).read_text(encoding="utf-8")
    assert res.id.startswith("redacted")
    assert token() not in text and token(8) not in text and token(9) not in text
    assert len(res.redacted) == 3


def test_command_line_options_win_over_the_body_frontmatter(mem):
    body = "---\ntype: lesson\nimportance: 0.9\npinned: true\nsource: the file\nowner: alice\n---\nB\n"
    d = mem.get(mem.remember("A", "s", body=body, type="fact", importance=0.2, source="cli").id)
    assert (d.type, d.importance, d.pinned, d.source, d.extra) == ("fact", 0.2, True, "cli", {"owner": "alice"})
    with pytest.raises(UsageError, match="importance"):
        mem.remember("B", "s", body="---\nimportance: high\n---\n")
    with pytest.raises(UsageError, match="type"):
        mem.remember("C", "s", body="---\ntype: thought\n---\n")


def test_the_index_line_shows_a_cut_summary_and_the_detail_keeps_it_whole(mem):
    summary = "长" * 400
    res = mem.remember("Chinese", summary)
    assert len(res.line) < 250 and res.line.count("…") == 1
    assert mem.get(res.id).summary == summary
    assert mem.check_index() == []


def test_access_reads_only_the_newest_part_of_the_trace(mem):
    state = mem.root / ".memcli"
    old = json.dumps({"time": "2026-01-01T00:00:00Z", "ids": ["old"]}) + "\n"
    new = json.dumps({"time": "2026-11-01T00:00:00Z", "ids": ["new"]}) + "\n"
    (state / "trace.jsonl.1").write_text(old * 50, encoding="utf-8")
    (state / "trace.jsonl").write_text(new * 3, encoding="utf-8")
    assert set(access(mem.root)) == {"old", "new"}
    assert set(access(mem.root, budget=len(new) * 3)) == {"new"}
    assert access(mem.root, budget=len(new) * 2)["new"]["count"] == 2


def test_a_nested_index_is_never_a_memory(mem, tmp_path):
    with pytest.raises(UsageError, match="inside the memory folder"):
        init_root(mem.root / "memory" / "sub")
    (mem.root / "memory" / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    assert mem.list().details == [] and mem.list().problems == []
    with pytest.raises(UsageError):
        mem.remember("Index", "s", id="MEMORY")


def test_a_secret_written_by_hand_is_refused_or_redacted_when_the_edit_ends(mem):
    res = mem.remember("Edited", "s")
    path = mem.root / res.path
    before = path.read_text(encoding="utf-8")
    s = mem.edit_begin("edited")
    s.draft.write_text(before + f"token {token()}\n", encoding="utf-8")
    with pytest.raises(SecretError, match=r"\.memcli/edits/") as e:
        mem.edit_finish(s)
    assert path.read_text(encoding="utf-8") == before
    assert token() in s.draft.read_text(encoding="utf-8") and s.draft.name in e.value.message
    (mem.root / "memcli.yaml").write_text("write:\n  secrets: redact\n", encoding="utf-8")
    m = Memory(mem.root)
    s = m.edit_begin("edited")
    s.draft.write_text(before + f"token {token()}\n", encoding="utf-8")
    done = m.edit_finish(s)
    assert token() not in path.read_text(encoding="utf-8") and done.redacted and done.warnings
