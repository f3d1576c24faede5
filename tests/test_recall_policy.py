"""Two intents, two policies: a question asked (the CLI's `recall`, MCP `recall`, the Python API)
gets the candidates that relate to it when nothing answers it, marked weak; memory put into a
prompt unasked (the hook, `context`, `recall --strict`) keeps the strict gate. A name is not a
wall, and episodes answer last. Through the library, the real CLI, the MCP SDK's client and the
hook."""

import json

import pytest

from memcli import Memory
from memcli.recall import recall
from tests.conftest import run_memcli

NOW = "2026-12-01T00:00:00Z"
# names Podman, which no memory names: the note on small images answers the rest of it
ASKED = "what do slim Podman images need for a multi-stage build"


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)  # the words' own policies
    m = Memory(root)
    m.remember(
        "Keeping images small",
        "multi-stage build, a distroless base and a .dockerignore that leaves out node_modules",
        tags=["build"],
    )
    m.remember("MySQL charset double encoding", "set utf8mb4 on the connection, not only the table", tags=["mysql"])
    return m


def ids(res):
    return [h.id for h in res.hits]


def test_a_question_gets_what_relates_and_injection_only_what_answers(mem):
    asked = mem.recall(ASKED, now=NOW)
    assert ids(asked) == ["keeping-images-small"] and asked.hits[0].sure == "weak"
    assert asked.policy == "candidates" and asked.to_dict()["policy"] == "candidates"
    unasked = mem.recall(ASKED, now=NOW, strict=True)
    assert ids(unasked) == [] and unasked.to_dict()["policy"] == "strict"
    # an answer is the same under both, and sure of itself
    for strict in (False, True):
        res = mem.recall("mysql charset utf8mb4", now=NOW, strict=strict)
        assert ids(res) == ["mysql-charset-double-encoding"] and res.hits[0].sure == "strong"
    # what relates to nothing gets nothing under both
    for strict in (False, True):
        assert ids(mem.recall("how do I shard a collection in MongoDB", now=NOW, strict=strict)) == []
        assert ids(mem.recall("what's a good sourdough recipe", now=NOW, strict=strict)) == []


def test_a_name_the_store_knows_is_a_wall(mem):
    mem.remember("Podman rootless setup", "subuid ranges for rootless Podman", tags=["podman"])
    # the question is about Podman, which a memory names: the note on other images is not a candidate
    assert "keeping-images-small" not in ids(mem.recall(ASKED, now=NOW))


