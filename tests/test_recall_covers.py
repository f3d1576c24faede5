"""A question asked for its answer gets one only from a memory that holds what it asks about, not
only its topic (``ranker.covers_ask``, ``recall.layer.wants_answer``), under both policies; a list
asked for with -k is ranked as before. Through the library, the real CLI and `context`."""

import pytest

from memcli import Memory
from memcli.search.evidence import answer_kinds, names
from tests.conftest import run_memcli

NOW = "2026-12-01T00:00:00Z"

# in the area of a note, asking what no note says: renaming, partitioning, backing up, a phone
# number, a product no memory names beside a note on one word of the rest, fewer partitions
NEAR = [
    "how do I rename a Kafka topic",
    "how do I partition a Postgres table by month",
    "how do we back up the Redis data",
    "what's Sarah's phone number",
    "Jenkins 里怎么发版",
    "Kafka 分区数能减少吗",
    "docker compose 怎么配健康检查",
]
# the same notes, asked what they hold
ANSWERED = [
    ("how many partitions does the Kafka inventory topic have", "kafka-consumer-lag-on-the-inventory-topic"),
    ("how long does the orders topic keep events in Kafka", "kafka-topic-retention"),
    ("Postgres autovacuum fell behind", "postgres-table-bloat"),
    ("Redis token bucket for 429s", "llm-api-429s-back-off-with-jitter"),
    ("周五可以发版吗", "生产发版检查清单"),
    ("who is on call after Sarah", "on-call-rotation"),
    ("Which city did Jon visit?", "trip-to-rome"),  # the kind asked for (city) is not in the note
    ("Vault 的权限找谁开", "database-credentials-live-in-vault"),  # 找谁: a bigram of the question
    ("Tom 周五上班吗", "tom-works-from-berlin"),  # 上班: work, through the glossary
    ("我的家用 NAS 备份到哪里", "home-nas-backup"),
]  # 家用: home


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)  # the words alone
    m = Memory(root)
    for title, summary, tags in [
        (
            "Kafka consumer lag on the inventory topic",
            "one hot partition key; raised the partitions from 6 to 24 and keyed by warehouse and sku",
            ["kafka", "lag"],
        ),
        ("Kafka topic retention", "the orders topic keeps events 7 days, the audit topic 90 days", ["kafka"]),
        (
            "Postgres table bloat",
            "autovacuum fell behind on the events table; lowered the scale factor and ran pg_repack at night",
            ["postgres"],
        ),
        (
            "LLM API 429s: back off with jitter",
            "honour Retry-After; one token bucket in Redis shared by every worker",
            ["llm", "redis"],
        ),
        ("生产发版检查清单", "周二和周四下午发版；周五不发版；发版前确认迁移能回滚", ["发布"]),
        ("On-call rotation", "one week each, handover Monday 10:00; order: Li Ming, Sarah, Wang Fang", ["oncall"]),
        ("Trip to Rome", "Jon visited Rome in May and loved the food", ["jon", "travel"]),
        (
            "Database credentials live in Vault",
            "read them with vault kv get; ask Li Na for read access to the app path",
            ["vault"],
        ),
        ("Tom works from Berlin", "Tom works Monday to Thursday; overlap with Beijing 15:00-18:00", ["tom"]),
        ("Home NAS backup", "the Synology at home backs up photos nightly to Backblaze B2", ["nas"]),
        ("Docker image size", "multi-stage build and a slim base image", ["docker"]),
        (
            "Readiness probe too early",
            "the probe checked the port only; now /healthz/ready checks dependencies",
            ["kubernetes"],
        ),
    ]:
        m.remember(title, summary, tags=tags)
    return m


def ids(res):
    return [h.id for h in res.hits]


@pytest.mark.parametrize("question", NEAR)
def test_a_question_on_the_topic_of_a_note_that_does_not_answer_it_gets_nothing(mem, question):
    for strict in (False, True):
        assert ids(mem.recall(question, now=NOW, strict=strict)) == [], (question, strict)


