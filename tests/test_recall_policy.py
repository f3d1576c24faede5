"""Two intents, one confidence: a question asked (the CLI's `recall`, MCP `recall`, the Python API)
gets the ranker's best hits whenever a memory shares an informative term with it, each labelled
with its calibrated confidence; memory put into a prompt unasked (the hook, `context`, `recall
--strict`) gets only the hits whose confidence reaches the threshold. Through the library, the
real CLI, the MCP SDK's client and the hook in a real process."""

import json

import pytest

from memcli import Memory
from memcli.recall import recall
from memcli.recall.confidence import threshold
from tests.conftest import run_memcli

NOW = "2026-12-01T00:00:00Z"
# in the area of the notes, asking what none of them says
NEAR = "how do I rename a Kafka topic"
QUESTIONS = [
    NEAR,
    "mysql charset utf8mb4",
    "how long does the orders topic keep events",
    "kafka",
    "what does the multi-stage build leave out",
    "why did the consumer lag grow",
    "字符集",
]


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)  # the words alone
    m = Memory(root)
    m.remember(
        "Keeping images small",
        "multi-stage build, a distroless base and a .dockerignore that leaves out node_modules",
        tags=["build"],
    )
    m.remember("MySQL charset double encoding", "set utf8mb4 on the connection, not only the table", tags=["mysql"])
    m.remember("Kafka topic retention", "the orders topic keeps events 7 days, the audit topic 90 days", tags=["kafka"])
    m.remember(
        "Kafka consumer lag on the inventory topic",
        "one hot partition key; raised the partitions from 6 to 24 and keyed by warehouse and sku",
        tags=["kafka", "lag"],
    )
    return m


def ids(res):
    return [h.id for h in res.hits]


def test_a_question_gets_the_best_hits_each_with_its_confidence(mem):
    asked = mem.recall(NEAR, now=NOW)
    assert asked.policy == "candidates" and asked.to_dict()["policy"] == "candidates"
    # nothing answers it, but the ranker's best are listed, each sure of itself as far as it is
    assert ids(asked)[:2] == ["kafka-topic-retention", "kafka-consumer-lag-on-the-inventory-topic"]
    assert all(h.sure == "weak" and 0 < h.score < threshold() for h in asked.hits)
    answered = mem.recall("mysql charset utf8mb4", now=NOW)
    assert ids(answered)[0] == "mysql-charset-double-encoding" and answered.hits[0].sure == "strong"
    assert answered.hits[0].score >= threshold()
    # the score is the confidence: the list is in its order
    assert [h.score for h in asked.hits] == sorted((h.score for h in asked.hits), reverse=True)


def test_nothing_only_when_nothing_informative_is_shared(mem):
    assert ids(mem.recall("what's a good sourdough recipe", now=NOW)) == []
    assert ids(mem.recall("the and of it", now=NOW)) == []  # stop words only
    mem.remember("Pod OOMKilled", "JVM 用 MaxRAMPercentage=75", tags=["k8s"])
    for q in ("用上次那个方案", "用那个"):  # 用 alone is a function character: it counts for nothing alone
        assert ids(mem.recall(q, now=NOW)) == []
    # one informative word shared is enough to be listed
    assert ids(mem.recall("sourdough starter for the audit", now=NOW))[:1] == ["kafka-topic-retention"]


def test_k_always_holds_the_first_answer_of_the_default(mem):
    for q in QUESTIONS:
        first = ids(mem.recall(q, now=NOW))[:1]
        for k in (1, 2, 3, 10):
            got = ids(mem.recall(q, limit=k, now=NOW))
            assert got[:1] == first, (q, k, got)
        assert ids(mem.recall(q, threshold=0, now=NOW))[:1] == first


def test_strict_keeps_only_what_reaches_the_threshold(mem):
    unasked = mem.recall(NEAR, now=NOW, strict=True)
    assert ids(unasked) == [] and unasked.to_dict()["policy"] == "strict"
    res = mem.recall("mysql charset utf8mb4", now=NOW, strict=True)
    assert ids(res) == ["mysql-charset-double-encoding"]
    # the threshold is the confidence a hit needs: 0 keeps every hit, 1 none
    assert len(mem.recall(NEAR, now=NOW, strict=True, threshold=0).hits) >= 2
    assert ids(mem.recall("mysql charset utf8mb4", now=NOW, strict=True, threshold=1)) == []


