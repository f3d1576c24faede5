"""Recall of what people and agents actually send: long prompts, pasted logs, a question in one
word of a note, the dialogue so far; what counts for nothing (function words and characters, in
both languages); sessions, where the turn holding the cause outranks the complaint that asked for
it and a turn still in the session outranks the episode it will fold into. Through the library,
the real CLI and the hook in a real process."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli import Memory
from tests.conftest import run_memcli

NOW = "2026-12-01T00:00:00Z"


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)  # the words alone
    m = Memory(root)
    for title, summary, tags in [
        ("Pod OOMKilled", "JVM 用 MaxRAMPercentage=75, request = limit", ["k8s"]),
        ("Deploy", "run deploy.sh prod after the staging check passes", ["deploy"]),
        ("发版冻结", "12 月 20 日到 1 月 3 日不发版，紧急修复找值班经理", ["release"]),
        ("订单导入乱码", "上周订单导入中文乱码：客户的 CSV 是 GBK 编码，导入前转成 UTF-8", ["charset"]),
        ("Docker 构建缓存", "依赖层放在源码层前面，COPY package.json 单独一层", ["docker"]),
        ("Celery tasks must be idempotent", "acks_late re-runs a task after a worker dies; check a key", ["celery"]),
        ("SSR memory leak", "a module-level cache keyed by the full URL never evicted; an LRU of 500", ["node"]),
        ("Redis maxclients", "redis 连接数上限 maxclients 10000，超过会拒绝连接", ["redis"]),
    ]:
        m.remember(title, summary, tags=tags)
    return m


def ids(res):
    return [h.id for h in res.hits]


def _hook(root, prompt: str, session: str = "s1") -> str:
    project = root / "src"
    project.mkdir(exist_ok=True)
    assert run_memcli("hook", "allow", root).returncode == 0
    event = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    r = run_memcli("hook", "claude-code", input=json.dumps(event), cwd=project, env={"MEMCLI_SERVE": "off"})
    assert r.returncode == 0, r.stderr
    return r.stdout


# -- what counts -----------------------------------------------------------------------------


def test_one_shared_cjk_character_is_never_injected(mem, root):
    for prompt in ("用上次那个方案", "就用这个", "用那个吧"):
        assert ids(mem.recall(prompt, now=NOW)) == []  # 用 alone is nothing informative
        assert ids(mem.recall(prompt, now=NOW, strict=True)) == []
        assert mem.context(prompt, now=NOW)["recalled"] == []
    out = _hook(root, "用上次那个方案")  # should-recall lets it through ("上次"): the block, no memory
    assert "## Recalled memories" not in out and "pod-oomkilled.md" not in out.split("## Memory index")[0]


_FUNCTION = ["the", "is", "of", "and", "it", "用", "的", "那个", "了", "是", "在", "就", "把", "吗", "这个", "一下"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_FUNCTION), min_size=1, max_size=6))
def test_function_words_and_characters_count_for_nothing_alone(words):
    from memcli.search.ranker import MemoryIndex, SearchDoc

    docs = [
        SearchDoc("oom", title="Pod OOMKilled", summary="JVM 用 MaxRAMPercentage=75 的是上限"),
        SearchDoc("it", title="It is the deploy of the day", summary="这个就是发版了吗"),
    ]
    for sep in (" ", ""):
        assert MemoryIndex(docs).search(sep.join(words), threshold=0) == []


def test_one_informative_word_shared_is_the_answer_when_it_is_the_best(mem):
    # what a bar of two shared terms threw away: the note names one word of the question
    assert ids(mem.recall("docker 构建太慢", now=NOW))[:1] == ["docker-构建缓存"]
    assert ids(mem.recall("celery 任务被执行了两次", now=NOW))[:1] == ["celery-tasks-must-be-idempotent"]


def test_the_words_typed_weigh_more_than_the_glossary_reaches(mem):
    # ship -> 发版 through the glossary, prod typed and held by the note on deploy.sh
    assert ids(mem.recall("how do I ship to prod?", now=NOW))[:1] == ["deploy"]
    assert ids(mem.recall("什么时候不能发版", now=NOW))[:1] == ["发版冻结"]


# -- long input --------------------------------------------------------------------------------

LONG = (
    "上周导入的订单里中文全是乱码。客户说文件是从他们的 ERP 导出的，用 Excel 打开也是乱的。"
    "我们之前是不是遇到过类似的问题？"
)
TRACE = """<--- Last few GCs --->
[1:0x5f3c2a0] 86400123 ms: Mark-Compact 2980.1 (3012.4) -> 2975.8 (3010.2) MB
FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
 1: 0xb7a940 node::Abort() [node /app/server/ssr.js]