def test_a_list_asked_for_is_ranked_as_before(mem):
    # -k asks for the best k: the notes on the question's topic, as weak or good candidates
    listed = mem.recall("how do I rename a Kafka topic", limit=5, now=NOW)
    assert set(ids(listed)[:2]) == {"kafka-topic-retention", "kafka-consumer-lag-on-the-inventory-topic"}
    assert ids(mem.recall("how do I partition a Postgres table by month", limit=5, now=NOW))[:1] == [
        "postgres-table-bloat"
    ]


@pytest.mark.parametrize("question,expect", ANSWERED)
def test_a_question_on_what_a_note_holds_is_answered(mem, question, expect):
    for strict in (False, True):
        assert ids(mem.recall(question, now=NOW, strict=strict))[:1] == [expect], (question, strict)


def test_the_ranker_says_which_candidates_cover_the_question(mem):
    from memcli.search.ranker import MemoryIndex
    from memcli.search.docs import detail_doc, detail_files

    index = MemoryIndex([d for d in (detail_doc(mem.store.path, k) for k in detail_files(mem.store)) if d])
    found = {s.key.split("/")[-1][:-3]: s for s in index.search("how do I rename a Kafka topic", threshold=0, limit=5)}
    # both Kafka notes are evidence on the topic; neither says anything about renaming
    assert found["kafka-topic-retention"].evidence and not found["kafka-topic-retention"].covers
    assert not found["kafka-consumer-lag-on-the-inventory-topic"].covers
    found = {
        s.key.split("/")[-1][:-3]: s
        for s in index.search("how many partitions does the Kafka topic have", threshold=0, limit=5)
    }
    assert found["kafka-consumer-lag-on-the-inventory-topic"].covers


def test_names_and_the_kind_of_answer_asked_for():
    # a Latin word opening a Chinese question names its product, lower case or not
    assert names("docker compose 怎么配健康检查") == ["docker", "compose"]
    assert names("Redis 的 key 怎么加随机过期时间") == ["redis"]  # a word after the Chinese is not one
    assert answer_kinds("Which city did John visit?", ["john"]) == ["city"]
    assert answer_kinds("which Node version should I install", ["node"]) == ["version"]
    assert answer_kinds("what kind of database do we use") == ["databas"]
    assert answer_kinds("what is the release schedule of the mobile app") == []  # asks about what follows
    assert answer_kinds("Tom 用什么编辑器", ["tom"]) == ["编辑"]
    assert answer_kinds("去哪个城市出差") == ["城市"]


def test_the_cli_and_context_abstain_and_k_lists(mem, root):
    near = run_memcli("--root", root, "recall", "how do I rename a Kafka topic")
    assert near.returncode == 1 and near.stdout.strip() == "", near.stdout
    listed = run_memcli("--root", root, "recall", "-k", "5", "--json", "how do I rename a Kafka topic")
    assert listed.returncode == 0 and "kafka-topic-retention" in listed.stdout
    answered = run_memcli("--root", root, "recall", "--json", "how many partitions does the Kafka inventory topic have")
    assert answered.returncode == 0 and "kafka-consumer-lag-on-the-inventory-topic" in answered.stdout
    # memory put into a prompt unasked: nothing on renaming a topic, the note on partitions for partitions
    block = mem.context("how do I rename a Kafka topic", now=NOW)["text"]
    assert "Recalled memories" not in block
    block = mem.context("how many partitions does the Kafka inventory topic have", now=NOW)["text"]
    assert "kafka-consumer-lag-on-the-inventory-topic" in block.split("## Memory index")[0]


def test_a_meaning_match_on_the_topic_only_is_no_answer(mem, monkeypatch):
    from memcli.search import embed, semantic

    monkeypatch.setattr(embed, "available", lambda: True)
    # the embedding stands out for a Kafka note (a fake step: what the layer makes of it is tested)
    monkeypatch.setattr(semantic, "search", lambda *a, **kw: [("memory/kafka-topic-retention.md", 0.9, ("embedding",))])
    for strict in (False, True):
        assert ids(mem.recall("how do I rename a Kafka topic", now=NOW, strict=strict)) == []
    # a meaning match the words do not meet at all still answers: a paraphrase in other words
    monkeypatch.setattr(semantic, "search", lambda *a, **kw: [("memory/trip-to-rome.md", 0.9, ("embedding",))])
    assert ids(mem.recall("where did he go on holiday in spring", now=NOW)) == ["trip-to-rome"]
