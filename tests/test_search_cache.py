import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.search import cache as cache_module
from memcli.search import segments as segments_module
from memcli.search.cache import FILENAME, SearchCache, SearchCacheError, SyncStats
from memcli.search.ranker import MemoryIndex, SearchDoc
from tests.conftest import examples

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
EVAL = Path(__file__).resolve().parent.parent / "benchmarks" / "recall_eval"

DOCS = {
    d.key: d
    for d in [
        SearchDoc(
            key="mysql-charset",
            title="MySQL charset double encoding",
            summary="set utf8mb4 on the connection, not only the table",
            tags=("mysql", "charset"),
            aliases=("中文乱码", "Chinese text not found"),
            body="## Fix\n\nSet NAMES utf8mb4 after connecting.",
            importance=0.8,
            updated="2026-11-29T10:00:00Z",
        ),
        SearchDoc(
            key="token",
            title="token爆炸：长对话上下文超限",
            tags=("token",),
            body="先截断再摘要。",
            updated="2026-11-25",
        ),
        SearchDoc(key="deploy", title="生产环境发布流程", summary="先迁移再滚动重启", aliases=("production deploy",)),
        SearchDoc(key="kafka", title="Kafka consumer lag", body="max.poll.records=50 fixed the rebalancing."),
        SearchDoc(key="nginx", title="Nginx 502 after gunicorn timeout", tags=("nginx", "502"), importance=0.2),
    ]
}
QUERIES = [
    "charset",
    "MySQL中文查不到数据",
    "chrset",
    "token爆炸",
    "量子计算",
    "生产发布",
    "kafka lag",
    "502",
    "deploy",
]


def same(cache, docs, queries=QUERIES, **kw):
    index = MemoryIndex(docs.values())
    for q in queries:
        for threshold in (None, 0.0):
            assert cache.search(q, threshold=threshold, now=NOW, **kw) == index.search(
                q, threshold=threshold, now=NOW, **kw
            ), q


@pytest.fixture
def folder(tmp_path):
    return tmp_path / ".memcli" / "search"


def fps(docs, version="1"):
    return {k: version for k in docs}


def test_sync_then_search_equals_the_in_memory_index(folder):
    cache = SearchCache(folder, workers=0)
    assert cache.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)
    assert (folder / FILENAME).exists()
    same(cache, DOCS)
    assert [h.key for h in cache.search("charset", now=NOW)][0] == "mysql-charset"
    assert cache.search("量子计算", now=NOW) == []
    assert len(cache) == 5 and cache.keys() == fps(DOCS)


def test_eval_set_gives_identical_results(folder):
    sys.path.insert(0, str(EVAL))
    try:
        import run  # the evaluation runner's loader
    finally:
        sys.path.remove(str(EVAL))
    docs = {d.key: d for d, _ in run.load_docs(EVAL / "memory")}
    queries = [q["q"] for q in __import__("yaml").safe_load((EVAL / "queries.yaml").read_text("utf-8"))["queries"]]
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(docs), docs.get)
    same(cache, docs, queries, limit=10)


def test_sync_only_loads_what_changed(folder):
    loaded = []

    def load(key):
        loaded.append(key)
        return DOCS[key]

    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), load)
    loaded.clear()
    assert cache.sync(fps(DOCS), load) == SyncStats()
    assert loaded == []
    current = fps(DOCS)
    current["kafka"] = "2"
    del current["nginx"]
    assert cache.sync(current, load) == SyncStats(changed=1, removed=1)
    assert loaded == ["kafka"]
    remaining = {k: v for k, v in DOCS.items() if k != "nginx"}
    same(cache, remaining)


