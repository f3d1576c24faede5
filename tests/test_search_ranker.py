import math
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.search.ranker import (
    PRIOR_SHARE,
    MemoryIndex,
    Scored,
    SearchDoc,
    freshness,
    importance_value,
    length_code,
    updated_days,
    CODE_LENGTH,
)
from tests.conftest import examples

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)

MYSQL = SearchDoc(
    key="mysql-charset",
    title="MySQL charset double encoding",
    summary="set utf8mb4 on the connection, not only the table",
    tags=("mysql", "charset"),
    aliases=("中文乱码", "Chinese text not found"),
    body="Rows written by the import job came back garbled. Set the charset in the DSN.",
    importance=0.8,
    updated="2026-11-29T10:00:00Z",
)
TOKEN = SearchDoc(
    key="token-explosion",
    title="token爆炸：长对话上下文超限",
    summary="工具输出原样塞进上下文导致 token 用量暴涨",
    tags=("token", "context"),
    body="把 kubectl logs 的完整输出放进对话，第三轮就超过了上下文上限。",
    importance=0.7,
    updated="2026-11-25T18:00:00Z",
)
JWT = SearchDoc(
    key="jwt-clock-skew",
    title="JWT validation fails because of clock skew",
    summary="tokens rejected as not yet valid on one host",
    tags=("jwt", "auth"),
    aliases=("token not yet valid",),
    body="Validate with leeway=60 and re-enable chrony.",
    updated="2026-08-26T10:00:00Z",
)
MYSQL_INDEX = SearchDoc(
    key="mysql-slow-query",
    title="MySQL slow query from a missing index",
    summary="add a composite index on (user_id, created_at)",
    tags=("mysql", "performance"),
    body="EXPLAIN showed a full table scan on orders.",
    updated="2026-10-01T10:00:00Z",
)
MYSQL_BACKUP = SearchDoc(
    key="mysql-backup",
    title="MySQL nightly backup with mysqldump",
    summary="dump at 02:00, keep seven days",
    tags=("mysql", "backup"),
    body="Use --single-transaction so InnoDB tables are not locked.",
    updated="2026-09-01T10:00:00Z",
)
DEPLOY = SearchDoc(
    key="deploy-steps",
    title="Production deploy steps",
    summary="migrate, rolling restart, watch dashboards; deploy.sh rollback to undo",
    tags=("deploy",),
    body="Run ./deploy.sh rollback when the error rate passes 1%.",
    updated="2026-11-20T10:00:00Z",
)
DOCS = [MYSQL, TOKEN, JWT, MYSQL_INDEX, MYSQL_BACKUP, DEPLOY]


@pytest.fixture(scope="module")
def index():
    return MemoryIndex(DOCS)


def keys(hits):
    return [h.key for h in hits]


def test_exact_keyword_finds_the_memory(index):
    assert keys(index.search("charset", now=NOW))[0] == "mysql-charset"


def test_chinese_query_reaches_an_english_memory_through_its_alias(index):
    assert keys(index.search("MySQL中文查不到数据", now=NOW))[0] == "mysql-charset"


def test_typo_is_corrected_against_the_vocabulary(index):
    hits = index.search("chrset", now=NOW)
    assert keys(hits)[0] == "mysql-charset"
    assert ("chrset", "charset") in hits[0].fuzzy
    assert keys(index.search("mysq charset", now=NOW))[0] == "mysql-charset"


def test_mixed_script_query(index):
    hits = index.search("token爆炸", now=NOW)
    assert keys(hits)[0] == "token-explosion"
    assert {"token", "爆炸"} <= set(hits[0].matched)


def test_unrelated_chinese_query_finds_nothing(index):
    assert index.search("量子计算", now=NOW) == []


