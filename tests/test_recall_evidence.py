"""Evidence, not echoes: framing dropped, questions weigh less than statements, the question being
asked never answers itself, one common word or another product's note is listed as no more than a
weak candidate and never injected, several phrasings fused, and what the agent is told about each
hit."""

import json

import pytest

from memcli import Memory
from memcli.recall import recall
from memcli.search.evidence import asking_share, names, only_asks, strip_framing
from memcli.search.ranker import MemoryIndex, SearchDoc

NOW = "2026-12-01T00:00:00Z"


def remember(mem, title, summary, body="", tags=()):
    return mem.remember(title, summary, tags=list(tags), body=body).id


@pytest.fixture
def mem(root):
    return Memory(root)


@pytest.fixture
def lexical(monkeypatch):
    """The semantic extra's layer off: these rules are the words' own."""
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)


def ids(res):
    return [h.id for h in res.hits]


def test_framing_is_dropped_in_both_languages():
    assert strip_framing("上次那个磁盘满的问题是怎么解决的？").strip(" ？") == "磁盘满"
    assert strip_framing("上次 MySQL 字符集的问题怎么解决的？").strip(" ？") == "MySQL 字符集"
    assert strip_framing("How did we fix the disk full problem last time?").strip(" ?") == "the disk full"
    assert strip_framing("Use the second title instead", ["instead"]) == "Use the second title"
    assert strip_framing("please continue", ["continue"]) == "please continue"  # nothing else: kept whole


def test_a_framed_chinese_question_finds_its_memory(lexical, mem):
    remember(mem, "磁盘被日志写满", "debug 日志没有轮转，/var 100%；加 logrotate 按天切割", tags=["磁盘"])
    assert ids(recall(mem.store, "磁盘满了怎么办", now=NOW)) == ["磁盘被日志写满"]
    assert ids(recall(mem.store, "上次那个磁盘满的问题是怎么解决的？", now=NOW)) == ["磁盘被日志写满"]


def test_questions_are_recognised_in_both_languages():
    assert only_asks("How often do you take them for walks?")
    assert only_asks("That's great! How often do you take them for walks?")
    assert only_asks("Is there a guest wifi password for the Berlin office")
    assert only_asks("服务器磁盘满了怎么办") and only_asks("你们用的是哪个版本？")
    assert asking_share("I take them out three times a day.") == 0
    assert asking_share("磁盘被日志写满，加了 logrotate。") == 0
    assert 0 < asking_share("I walk them three times a day. Do you have pets?") < 1


def test_a_text_that_asks_ranks_below_the_statement_that_answers():
    docs = [
        SearchDoc("ask", title="Caroline: How often do you take the dogs for walks?"),
        SearchDoc("say", title="Andrew: I walk the dogs in the park, multiple times a day."),
    ]
    hits = MemoryIndex(docs).search("how often does Andrew take the dogs for walks", threshold=0)
    assert [h.key for h in hits][0] == "say"


def test_one_common_word_is_no_answer(lexical, mem):
    remember(mem, "Code review rule", "every change gets one review; the code owner merges")
    remember(mem, "Code freeze", "no merges after the 15th; code owners may override")
    listed = recall(mem.store, "promo code", now=NOW)
    assert listed.hits and all(h.sure == "weak" for h in listed.hits)
    assert ids(recall(mem.store, "promo code", now=NOW, policy="strict")) == []
    answered = recall(mem.store, "code review", now=NOW)
    assert ids(answered)[:1] == ["code-review-rule"] and answered.hits[0].sure != "weak"


def test_backup_is_not_a_typo_of_back(lexical, mem):
    remember(mem, "Deploy to staging", "make release, then ./deploy.sh staging; roll back with ./deploy.sh rollback")
    res = recall(mem.store, "backup before migration", now=NOW)
    assert ids(res) == []


def test_a_word_is_no_typo_of_a_stem_one_letter_shorter(lexical, mem):
    remember(mem, "Cache stampede", "all keys expired together; add jitter to the TTL", tags=["redis", "cache"])
    remember(mem, "Inventory topic lag", "one hot partition key; raised partitions to 24", tags=["kafka", "lag"])
    assert ids(recall(mem.store, "catch", now=NOW)) == []  # the stem of cache is cach
    assert ids(recall(mem.store, "kafka lagg", now=NOW))[:1] == ["inventory-topic-lag"]  # a doubled letter is a typo
    assert ids(recall(mem.store, "redis cahce jitter", now=NOW))[:1] == ["cache-stampede"]
    remember(mem, "Goroutine leak", "HTTP calls without a timeout piled up", tags=["go"])
    assert ids(recall(mem.store, "goroutien leak", now=NOW))[:1] == ["goroutine-leak"]  # the stem is goroutin
    remember(mem, "Trip to Rome", "Jon visited Rome in May and loved the food", tags=["jon", "travel"])
    assert ids(recall(mem.store, "Which city did John visit?", now=NOW))[:1] == ["trip-to-rome"]  # a name's spelling