def test_changed_content_is_reindexed(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    edited = dict(DOCS)
    edited["kafka"] = SearchDoc(key="kafka", title="RabbitMQ dead letter queue")
    cache.sync({**fps(DOCS), "kafka": "2"}, edited.get)
    assert cache.search("kafka lag", now=NOW) == []
    assert [h.key for h in cache.search("dead letter queue", now=NOW)] == ["kafka"]
    same(cache, edited, QUERIES + ["dead letter queue"])


def test_unreadable_documents_are_skipped_and_retried(folder):
    cache = SearchCache(folder, workers=0)
    broken = {"nginx"}
    cache.sync(fps(DOCS), lambda k: None if k in broken else DOCS[k])
    assert "nginx" not in cache.keys()
    broken.clear()
    assert cache.sync(fps(DOCS), DOCS.get) == SyncStats(added=1)
    same(cache, DOCS)


def test_errors_from_load_reach_the_caller_unchanged(folder):
    def load(key):
        raise KeyError(key)

    with pytest.raises(KeyError):
        SearchCache(folder, workers=0).sync(fps(DOCS), load)


def test_update_docs_and_remove(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    new = SearchDoc(key="grafana", title="Grafana alert noise", tags=("grafana",))
    assert cache.update_docs([new], {"grafana": "7"}) == 1
    assert cache.keys()["grafana"] == "7"
    assert cache.remove(["nginx", "missing"]) == 1
    docs = {**{k: v for k, v in DOCS.items() if k != "nginx"}, "grafana": new}
    same(cache, docs, QUERIES + ["grafana alert"])
    # a document updated without a fingerprint is reloaded by the next sync
    cache.update_docs([SearchDoc(key="kafka", title="Kafka consumer lag, again")])
    assert cache.sync({**fps(docs), "grafana": "7"}, docs.get) == SyncStats(changed=1)
    same(cache, docs)


def test_deleting_the_folder_only_costs_a_rebuild(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    shutil.rmtree(folder)
    assert cache.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)
    same(cache, DOCS)
    shutil.rmtree(folder)
    assert SearchCache(folder).search("charset") == []  # empty, not an error


def test_a_garbage_file_is_rebuilt(folder):
    folder.mkdir(parents=True)
    (folder / FILENAME).write_bytes(b"this is not a database" * 100)
    cache = SearchCache(folder, workers=0)
    assert cache.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)
    same(cache, DOCS)


def _corrupt_pages(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page, len(data), page):  # keep the header page, wreck every other
        data[start : start + page] = b"\xff" * min(page, len(data) - start)
    path.write_bytes(bytes(data))


def test_a_corrupt_cache_is_detected_and_rebuilt(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    cache.close()
    _corrupt_pages(folder / FILENAME)
    fresh = SearchCache(folder, workers=0)
    with pytest.raises(SearchCacheError):
        fresh.search("charset", now=NOW)  # nothing to rebuild from yet: asks for a sync
    assert fresh.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)
    same(fresh, DOCS)
    fresh.close()
    _corrupt_pages(folder / FILENAME)
    again = SearchCache(folder, workers=0)
    assert again.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)  # sync notices and rebuilds
    same(again, DOCS)