def test_a_near_domain_query_is_ranked_and_says_what_it_misses(index):
    # the ranker decides nothing: it lists what shares an informative term and says what it saw
    hits = index.search("Redis cache eviction policy", now=NOW)
    assert hits == [] or all(h.signal("cover") < 0.5 for h in hits)
    near = index.search("slow query from a missing index in Postgres", now=NOW)
    assert keys(near)[0] == "mysql-slow-query" and near[0].signal("names") == 1.0  # Postgres is not named
    assert index.search("MySQL slow query from a missing index", now=NOW)[0].signal("names") == 0.0
    # a common word alone reaches nothing; beside an informative one it counts
    assert index.search("the wrong issue", now=NOW) == []


def test_signals_say_where_a_hit_matched(index):
    head = index.search("deploy rollback", now=NOW)[0]
    assert head.key == "deploy-steps" and head.signal("head") == 1.0 and head.signal("cover") > 0.9
    body = index.search("full table scan", now=NOW)[0]
    assert body.key == "mysql-slow-query" and body.signal("head") == 0.0
    # one informative word of the query while a weightier one is missed
    single = index.search("deploy quantum", now=NOW)[0]
    assert single.signal("single") == 1.0 and index.search("deploy", now=NOW)[0].signal("single") == 0.0
    # a query of several lines: the last one is the prompt, the lines before it weigh less
    last = index.search("the mysql charset thing\nhow do we deploy a rollback", now=NOW)
    assert keys(last)[0] == "deploy-steps" and last[0].signal("stale") == 0.0
    assert next(h for h in last if h.key == "mysql-charset").signal("stale") == 1.0


def test_adjacent_words_meet_a_compound(index):
    assert keys(index.search("roll back a release", now=NOW))[:1] == ["deploy-steps"]


def test_abstains_on_stopwords_and_punctuation(index):
    assert index.search("the of and", now=NOW) == []
    assert index.search("？！…", now=NOW) == []
    assert index.search("", now=NOW) == []


def test_results_are_bounded_sorted_and_capped(index):
    hits = index.search("mysql", limit=2, now=NOW)
    assert len(hits) == 2
    assert all(isinstance(h, Scored) for h in hits)
    assert hits[0].score >= hits[1].score
    assert all(0.0 <= h.score <= 1.0 and 0.0 <= h.relevance <= 1.0 for h in hits)
    assert index.search("mysql", limit=0, now=NOW) == []


def test_threshold_controls_abstention(index):
    assert index.search("mysql replication lag", threshold=1.0, now=NOW) == []
    assert index.search("mysql replication lag", threshold=0.0, now=NOW) != []


def test_abstention_decides_on_the_best_hit_and_keeps_weaker_candidates():
    docs = [
        SearchDoc(key="best", title="kafka consumer lag alert", summary="raise fetch.max.bytes"),
        SearchDoc(key="second", title="consumer group notes", body="lag was high once"),
        SearchDoc(key="other", title="nginx upstream timeout"),
    ]
    index = MemoryIndex(docs)
    hits = index.search("kafka consumer lag alert", now=NOW)
    assert keys(hits)[:2] == ["best", "second"] and hits[1].relevance < hits[0].relevance / 2
    # Nothing distinctive matched: no answer at all, however many candidates were asked for.
    assert index.search("upstream consumer", limit=5, threshold=0.9, now=NOW) == []
    # threshold=0: the best k, weak ones included.
    assert len(index.search("kafka nginx", limit=3, threshold=0.0, now=NOW)) == 2


def test_title_match_beats_body_match():
    docs = [
        SearchDoc(key="in-title", title="kafka consumer lag", body="notes"),
        SearchDoc(key="in-body", title="streaming notes", body="kafka consumer lag seen last week"),
    ]
    hits = MemoryIndex(docs).search("kafka consumer lag", now=NOW)
    assert keys(hits)[0] == "in-title"
    assert hits[0].relevance > hits[1].relevance