def test_another_product_is_not_the_answer_but_a_translation_is(lexical, mem):
    remember(
        mem,
        "Pods OOMKilled: the JVM ignored the container limit",
        "set -XX:MaxRAMPercentage=75 and request = limit for memory",
        tags=["kubernetes", "jvm", "memory"],
    )
    remember(mem, "Postgres: too many connections", "put PgBouncer in transaction mode in front", tags=["postgres"])
    assert names("训练模型时 CUDA out of memory 怎么办") == ["cuda"]
    assert names("laptop ran out of RAM") == []  # a kind of thing, not a product
    cuda = recall(mem.store, "CUDA out of memory during training", now=NOW)
    assert all(h.sure == "weak" for h in cuda.hits)
    assert ids(recall(mem.store, "CUDA out of memory during training", now=NOW, policy="strict")) == []
    assert ids(recall(mem.store, "JVM out of memory in a pod", now=NOW))[:1] == [
        "pods-oomkilled-the-jvm-ignored-the-container-limit"
    ]
    assert ids(recall(mem.store, "Postgres 连接数不够了 too many connections", now=NOW))[:1] == [
        "postgres-too-many-connections"
    ]


def test_a_chinese_product_name_is_a_name_in_either_script(lexical, mem):
    remember(
        mem,
        "企业微信机器人发消息被限流",
        "群机器人 webhook 每分钟最多 20 条，告警先聚合再发",
        tags=["企业微信", "告警"],
    )
    remember(mem, "Feishu approvals for expenses", "submit expense claims in Feishu before the 25th", tags=["admin"])
    assert names("钉钉机器人每分钟能发多少条消息") == ["钉钉"]
    assert names("how many messages can a dingtalk bot send") == ["dingtalk"]
    other = recall(mem.store, "钉钉机器人 webhook 每分钟能发多少条", now=NOW).hits[0]  # another product
    named = recall(mem.store, "企业微信机器人 webhook 每分钟能发多少条", now=NOW).hits[0]
    assert other.id == named.id == "企业微信机器人发消息被限流" and other.score < named.score
    # the same product written in the other script answers
    assert ids(recall(mem.store, "WeCom webhook 每分钟能发多少条", now=NOW))[:1] == ["企业微信机器人发消息被限流"]
    assert ids(recall(mem.store, "飞书 expense claims", now=NOW))[:1] == ["feishu-approvals-for-expenses"]


def test_an_earlier_question_of_the_user_is_never_recalled(lexical, mem):
    s = mem.session("chat")
    s.add("user", "Is there a guest wifi password for the Berlin office?", now=NOW)
    s.add("assistant", "I don't know.", now=NOW)
    s.add("user", "the Berlin office guest wifi password is on the front desk board", now=NOW)
    s.add("user", "Is there a guest wifi password for the Berlin office?", now=NOW)
    res = recall(mem.store, "Is there a guest wifi password for the Berlin office?", session="chat", now=NOW)
    assert res.hits and all(h.title != "user turn 1" and h.title != "user turn 4" for h in res.hits)
    assert res.hits[0].title == "user turn 3"  # a statement of the user still is evidence


def test_questions_in_the_episode_log_are_not_searched(mem):
    s = mem.session("chat")
    for i in range(7):  # rounds beyond session.max_rounds are folded into the episode log
        s.add("user", f"what is the zanzibar relay port number {i}?", now=NOW)
        s.add("assistant", "I don't know.", now=NOW)
    assert list((mem.root / "memory" / "episodes").glob("*.md"))
    res = recall(mem.store, "zanzibar relay port", layer="details", now=NOW)
    assert [h for h in res.hits if h.id.startswith("episode:")] == []


def test_a_weak_companion_is_listed_as_weak_and_never_injected(lexical, mem):
    remember(
        mem,
        "Postgres connection pool exhausted",
        "pool_size 10 + max_overflow 20; pgbouncer in front",
        tags=["postgres", "pool"],
    )
    remember(mem, "MySQL charset", "set utf8mb4 on the connection", tags=["mysql"])
    plain = recall(mem.store, "postgres connection pool exhausted", now=NOW)
    assert ids(plain) == ["postgres-connection-pool-exhausted", "mysql-charset"]
    assert [h.sure for h in plain.hits] == ["strong", "weak"]
    strict = recall(mem.store, "postgres connection pool exhausted", now=NOW, policy="strict")
    assert ids(strict) == ["postgres-connection-pool-exhausted"]


def test_a_crowd_of_equal_hits_is_sure_of_none(lexical, mem):
    for i in range(5):
        remember(mem, f"Backup note {i}", f"backup before the migration of shard {i}")
    res = recall(mem.store, "backup migration", now=NOW)
    assert len(res.hits) == 5 and all(h.sure == "weak" for h in res.hits)  # none stands out
    assert ids(recall(mem.store, "backup migration", now=NOW, policy="strict")) == []
    assert ids(recall(mem.store, "backup migration shard 3", now=NOW, policy="strict")) == ["backup-note-3"]


