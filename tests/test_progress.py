"""Progress bars on long work: drawn on a terminal (the real command line under a pseudo-terminal),
never in a pipe and never with --json; the library reports through Memory.reporting; a long list
of ids in a message becomes a count and a hint."""

import json
import re
import sys

import pytest

from conftest import ROOT_DIR, run_memcli
from conftest import on_terminal as terminal

sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

from gen_store import DETAIL_WORD, generate  # noqa: E402

N = 300  # above the bar's least size (memcli.cli.progress.MIN_ITEMS)


@pytest.fixture
def big(tmp_path):
    return generate(tmp_path / "big", N)


def on_terminal(*args, cwd=None) -> tuple[int, str]:
    return terminal(args, cwd=cwd)


def counted(text: str, what: str) -> bool:
    """A bar for `what` went by, counting up to the total."""
    return what in text and re.search(rf"\b{N}/{N}\b", text) is not None


@pytest.mark.parametrize(
    "args, what",
    [
        (["index", "rebuild"], "reading memories"),
        (["heartbeat"], "checking memory files"),
        (["stats"], "checking memory files"),
        (["export"], "reading memories"),
        (["recall", DETAIL_WORD, "--layer", "details"], "indexing memories for search"),
    ],
)
def test_long_work_shows_a_bar_on_a_terminal(big, args, what):
    code, text = on_terminal("--root", big, *args)
    assert code == 0, text
    assert counted(text, what), text[-2000:]


def test_heartbeat_fix_rename_and_import_show_theirs(big, tmp_path):
    (big / "memory/m000001.md").write_text(
        (big / "memory/m000001.md").read_text().replace("expires: null", "expires: 2020-01-01")
    )
    for i in range(2, N, 7):  # references to rewrite
        p = big / f"memory/m{i:06d}.md"
        p.write_text(p.read_text() + "\nsee memory/m000003.md\n")
    code, text = on_terminal("--root", big, "heartbeat", "--fix")
    assert code == 0 and counted(text, "checking memory files") and "archived m000001" in text, text[-2000:]
    code, text = on_terminal("--root", big, "rename", "m000003", "renamed-one")
    assert code == 0 and "rewriting references" in text, text[-2000:]
    dump = tmp_path / "dump.jsonl"
    dump.write_text(run_memcli("--root", big, "export").stdout)
    fresh = tmp_path / "fresh"
    run_memcli("init", fresh)
    code, text = on_terminal("--root", fresh, "import", dump)
    assert code == 0 and "checking records" in text, text[-2000:]


@pytest.mark.parametrize(
    "args", [["index", "rebuild"], ["heartbeat"], ["stats"], ["recall", DETAIL_WORD, "--layer", "details"]]
)
def test_a_pipe_gets_no_bar(big, args):
    p = run_memcli("--root", big, *args)
    for what in ("reading memories", "checking memory files", "indexing memories", "━"):
        assert what not in p.stderr and what not in p.stdout, (what, p.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ["index", "rebuild", "--json"],
        ["--json", "heartbeat"],
        ["stats", "--json"],
        ["recall", DETAIL_WORD, "--layer", "details", "--json"],
    ],
)
def test_json_gets_no_bar_even_on_a_terminal(big, args):
    code, text = on_terminal("--root", big, *args)
    assert code == 0, text
    assert "reading memories" not in text and "checking memory files" not in text and "indexing" not in text
    json.loads(text[text.index("{") :])  # the envelope alone


def test_small_work_draws_nothing(example_root):
    code, text = on_terminal("--root", example_root, "index", "rebuild")
    assert code == 0 and "reading memories" not in text and "rebuilt" in text


def test_the_library_reports_through_a_callback(big):
    from memcli import Memory

    seen = []
    m = Memory(big)
    with m.reporting(lambda what, done, total: seen.append((what, done, total))):
        m.rebuild_index()
        m.audit()
    assert ("reading memories", N, N) in seen and seen.index(("reading memories", 0, N)) == 0
    assert ("checking memory files", N, N) in seen
    seen.clear()
    m.rebuild_index()  # outside the block: no one is told
    assert seen == []


def test_rebuild_names_a_count_not_ten_thousand_ids(big):
    """The rebuild's note on what did not fit: a few ids, the count and where to see them all (it
    was one line naming every memory left out)."""
    p = run_memcli("--root", big, "index", "rebuild")
    note = [ln for ln in p.stderr.splitlines() if "not listed for lack of room" in ln]
    assert len(note) == 1 and len(note[0]) < 300, p.stderr
    assert f"{N - 35} memories not listed" in note[0] and "`memcli list`" in note[0]
    data = json.loads(run_memcli("--root", big, "index", "rebuild", "--json").stdout)["data"]
    assert len(data["left_out"]) == N - 35  # the envelope still names every one


def test_an_embedding_build_reports_its_batches(big):
    """The semantic layer's embedding build (any provider; here vectors from character counts, numpy
    only) reports each batch it embeds."""
    np = pytest.importorskip("numpy")
    from memcli import Memory
    from memcli.search import docs, semantic

    def encode(texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % 8] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    m = Memory(big)
    seen = []
    cache = semantic.EmbeddingCache(big / ".memcli" / "semantic", "fake")
    with m.reporting(lambda what, done, total: seen.append((what, done, total))):
        stats = cache.sync(docs.memory_files(m.store), lambda key: docs.detail_doc(m.root, key), encode)
    assert stats["embedded"] == N
    steps = [(d, t) for w, d, t in seen if w == "embedding memories"]
    assert steps[0] == (0, N) and steps[-1] == (N, N) and len(steps) >= 2
