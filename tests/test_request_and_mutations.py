"""One request from the door to the use case (a gated `remember` accepted later keeps every
option), and the behaviours the suite used to let a mutation change unnoticed: the echo of the
user's own words in an episode, and `update` reading the file only under the lock."""

from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import pytest

from conftest import Cli
from memcli.core import Memory
from memcli.requests import RememberRequest
from memcli.recall.details import without_echo
from memcli.store import inbox as proposals
from memcli.usecases.init import init_root


@pytest.fixture
def gated(tmp_path):
    root = tmp_path / "r"
    init_root(root)
    (root / ".memcli/config.yaml").write_text("write:\n  gate: inbox\n")
    return root


def _accepted(root, pid):
    Memory(root).inbox.accept([pid])
    return Memory(root)


def test_24_12_a_gated_remember_accepted_later_keeps_every_option(gated):
    cli = Cli(gated)
    res = cli.json(
        "remember",
        "Release freeze",
        "no merges after Tuesday",
        "--pin",
        "--expires",
        "30d",
        "--source",
        "planning meeting",
        "--type",
        "event",
        "--importance",
        "0.9",
        "--tag",
        "release",
        "--alias",
        "封版",
        code=0,
    )
    assert res["data"]["action"] == "proposed"
    pid = res["data"]["id"]
    m = _accepted(gated, pid)
    d = m.get("release-freeze")
    in_30 = (datetime.now(timezone.utc) + timedelta(days=30)).date().isoformat()
    assert (d.type, d.importance, d.pinned, d.tags, d.aliases) == ("event", 0.9, True, ("release",), ("封版",))
    assert d.expires in (in_30, (datetime.now(timezone.utc) + timedelta(days=31)).date().isoformat())
    assert d.source.startswith("planning meeting") and pid in d.source
    assert "release-freeze" in (gated / "MEMORY.md").read_text()  # pinned: listed


def test_24_12_the_body_frontmatter_and_the_api_request_travel_through_the_gate(gated):
    gate = Memory(gated).gate("mcp")
    req = RememberRequest(
        "Retry budget",
        "three tries",
        body="---\ntype: lesson\nimportance: 0.8\nowner: ops\n---\nBack off exponentially.\n",
        expires="2031-01-01",
        source="postmortem 12",
        now="2026-12-01T10:00:00Z",
    )
    res = gate.remember(req)
    assert res.action == "proposed"
    p = proposals.read(gated, res.id)
    assert (p.type, p.importance, p.expires, p.source) == ("lesson", 0.8, "2031-01-01", "postmortem 12")
    d = _accepted(gated, res.id).get("retry-budget")
    assert (d.type, d.importance, d.expires, d.extra.get("owner")) == ("lesson", 0.8, "2031-01-01", "ops")
    assert d.source.startswith("postmortem 12") and "Back off exponentially." in d.body and "owner" not in d.body


def test_24_12_direct_and_gated_take_the_same_request(tmp_path):
    root = tmp_path / "d"
    init_root(root)
    req = RememberRequest(
        "Pinned note", "kept", pinned=True, expires="2031-01-01", source="s", type="fact", importance=0.7
    )
    d = Memory(root).gate("cli").remember(req)
    got = Memory(root).get(d.id)
    assert (got.pinned, got.expires, got.source, got.type, got.importance) == (True, "2031-01-01", "s", "fact", 0.7)


# ---------------------------------------------------------------- 13: what mutations got past


EPISODE = """# Episodes 2026-12-01

## 2026-12-01T10:00:00Z session default

**user** (2026-12-01T10:00:00Z): the staging database listens on port 5544 behind the bastion

**assistant** (2026-12-01T10:00:05Z): noted, I will use the bastion tunnel
"""


def test_24_13_without_echo_drops_the_users_own_words():
    query = "the staging database listens on port 5544 behind the bastion"
    rest = without_echo(EPISODE, query)
    assert "5544" not in rest and "bastion tunnel" in rest
    assert without_echo(EPISODE, "what colour is the sky") == EPISODE


def test_24_13_recall_does_not_hand_back_the_users_own_statement_as_evidence(tmp_path):
    root = tmp_path / "r"
    init_root(root)
    (root / "memory/episodes").mkdir(parents=True, exist_ok=True)
    (root / "memory/episodes/2026-12-01.md").write_text(EPISODE, encoding="utf-8")
    res = Cli(root).json("recall", "the staging database listens on port 5544 behind the bastion", "--layer", "details")
    hits = res["data"]["hits"]
    assert not [h for h in hits if h["id"].startswith("episode:")], hits


def test_24_13_update_reads_the_file_only_under_the_lock(tmp_path, monkeypatch):
    """Another writer that finishes between `update` starting and taking the lock: its change is
    kept (a read before the lock would write the old text back over it)."""
    root = tmp_path / "r"
    init_root(root)
    Memory(root).remember("Deploy", "blue green", id="deploy")
    from memcli.store.root import Root

    real_lock = Root.lock
    raced = []

    @contextmanager
    def lock(self, *a, **kw):
        if not raced:
            raced.append(1)
            Memory(root).update("deploy", append="the other writer's line")  # takes the lock itself
        with real_lock(self, *a, **kw):
            yield

    monkeypatch.setattr(Root, "lock", lock)
    Memory(root).update("deploy", summary="blue green, with a canary")
    monkeypatch.setattr(Root, "lock", real_lock)
    d = Memory(root).get("deploy")
    assert d.summary == "blue green, with a canary" and "the other writer's line" in d.body, d.body
