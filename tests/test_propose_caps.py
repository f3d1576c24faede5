"""MCP `propose` is capped: per call, per hour, and the inbox's size (item 10)."""

import os
from pathlib import Path

import pytest

from memcli.core import Memory
from memcli.errors import LimitError, UsageError
from memcli.requests import RememberRequest
from memcli.store import inbox as store
from memcli.usecases.init import init_root


def user_config(text: str) -> None:
    path = Path(os.environ["HOME"]) / ".config/memcli/config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def material(tmp_path):
    """A root with turns to reflect on, and proposal objects that each quote a turn of their own (a
    proposal whose turns another already quotes is left out before any cap is counted)."""
    root = tmp_path / "r"
    init_root(root)
    (root / ".memcli/config.yaml").write_text("session:\n  max_rounds: 1\n")
    m = Memory(root)
    for i in range(30):
        m.session("s").add("user", f"we always run the migrations before the deploy, step {i}")
        m.session("s").add("assistant", f"noted: migrations first, step {i}")
    turns = [(item["ref"], t["n"]) for item in m.reflect_material()["items"] for t in item["turns"]]
    assert len(turns) > 55

    def objects(n, start=0):
        quoted = [turns[(start + i) % len(turns)] for i in range(n)]
        return [
            {
                "kind": "new",
                "title": f"Lesson number {start + i}",
                "summary": f"do thing {start + i}",
                "type": "lesson",
                "confidence": 0.7,
                "evidence": [{"ref": ref, "turn": turn}],
            }
            for i, (ref, turn) in enumerate(quoted)
        ]

    return root, objects


def test_24_10_mcp_propose_refuses_two_thousand_proposals_in_one_call(material):
    pytest.importorskip("mcp")
    from tests.test_mcp import served

    root, objects = material

    async def body(s):
        return await s.call_tool("propose", {"proposals": objects(2000)})

    res = served(root, body)
    assert res.is_error and "inbox.propose_per_call" in res.content[0].text
    assert store.pending(root)[0] == []  # nothing written


def test_24_10_per_hour_and_inbox_size_caps_with_clear_errors(material):
    root, objects = material
    user_config("inbox:\n  propose_per_call: 5\n  propose_per_hour: 8\n  max_pending: 100\n")
    m = Memory(root)
    assert len(m.propose(objects(5), now="2026-12-01T10:00:00Z")["proposed"]) == 5
    with pytest.raises(LimitError, match=r"5 proposals in the last hour; at most 8 .*inbox.propose_per_hour"):
        m.propose(objects(4, 10), now="2026-12-01T10:30:00Z")
    assert len(m.propose(objects(3, 20), now="2026-12-01T10:40:00Z")["proposed"]) == 3
    assert len(m.propose(objects(5, 30), now="2026-12-01T11:20:00Z")["proposed"]) == 5  # the first five are an hour old
    user_config("inbox:\n  max_pending: 14\n")
    with pytest.raises(LimitError, match=r"the inbox holds 13 proposals .*inbox.max_pending.*memcli inbox"):
        Memory(root).propose(objects(2, 40), now="2026-12-01T13:00:00Z")
    user_config("inbox:\n  max_bytes: 1000\n")
    with pytest.raises(LimitError, match="inbox.max_bytes"):
        Memory(root).propose(objects(1, 50), now="2026-12-01T13:00:00Z")
    assert len(store.pending(root)[0]) == 13


def test_24_10_the_caps_exit_4_from_the_command_line(material):
    from conftest import Cli

    root, objects = material
    user_config("inbox:\n  propose_per_call: 1\n")
    with pytest.raises(LimitError) as e:
        Memory(root).propose(objects(2))
    assert e.value.exit_code == 4 and e.value.code == "limit"
    assert Cli(root)("heartbeat").exit_code == 0


def test_31_mcp_propose_refuses_an_oversized_proposal_at_the_door(material):
    """The write check's size part runs on MCP `propose` as on every write: a proposal of
    2,000,000 characters is refused with the documented error, and nothing reaches the inbox
    (before, it was stored, and `inbox accept` refused it after `sync` had pushed it)."""
    pytest.importorskip("mcp")
    from tests.test_mcp import served

    root, objects = material
    big = objects(1)
    big[0]["text"] = ("all work and no play " * 95_239)[:2_000_000]
    assert len(big[0]["text"]) == 2_000_000

    async def body(s):
        return await s.call_tool("propose", {"proposals": big})

    res = served(root, body)
    assert res.is_error
    assert res.structured_content["code"] == "usage" and res.structured_content["exit_code"] == 2
    assert "the body is larger than 1 MB; memcli keeps text memories" in res.content[0].text
    assert store.pending(root)[0] == [] and not list((root / "memory" / "inbox").glob("*.md"))
    with pytest.raises(UsageError, match="larger than 1 MB"):  # the Python API's door: the same check
        Memory(root).propose(big)


def test_a_write_the_gate_turns_into_a_proposal_keeps_to_the_same_caps(tmp_path):
    """`remember` and `update` under write.gate: inbox propose as `propose` does: at every door the
    inbox's caps hold (here max_pending, then propose_per_hour), with the same clear error."""
    from conftest import run_memcli

    root = tmp_path / "r"
    init_root(root)
    user_config("write:\n  gate: inbox\ninbox:\n  max_pending: 2\n")
    for i in range(2):
        r = run_memcli("--root", root, "remember", f"Note {i}", "a summary")
        assert r.returncode == 0 and "proposed" in r.stdout + r.stderr, r.stderr
    r = run_memcli("--root", root, "remember", "Note 2", "a summary")
    assert r.returncode == 4 and "inbox.max_pending" in r.stderr, (r.returncode, r.stderr)
    with pytest.raises(LimitError, match="inbox.max_pending"):
        Memory(root).gate("mcp").remember(RememberRequest(title="Note 3", summary="s"))
    assert len(store.pending(root)[0]) == 2
    user_config("write:\n  gate: inbox\ninbox:\n  propose_per_hour: 2\n")
    with pytest.raises(LimitError, match="inbox.propose_per_hour"):
        Memory(root).gate("mcp").remember(RememberRequest(title="Note 4", summary="s"))
