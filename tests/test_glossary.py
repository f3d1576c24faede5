"""The Chinese-English glossary: what it finds in a query, how the ranker uses it (both ways, after
the memory's own words and aliases), that an English store is left as it was, and that it is data
loaded only when a query needs it."""

import subprocess
import sys

import pytest

from memcli import Memory
from memcli.recall import recall
from memcli.search import glossary
from memcli.search.query import GLOSSARY_MATCH, plan_query
from memcli.search.ranker import MemoryIndex, SearchDoc
from memcli.search.tokenize import terms

NOW = "2026-12-01T00:00:00Z"

SMALL = """
# a comment line
回滚, 回退 = rollback, roll back
生产环境, 生产 = production, prod
表 = table
主从延迟 = replication lag
主从 = replication
"""


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)  # the words' own answer
    return Memory(root)


def ids(res):
    return [h.id for h in res.hits]


def test_the_tables_read_both_sides_of_a_line():
    t = glossary.parse(SMALL)
    assert t.zh.terms["回退"] == ("rollback", "roll back") and list(t.en.terms["roll back"]) == ["回滚", "回退"]
    assert t.zh.longest == 4 and "回" in t.zh.chars
    assert t.en.starts["rol"] == ["rollback", "roll back"]


def test_chinese_terms_take_the_longest_at_each_place_and_a_lone_character_only_alone():
    t = glossary.parse(SMALL)
    assert glossary.chinese_terms("生产环境怎么回滚", t) == ["生产环境", "回滚"]
    assert glossary.chinese_terms("主从延迟多少秒", t) == ["主从延迟"]  # not also 主从 at the same place
    assert glossary.chinese_terms("订单的表", t) == ["表"]  # 表 stands alone after a particle
    assert glossary.chinese_terms("报表导出很慢", t) == []  # 表 inside 报表 is another word
    assert glossary.chinese_terms("all ascii", t) == []


def test_english_phrases_are_read_from_stemmed_words_longest_first():
    t = glossary.parse(SMALL)
    assert glossary.english_phrases(terms("we rolled back the prod deploy"), t) == ["roll back", "prod"]
    assert glossary.english_phrases(terms("replication lag on the replica"), t) == ["replication lag"]
    assert glossary.english_phrases(terms("nothing here"), t) == []


def test_a_chinese_question_finds_an_english_note_and_the_reverse(mem):
    mem.remember(
        "Rolling back a bad production release",
        "helm rollback to the previous revision, then read the logs",
        tags=["deploy"],
    )
    mem.remember("生产发布检查清单", "周二和周四下午发布；周五不发布", tags=["发布"])
    assert ids(recall(mem.store, "生产环境怎么回滚", now=NOW))[:1] == ["rolling-back-a-bad-production-release"]
    assert ids(recall(mem.store, "can we deploy on friday", now=NOW))[:1] == ["生产发布检查清单"]
    hit = recall(mem.store, "生产环境怎么回滚", now=NOW).hits[0]
    assert "rollback" in hit.matched  # the hit says which word of the note the bridge found


def test_the_notes_own_words_and_aliases_rank_before_the_glossary(mem):
    mem.remember("Undo procedure", "how we undo a deploy", aliases=["回滚"])
    mem.remember("Rollback procedure", "how we undo a deploy")
    res = recall(mem.store, "回滚", limit=5, now=NOW)
    assert ids(res)[:2] == ["undo-procedure", "rollback-procedure"]
    assert res.hits[0].score > res.hits[1].score
    assert 0 < GLOSSARY_MATCH < 1


def test_an_english_store_is_ranked_as_without_the_glossary(monkeypatch):
    docs = [SearchDoc("a", "Roll back the release", "helm rollback"), SearchDoc("b", "Weekly meeting", "on Monday")]
    index = MemoryIndex(docs)
    plan = plan_query("how do I roll back a release", index, len(docs))
    assert plan.bridged == []  # no Chinese word of the glossary is held: nothing is added
    with_glossary = index.search("how do I roll back a release", threshold=0)
    monkeypatch.setattr(glossary, "tables", lambda: glossary.parse(""))
    assert index.search("how do I roll back a release", threshold=0) == with_glossary


def test_the_glossary_is_loaded_only_by_a_query():
    code = (
        "import sys; import memcli.search.ranker, memcli.search.query; print('memcli.search.glossary' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent),
    )
    assert out.stdout.strip() == "False", out.stderr


def test_every_line_of_the_data_has_both_sides():
    for line in "".join(glossary.data()).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            left, sep, right = line.partition(" = ")
            assert sep and left.strip() and right.strip(), line
            assert all(w.strip() for w in left.split(",")) and all(w.strip() for w in right.split(",")), line


def test_recall_bridges_with_the_concepts_and_reflection_names_the_everyday_words_too():
    """One glossary, two users: recall's bridge leaves the everyday words out (检查 / check would
    bridge almost any question); an alias in the other language names them."""
    t, n = glossary.tables(), glossary.names()
    assert "校验" not in t.zh.terms and "校验" in n.zh.terms
    assert glossary.chinese_for("the nightly export job fails with CERTIFICATE_VERIFY_FAILED") == [
        "晚上",
        "导出",
        "任务",
        "失败",
        "证书",
        "校验",
    ]
    assert glossary.english_for("导出任务报证书校验失败怎么解决") == [
        "export",
        "task",
        "certificate",
        "check",
        "fail",
        "fix",
    ]
    assert glossary.english_for("all ascii") == [] and glossary.chinese_for("nothing here") == []