def test_corruption_found_by_search_rebuilds_from_the_last_sync(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    cache.close()
    _corrupt_pages(folder / FILENAME)
    cache._conn = None
    same(cache, DOCS)


def test_a_cache_from_another_tokenizer_version_is_rebuilt(folder):
    cache = SearchCache(folder, workers=0)
    cache.sync(fps(DOCS), DOCS.get)
    cache.close()
    with sqlite3.connect(folder / FILENAME) as conn:
        conn.execute("UPDATE meta SET v = 'old' WHERE k = 'signature'")
    again = SearchCache(folder, workers=0)
    assert again.sync(fps(DOCS), DOCS.get) == SyncStats(added=5)


def test_many_small_writes_and_removals_keep_the_same_results(folder, monkeypatch):
    monkeypatch.setattr(cache_module, "MERGE_AT", 3)  # small writes merged and removals purged early
    monkeypatch.setattr(cache_module, "DEAD_MIN", 2)
    cache = SearchCache(folder, workers=0)
    docs = {}
    for i in range(12):
        doc = SearchDoc(key=f"n{i}", title=f"note {i} about kafka lag", body="consumer group rebalance " * i)
        docs[doc.key] = doc
        cache.update_docs([doc], {doc.key: "1"})
    same(cache, docs, ["kafka lag", "rebalance", "note 7"])
    cache.remove([f"n{i}" for i in range(0, 12, 2)])
    docs = {k: v for k, v in docs.items() if int(k[1:]) % 2}
    same(cache, docs, ["kafka lag", "rebalance", "note 7", "note 8"])
    assert cache.df(["8", "7", "rebalance"]) == MemoryIndex(docs.values()).df(["8", "7", "rebalance"])
    assert cache.size() == MemoryIndex(docs.values()).size()
    cache.remove(list(docs))
    assert cache.size() == (0, (0, 0, 0, 0, 0)) and cache.df(["note", "kafka"]) == {}


def test_a_large_build_in_worker_processes_matches(folder, monkeypatch):
    monkeypatch.setattr(segments_module, "PARALLEL_MIN", 40)
    monkeypatch.setattr(segments_module, "CHUNK", 15)
    words = "mysql charset kafka lag nginx timeout deploy rollback 中文 乱码 发布 流程 缓存 索引".split()
    docs = {}
    for i in range(60):
        doc = SearchDoc(
            key=f"d{i:02d}",
            title=" ".join(words[(i + j) % len(words)] for j in range(3)),
            body=" ".join(words[(i * j) % len(words)] for j in range(9)),
            importance=(i % 10) / 10,
            updated=f"2026-{i % 12 + 1:02d}-01",
        )
        docs[doc.key] = doc
    cache = SearchCache(folder, workers=2)
    assert cache.sync(fps(docs), docs.get) == SyncStats(added=60)
    same(cache, docs, ["mysql charset", "中文乱码", "deploy rollback", "缓存索引", "timeout"], limit=10)


_CHILD = """
import json, sys
from memcli.search.cache import SearchCache
from memcli.search.ranker import SearchDoc
docs = {k: SearchDoc(**v) for k, v in json.load(open(sys.argv[2])).items()}
cache = SearchCache(sys.argv[1], workers=0, timeout=30)
for round in range(5):
    cache.sync({k: str(round % 2) for k in docs}, docs.get)
    cache.search("kafka lag")
"""


def test_concurrent_processes_share_the_cache(tmp_path, folder):
    docs = {f"k{i}": {"key": f"k{i}", "title": f"kafka lag note {i}", "body": "rebalance " * i} for i in range(40)}
    source = tmp_path / "docs.json"
    source.write_text(json.dumps(docs))
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, str(folder), str(source)], stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    loaded = {k: SearchDoc(**v) for k, v in docs.items()}
    cache = SearchCache(folder, workers=0)
    cache.sync({k: "0" for k in loaded}, loaded.get)
    same(cache, loaded, ["kafka lag", "note 3", "rebalance"])


_WORDS = [
    "mysql",
    "charset",
    "kafka",
    "lag",
    "deploy",
    "rollback",
    "nginx",
    "中文",
    "乱码",
    "发布流程",
    "缓存",
    "token爆炸",
]
_doc_strategy = st.builds(
    lambda key, title, body, tags, importance, month: SearchDoc(
        key=key,
        title=" ".join(title),
        body=" ".join(body),
        tags=tuple(tags),
        importance=importance,
        updated=f"2026-{month:02d}-15",
    ),
    key=st.sampled_from([f"m{i}" for i in range(12)]),
    title=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
    body=st.lists(st.sampled_from(_WORDS), max_size=12),
    tags=st.lists(st.sampled_from(_WORDS), max_size=2),
    importance=st.sampled_from([0.1, 0.5, 0.9]),
    month=st.integers(1, 12),
)


@given(
    first=st.lists(_doc_strategy, min_size=1, max_size=10),
    second=st.lists(_doc_strategy, max_size=6),
    dropped=st.sets(st.sampled_from([f"m{i}" for i in range(12)]), max_size=4),
    queries=st.lists(
        st.lists(st.sampled_from(_WORDS + ["redis", "chrset", "mysq"]), min_size=1, max_size=3), min_size=1, max_size=4
    ),
)
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cache_search_equals_memory_search_for_random_corpora(first, second, dropped, queries):
    with tempfile.TemporaryDirectory() as tmp:
        cache = SearchCache(tmp, workers=0)
        docs = {d.key: d for d in first}
        cache.sync(fps(docs), docs.get)
        changed = {d.key: d for d in second}
        docs.update(changed)
        current = {k: ("2" if k in changed else "1") for k in docs if k not in dropped}
        docs = {k: v for k, v in docs.items() if k in current}
        cache.sync(current, docs.get)
        same(cache, docs, [" ".join(q) for q in queries], limit=10)
        cache.close()