def test_phrasings_are_fused_by_rank(lexical, mem, cli):
    remember(
        mem,
        "MySQL charset double encoding",
        "set utf8mb4 on the connection",
        tags=["mysql", "charset"],
        body="Chinese product names came back as garbled text: the connection charset was latin1.",
    )
    # words neither the note nor the glossary bridges: only the other phrasing finds it
    assert ids(recall(mem.store, "汉字变成怪异字符", now=NOW)) == []
    res = recall(mem.store, "汉字变成怪异字符", also=["database Chinese text garbled charset"], now=NOW)
    assert ids(res) == ["mysql-charset-double-encoding"] and res.also == ["database Chinese text garbled charset"]
    out = cli.json("recall", "汉字变成怪异字符", "--also", "garbled Chinese text, charset")
    assert [h["id"] for h in out["data"]["hits"]] == ["mysql-charset-double-encoding"]
    typer = cli.json("recall", "汉字变成怪异字符", "--also", "garbled Chinese text, charset", "--deep")
    assert [h["id"] for h in typer["data"]["hits"]] == ["mysql-charset-double-encoding"]
    assert cli("recall", "x", "--also", " ").exit_code == 2


def test_each_hit_says_how_it_was_found_and_how_sure(lexical, mem, cli):
    remember(mem, "MySQL charset double encoding", "set utf8mb4 on the connection", tags=["mysql", "charset"])
    out = cli("recall", "mysql charset").stdout
    assert "<!-- memory/mysql-charset-double-encoding.md · index · words: mysql charset · strong" in out
    ctx = mem.context("mysql charset", budget=800)["text"]
    assert "### memory/mysql-charset-double-encoding.md\n<!-- index · words: mysql charset · strong" in ctx


def test_context_does_not_show_the_question_back_and_asks_for_both_languages(mem):
    remember(mem, "MySQL charset double encoding", "set utf8mb4 on the connection", tags=["mysql"])
    remember(mem, "日志统一用 UTC 时间", "所有服务日志都存 UTC", tags=["日志"])
    mem.session("s").add("user", "Is there a guest wifi password?", now=NOW)
    text = mem.context("Is there a guest wifi password?", session="s", budget=2000)["text"]
    assert "guest wifi" not in text
    assert "--also" in text and "queries=" in text


def test_same_title_or_a_summary_inside_another_is_a_duplicate(example_root, cli):
    cli.root = example_root
    res = cli.json("remember", "Deploy to staging", "make release, then ./deploy.sh staging")
    assert any("nearly duplicates staging-deploy" in w for w in res["warnings"])
    res = cli.json("remember", "部署到测试环境", "先 make release，再执行 ./deploy.sh staging，迁移先跑")
    res = cli.json("remember", "测试环境怎么部署", "先 make release，再执行 ./deploy.sh staging")
    assert any("nearly duplicates 部署到测试环境" in w for w in res["warnings"])
    audit = cli.json("heartbeat")
    dups = [f["message"] for f in audit["data"]["findings"] if f["code"] == "duplicate"]
    assert any("deploy-to-staging" in m and "the same title" in m for m in dups)
    res = cli.json("remember", "Release checklist", "make release")  # too short to count as contained
    assert not any("nearly duplicates" in w for w in res["warnings"])


def test_the_mcp_recall_tool_takes_other_phrasings(lexical, mem):
    pytest.importorskip("mcp")
    from memcli.mcp import INSTRUCTIONS, build

    remember(
        mem,
        "MySQL charset double encoding",
        "set utf8mb4 on the connection",
        tags=["mysql", "charset"],
        body="Chinese product names came back as garbled text: the connection charset was latin1.",
    )
    server = build(mem.root)
    tool = next(t for t in server._tool_manager.list_tools() if t.name == "recall")
    assert "queries" in tool.parameters["properties"] and "both languages" in tool.description
    assert "both languages" in INSTRUCTIONS
    res = tool.fn(query="数据库中文乱码", queries=["garbled Chinese text, charset"])
    data = res.structured_content
    assert [h["id"] for h in data["hits"]] == ["mysql-charset-double-encoding"]
    assert json.loads(json.dumps(data))["also"] == ["garbled Chinese text, charset"]


def test_fusion_leaves_out_a_weak_hit_only_another_phrasing_found():
    from memcli.model import Hit
    from memcli.recall.cascade import Recall, fuse

    def hit(i, sure):
        return Hit("details", i, i, f"memory/{i}.md", 0.5, sure=sure)

    original = Recall("q", [hit("a", "weak")])
    translated = Recall("t", [hit("b", "weak"), hit("a", "good"), hit("c", "good")])
    other = Recall("p", [hit("d", "weak")])
    assert [h.id for h in fuse([original, translated, other], 5)] == ["a", "c"]
    assert [h.id for h in fuse([original, translated, Recall("p", [hit("b", "weak")])], 5)] == ["b", "a", "c"]


def test_a_lexical_recall_imports_no_numpy(example_root):
    from tests.conftest import loaded_modules, run_memcli

    for query in ("charset", "alembic migrations before the deploy"):  # the index, then the details layer
        run_memcli("--root", example_root, "recall", query)
        mods = loaded_modules("--root", example_root, "recall", query)[1]
        assert "numpy" not in mods and "memcli.search.providers.http" not in mods, query