def test_the_cli_labels_every_hit_and_exits_1_only_for_nothing(mem, root):
    out = run_memcli("--root", root, "recall", NEAR, "--json")
    data = json.loads(out.stdout)["data"]
    assert out.returncode == 0 and data["policy"] == "candidates"
    assert data["hits"] and all(h["sure"] == "weak" for h in data["hits"])
    plain = run_memcli("--root", root, "recall", NEAR)
    assert plain.returncode == 0 and "· weak 0." in plain.stdout and "## Kafka topic retention" in plain.stdout
    assert "no sure answer" in plain.stderr and "no sure answer" not in plain.stdout
    strict = run_memcli("--root", root, "recall", "--strict", NEAR, "--json")
    assert strict.returncode == 1 and json.loads(strict.stdout)["data"]["policy"] == "strict"
    assert json.loads(strict.stdout)["data"]["hits"] == []
    nothing = run_memcli("--root", root, "recall", "what's a good sourdough recipe")
    assert nothing.returncode == 1 and nothing.stdout == ""
    # the Typer path (an option only Typer reads: --deep) agrees with the fast path
    deep = run_memcli("--root", root, "recall", NEAR, "--deep", "--json")
    assert [h["id"] for h in json.loads(deep.stdout)["data"]["hits"]] == [h["id"] for h in data["hits"]]


def test_context_and_the_hook_inject_only_what_reaches_the_gate(mem, root):
    ctx = mem.context(NEAR, budget=2000)
    assert "## Recalled memories" not in ctx["text"] and ctx["recalled"] == []
    answered = mem.context("mysql charset utf8mb4", budget=2000)
    assert answered["recalled"] == ["mysql-charset-double-encoding"]

    project = root / "src"
    project.mkdir()
    assert run_memcli("hook", "allow", root).returncode == 0

    def hook(prompt: str, session: str = "s1"):
        event = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        r = run_memcli("hook", "claude-code", input=json.dumps(event), cwd=project, env={"MEMCLI_SERVE": "off"})
        assert r.returncode == 0, r.stderr
        return r.stdout

    # "last time": the prompt asks for memory, so the block comes, without a memory under the gate
    out = hook(f"last time, {NEAR}?")
    assert out.startswith("<!-- memcli context.") and "## Recalled memories" not in out
    # a prompt that needs memory without saying so gets it when a memory reaches the gate
    out = hook("the mysql charset utf8mb4 thing is back, what did we set?")
    assert "## Recalled memories" in out and "memory/mysql-charset-double-encoding.md" in out
    assert hook("write a haiku about autumn rain") == ""


def test_mcp_recall_is_a_question_and_mcp_context_injects(mem, root):
    pytest.importorskip("mcp")
    from tests.test_mcp import data_part, served

    async def body(s):
        asked = await s.call_tool("recall", {"query": NEAR})
        ctx = await s.call_tool("context", {"query": NEAR})
        return data_part(asked.structured_content), data_part(ctx.structured_content)

    asked, ctx = served(root, body)
    assert asked["policy"] == "candidates"
    assert [h["id"] for h in asked["hits"]][:1] == ["kafka-topic-retention"]
    assert all(h["sure"] == "weak" for h in asked["hits"])
    assert ctx["recalled"] == [] and "## Recalled memories" not in ctx["text"]


# -- episodes -----------------------------------------------------------------------------------

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
    assert ids(res)[:2] == ["staging-deploy-needs-the-vpn", "episode:2026-11-20"]


def test_episode_sections_an_accepted_memory_quotes_weigh_less(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = _store(root)
    query = "staging deploy timed out connect vpn"
    before = _episode(recall(m.store, query, limit=5, now=NOW, layer="details")).score
    _accept(root, ["2026-11-20T10:00:05Z"])  # reflection turned the deploy section into the memory
    after = _episode(recall(m.store, query, limit=5, now=NOW, layer="details")).score
    assert after < before
    # the memory that says it now comes first
    assert ids(recall(m.store, query, limit=5, now=NOW, layer="details"))[0] == "staging-deploy-needs-the-vpn"
    # the other section of the same day is not digested: a question about it is answered by it
    lunch = recall(m.store, "canteen closes fridays", limit=5, now=NOW, layer="details")
    assert lunch.hits[0].id == "episode:2026-11-20" and lunch.hits[0].sure != "weak"
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