def test_a_memory_naming_another_product_is_no_candidate(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = Memory(root)
    m.remember("企业微信机器人发消息被限流", "群机器人 webhook 每分钟最多 20 条；告警先聚合再发", tags=["告警"])
    m.remember("Restoring the Postgres backup", "pgBackRest restore --delta to a new instance", tags=["backup"])
    m.remember("Backup schedule", "nightly at two, kept for a month", tags=["ops"])
    # 钉钉 and MongoDB are names no memory holds, but each candidate names another product; and a
    # list asked for with -k is not filled when what related to the question is left out
    for limit in (None, 5):
        assert ids(m.recall("钉钉机器人发消息被限流怎么办", limit=limit, now=NOW)) == []
        assert ids(m.recall("how do I restore a MongoDB backup to a new instance", limit=limit, now=NOW)) == []
    # the same questions about the products the memories name are answered
    assert ids(m.recall("企业微信机器人发消息被限流怎么办", now=NOW)) == ["企业微信机器人发消息被限流"]
    assert ids(m.recall("how do I restore a Postgres backup to a new instance", now=NOW))[:1] == [
        "restoring-the-postgres-backup"
    ]


def test_without_k_a_few_weak_candidates_with_k_as_many_as_asked(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = Memory(root)
    for what in ["api", "worker", "cron", "web", "admin"]:
        m.remember(f"Keeping the {what} image small", f"multi-stage build for the {what} image", tags=["build"])
    res = m.recall(ASKED, now=NOW)
    assert 1 <= len(res.hits) <= 3 and all(h.sure == "weak" for h in res.hits)
    assert len(m.recall(ASKED, limit=5, now=NOW).hits) == 5


def test_the_cli_says_which_policy_ran(mem, root):
    out = run_memcli("--root", root, "recall", ASKED, "--json")
    data = json.loads(out.stdout)["data"]
    assert out.returncode == 0 and data["policy"] == "candidates"
    assert [(h["id"], h["sure"]) for h in data["hits"]] == [("keeping-images-small", "weak")]
    plain = run_memcli("--root", root, "recall", ASKED)
    assert plain.returncode == 0 and "· weak " in plain.stdout and "## Keeping images small" in plain.stdout
    assert "no sure answer" in plain.stderr and "no sure answer" not in plain.stdout
    strict = run_memcli("--root", root, "recall", "--strict", ASKED, "--json")
    assert strict.returncode == 1 and json.loads(strict.stdout)["data"]["policy"] == "strict"
    assert json.loads(strict.stdout)["data"]["hits"] == []
    # the Typer path (an option only Typer reads: --deep) agrees with the fast path
    deep = run_memcli("--root", root, "recall", ASKED, "--deep", "--json")
    assert json.loads(deep.stdout)["data"]["policy"] == "candidates"


def test_context_and_the_hook_keep_the_strict_gate(mem, root):
    ctx = mem.context(ASKED, budget=2000)
    assert "## Recalled memories" not in ctx["text"] and ctx["recalled"] == []
    answered = mem.context("mysql charset utf8mb4", budget=2000)
    assert answered["recalled"] == ["mysql-charset-double-encoding"]

    project = root / "src"
    project.mkdir()
    assert run_memcli("hook", "allow", root).returncode == 0
    prompt = f"last time, {ASKED}?"  # "last time": should-recall lets it through
    event = json.dumps(
        {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    )
    r = run_memcli("hook", "claude-code", input=event, cwd=project)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("<!-- memcli context.") and "## Recalled memories" not in r.stdout
    event = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "last time, how did we fix the mysql charset utf8mb4 thing?",
        }
    )
    r = run_memcli("hook", "claude-code", input=event, cwd=project)
    assert "## Recalled memories" in r.stdout and "memory/mysql-charset-double-encoding.md" in r.stdout


def test_mcp_recall_is_a_question_and_mcp_context_injects(mem, root):
    pytest.importorskip("mcp")
    from tests.test_mcp import data_part, served

    async def body(s):
        asked = await s.call_tool("recall", {"query": ASKED})
        ctx = await s.call_tool("context", {"query": ASKED})
        return data_part(asked.structured_content), data_part(ctx.structured_content)

    asked, ctx = served(root, body)
    assert asked["policy"] == "candidates"
    assert [(h["id"], h["sure"]) for h in asked["hits"]] == [("keeping-images-small", "weak")]
    assert ctx["recalled"] == [] and "## Recalled memories" not in ctx["text"]


# -- episodes answer last ---------------------------------------------------------------------------

EPISODE = """# Episodes 2026-11-20

## 2026-11-20T10:00:00Z session deploy

**user** (2026-11-20T10:00:00Z): the staging deploy timed out again

**assistant** (2026-11-20T10:00:05Z): the fix was to connect the vpn first, then run make \
deploy-staging; helm hung without it

## 2026-11-20T15:00:00Z session lunch

**user** (2026-11-20T15:00:00Z): the canteen closes at two on fridays
"""


def _store(root):
    m = Memory(root)
    (root / "memory" / "episodes" / "2026-11-20.md").write_text(EPISODE, encoding="utf-8")
    m.remember("Staging deploy needs the vpn", "connect the vpn first, then make deploy-staging", tags=["deploy"])
    return m


def _accept(root, times, memory="staging-deploy-needs-the-vpn"):
    """An accepted proposal in the archive quoting these turns of the episode (as reflection writes it)."""
    from memcli.store import inbox

    quotes = [
        inbox.Quote("assistant", t, "memory/episodes/2026-11-20.md", "the fix was to connect the vpn first")
        for t in times
    ]
    p = inbox.make("new", "Staging deploy needs the vpn", summary="connect the vpn first", evidence=quotes)
    p = p.replace(status="accepted", decided=NOW, memory=memory)
    folder = inbox.folder(root, archived=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{p.id}.md").write_text(inbox.render(p), encoding="utf-8")


def _episode(res):
    return next(h for h in res.hits if h.id.startswith("episode:"))


def test_a_memory_comes_before_the_episode_that_says_the_same(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = _store(root)
    res = recall(m.store, "staging deploy vpn helm", limit=5, now=NOW, layer="details")
    first, second = res.hits[:2]
    assert (first.id, second.id) == ("staging-deploy-needs-the-vpn", "episode:2026-11-20")
    assert second.score > first.score  # the log holds more of the words; the memory still comes first


def test_episode_sections_an_accepted_memory_quotes_weigh_less(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = _store(root)
    query = "staging deploy timed out connect vpn"
    before = _episode(recall(m.store, query, limit=5, now=NOW, layer="details")).score
    _accept(root, ["2026-11-20T10:00:05Z"])  # reflection turned the deploy section into the memory
    after = _episode(recall(m.store, query, limit=5, now=NOW, layer="details")).score
    assert after == pytest.approx(before * 0.5, abs=1e-3)
    # the other section of the same day is not digested: a question about it weighs as before
    lunch = recall(m.store, "canteen closes fridays", limit=5, now=NOW, layer="details")
    assert _episode(lunch).score > 0.5
    # the log itself is unchanged, and the digested turns are cached until the archive changes
    assert (root / "memory" / "episodes" / "2026-11-20.md").read_text(encoding="utf-8") == EPISODE
    assert (root / ".memcli" / "search" / "digested.json").exists()


def test_a_rejected_or_pending_proposal_digests_nothing(root):
    from memcli.store import inbox
    from memcli.store.quoted_turns import digested

    m = _store(root)
    quotes = [inbox.Quote("assistant", "2026-11-20T10:00:05Z", "memory/episodes/2026-11-20.md", "vpn")]
    p = inbox.make("new", "A rejected lesson", evidence=quotes).replace(status="rejected", decided=NOW)
    folder = inbox.folder(root, archived=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{p.id}.md").write_text(inbox.render(p), encoding="utf-8")
    assert digested(m.store) == {}
    _accept(root, ["2026-11-20T10:00:05Z"])
    assert digested(m.store) == {"memory/episodes/2026-11-20.md": frozenset({"2026-11-20T10:00:05Z"})}