this is the SSR pod again"""


def test_a_question_of_many_sentences_need_not_be_covered_whole(mem, root):
    res = mem.recall(LONG, now=NOW)
    assert ids(res)[:1] == ["订单导入乱码"]
    assert mem.context(LONG, now=NOW)["recalled"][:1] == ["订单导入乱码"]
    out = _hook(root, LONG)  # no word of should-recall's: the gate alone brings it
    assert "## Recalled memories" in out and "memory/订单导入乱码.md" in out


def test_a_pasted_stack_trace_finds_its_note(mem):
    assert ids(mem.recall(TRACE, now=NOW))[:1] == ["ssr-memory-leak"]


def test_the_hook_reads_the_turns_before_the_prompt(mem, root):
    # the prompt alone names nothing; the turn before it does
    assert mem.context("那这个怎么解决", now=NOW)["recalled"] == []
    mem.session("s2").add("user", "客户的订单导入又是中文乱码，CSV 文件", now=NOW)
    assert mem.context("那这个怎么解决", session="s2", now=NOW)["recalled"][:1] == ["订单导入乱码"]
    out = _hook(root, "那这个怎么解决", session="s2")
    assert "memory/订单导入乱码.md" in out
    # a prompt on something else after it: the earlier turn is context, no longer the subject
    for prompt in ("write a haiku about autumn rain", "how do I ship to prod?"):
        assert "订单导入乱码" not in mem.context(prompt, session="s2", now=NOW)["recalled"]


# -- sessions ----------------------------------------------------------------------------------

CAUSE = (
    "redis-cli -h cache-1 ping: Could not connect to Redis at cache-1:6379: Connection refused. "
    "redis.log: fork: Cannot allocate memory; the OOM killer stopped redis-server"
)


def test_the_turn_holding_the_cause_outranks_the_complaint(mem, root):
    s = mem.session("dbg")
    s.add("user", "redis 连不上了，服务一直报错", now=NOW)
    s.add("tool", CAUSE, now=NOW)
    question = "redis 连不上是什么原因"
    res = mem.recall(question, session="dbg", now=NOW)
    assert (res.hits[0].layer, res.hits[0].id) == ("session", "turn-2"), [(h.layer, h.id) for h in res.hits]
    assert [h.id for h in mem.recall(question, session="dbg", limit=3, now=NOW).hits][:1] == ["turn-2"]
    complaint = next(h for h in res.hits if h.id == "turn-1")
    assert complaint.score < res.hits[0].score
    # the assistant's word on it, once said, stands beside the tool's output, the complaint after both
    s.add("assistant", "原因是 cache-1 内存不足，redis-server 被 OOM killer 杀掉了，所以连接被拒绝。", now=NOW)
    cli = json.loads(run_memcli("--root", root, "--session", "dbg", "recall", question, "-k", "3", "--json").stdout)
    got = [h["id"] for h in cli["data"]["hits"]]
    assert set(got[:2]) == {"turn-2", "turn-3"} and "turn-1" not in got[:2]


def test_a_turn_still_in_the_session_outranks_the_episode_it_folds_into(mem, root):
    (root / "memcli.yaml").write_text("session:\n  max_rounds: 2\n", encoding="utf-8")
    m = Memory(root)
    s = m.session("ops")
    s.add("user", "check the kafka consumer lag on orders", now=NOW)
    s.add("tool", "kafka-consumer-groups --describe orders-svc: partition 3 lag 120443, partition 5 lag 98211", now=NOW)
    s.add("user", "and now?", now=NOW)
    s.add("tool", "partition 3 lag 0, partition 5 lag 12", now=NOW)
    s.add("user", "which one is stuck after the restart?", now=NOW)
    s.add("tool", "partition 8 is stuck at offset 883120, lag 2204311; consumer orders-svc-2 holds it", now=NOW)
    assert list((root / "memory" / "episodes").glob("*.md"))  # the first rounds folded into the log
    for limit in (None, 3):
        res = m.recall("kafka partition 8", session="ops", limit=limit, now=NOW)
        assert (res.hits[0].layer, res.hits[0].id) == ("session", "turn-4"), [(h.layer, h.id) for h in res.hits]
    deep = m.recall("kafka partition 8", session="ops", deep=True, now=NOW)
    first = [h.id for h in deep.hits]
    assert first[0] == "turn-4" and all(first.index(h) > 0 for h in first if h.startswith("episode:"))


def test_the_hook_reads_every_turn_before_the_prompt_when_the_session_holds_fewer(mem, monkeypatch):
    # asked for more turns than the session holds, it reads them all, not the last few of them
    from memcli.usecases import context

    monkeypatch.setattr(context, "TURNS", 3)
    s = mem.session("s3")
    for said in ("客户的订单导入又是中文乱码，CSV 文件", "好的"):
        s.add("user", said, now=NOW)
    assert mem.context("那这个怎么解决", session="s3", now=NOW)["recalled"][:1] == ["订单导入乱码"]