def test_importance_and_freshness_break_ties():
    old = (NOW - timedelta(days=400)).isoformat()
    new = (NOW - timedelta(days=1)).isoformat()
    docs = [
        SearchDoc(key="a-old", title="nginx upstream timeout", importance=0.5, updated=old),
        SearchDoc(key="b-new", title="nginx upstream timeout", importance=0.5, updated=new),
        SearchDoc(key="c-important", title="nginx upstream timeout", importance=1.0, updated=old),
    ]
    hits = MemoryIndex(docs).search("nginx upstream timeout", now=NOW)
    assert keys(hits) == ["b-new", "c-important", "a-old"]
    assert len({h.relevance for h in hits}) == 1


def test_now_is_injectable():
    index = MemoryIndex([SearchDoc(key="a", title="grafana alert noise", importance=1.0, updated="2026-01-01")])
    soon = index.search("grafana alert", now=datetime(2026, 1, 2, tzinfo=timezone.utc))[0]
    later = index.search("grafana alert", now=datetime(2026, 7, 1))[0]  # naive means UTC
    assert soon.relevance == later.relevance
    assert soon.score > later.score  # relevance * (1 + share * (2 * importance * freshness - 1))
    fresher = 2 * PRIOR_SHARE * (0.5 ** (1 / 90) - 0.5 ** (181 / 90))
    assert soon.score - later.score == pytest.approx(soon.relevance * fresher, abs=1e-5)


def test_freshness_halves_every_ninety_days():
    now_days = updated_days("2026-12-01T00:00:00Z")
    assert freshness(now_days, now_days) == 1.0
    assert freshness(now_days - 90, now_days) == pytest.approx(0.5)
    assert freshness(now_days + 10, now_days) == 1.0  # a future date is fresh, not fresher
    assert freshness(updated_days(None), now_days) == 0.5
    assert math.isnan(updated_days("not a date"))
    assert updated_days("2026-12-01") == updated_days("2026-12-01T00:00:00+00:00")


def test_importance_value_is_clamped_and_forgiving():
    assert importance_value(0.8) == 0.8
    assert importance_value(3) == 1.0
    assert importance_value(-1) == 0.0
    assert importance_value(None) == 0.5
    assert importance_value("high") == 0.5
    assert importance_value(float("nan")) == 0.5


def test_length_codes_are_exact_when_short_and_close_when_long():
    assert all(CODE_LENGTH[length_code(n)] == n for n in range(128))
    for n in (128, 500, 4000, 100_000):
        assert abs(CODE_LENGTH[length_code(n)] - n) / n < 0.04
    assert length_code(10**9) == 255


def test_vocabulary_and_empty_index(index):
    assert index.vocabulary["charset"] == 1
    assert index.vocabulary["mysql"] == 3
    assert "爆炸" in index.vocabulary
    empty = MemoryIndex([])
    assert len(empty) == 0 and empty.search("mysql") == []


def test_duplicate_keys_keep_the_last_document():
    index = MemoryIndex([SearchDoc(key="x", title="first version"), SearchDoc(key="x", title="second draft")])
    assert len(index) == 1
    assert keys(index.search("draft", now=NOW)) == ["x"]
    assert index.search("version", now=NOW) == []


_WORDS = ["mysql", "charset", "deploy", "rollback", "token", "爆炸", "缓存", "索引", "kafka", "nginx"]


@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4), st.text("qxzvjw", min_size=5, max_size=9))
@settings(max_examples=examples(60), deadline=None)
def test_a_query_sharing_no_term_gets_nothing(words, nonsense):
    docs = [SearchDoc(key=f"d{i}", title=w, body=" ".join(words)) for i, w in enumerate(words)]
    assert MemoryIndex(docs).search(nonsense + " " + nonsense[::-1], now=NOW) == []


def test_importing_search_loads_no_heavy_modules():
    code = (
        "import sys, memcli.search.ranker, memcli.search.cache, memcli.search.snippet;"
        "print(sorted(m for m in ('rapidfuzz', 'yaml', 'rich', 'typer') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
