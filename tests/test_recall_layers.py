"""Recall layers as a plug-in point: a new layer is one class and one registration; the cascade,
de-duplication, the trace and `--layer` follow from the registry. `context` asks the same cascade."""

import json

import pytest

from memcli.core import Memory
from memcli.model import Hit
from memcli.recall import layer_names, recall, register
from memcli.recall import registry
from memcli.recall.layer import Ask, Candidate, Layer, holds_query
from memcli.search.semantic import enabled


class GlossaryLayer(Layer):
    """A stand-in layer: a fixed glossary of terms."""

    name = "glossary"
    help = "a fixed glossary"
    memories = False
    TERMS = {"zeppelin": "the relay service on port 7301"}

    def search(self, ask: Ask):
        out = [
            Candidate(Hit(self.name, k, k, "glossary", 0.9, v), 0.9)
            for k, v in self.TERMS.items()
            if k in ask.query.lower()
        ]
        return out, len(self.TERMS)


@pytest.fixture
def glossary(monkeypatch):
    monkeypatch.setattr(registry, "_LAYERS", list(registry._LAYERS))
    register(GlossaryLayer(), before="index")
    return GlossaryLayer


def test_a_new_layer_is_one_class_and_one_registration(glossary, example_root):
    extra = ("semantic",) if enabled() else ()  # the `semantic` extra, when installed
    assert layer_names() == ("session", "scope", "glossary", "index", "details", *extra)
    mem = Memory(example_root)
    res = recall(mem.store, "what is zeppelin", now="2026-12-01T00:00:00Z")
    assert [h.id for h in res.hits] == ["zeppelin"] and res.hits[0].layer == "glossary"
    assert [t.layer for t in res.trace] == ["session", "scope", "glossary"]  # a sure answer ends it
    only = recall(mem.store, "zeppelin", layer="glossary")
    assert [t.layer for t in only.trace] == ["glossary"]
    deep = recall(mem.store, "zeppelin mysql charset", deep=True)  # two words of the note: a lexical answer
    assert deep.hits[0].layer == "glossary" and "mysql-charset" in [h.id for h in deep.hits]
    last = json.loads((example_root / ".memcli" / "trace.jsonl").read_text().splitlines()[-1])
    assert "zeppelin" not in last["ids"]  # not a memory: no access count


def test_register_replaces_a_layer_of_the_same_name(glossary):
    register(GlossaryLayer(), before="index")
    assert layer_names().count("glossary") == 1


def test_unknown_layer_names_the_registered_ones(glossary, example_root):
    from memcli.errors import UsageError

    with pytest.raises(UsageError, match="session, scope, glossary, index, details"):
        recall(Memory(example_root).store, "x", layer="nope")


def test_deep_lists_a_memory_once_whichever_layers_found_it(example_root):
    res = recall(Memory(example_root).store, "charset", deep=True)
    assert [h.id for h in res.hits].count("mysql-charset") == 1


@pytest.mark.parametrize(
    "turn, query, held",
    [
        ("How do we deploy to staging?", "how do we deploy to staging", True),
        ("还记得上次 MySQL 中文乱码的问题吗？", "还记得上次 MySQL 中文乱码的问题吗？", True),
        ("we use pgbouncer in transaction mode for every service", "pgbouncer", False),
        ("deploy", "how do we deploy to staging and roll back", False),
        ("", "x", False),
    ],
)
def test_a_turn_holds_the_query_only_when_it_is_mostly_the_query(turn, query, held):
    assert holds_query(turn, query) is held


def test_context_uses_the_cascade_and_writes_the_trace(cli, root):
    cli("remember", "Rollback", "how to undo a deploy", "--body", "the staging rollback uses alembic downgrade")
    cli("session", "add", "user", "alembic downgrade on staging?")
    data = cli.json("context", "alembic downgrade on staging?", code=0)["data"]
    assert data["recalled"] == ["rollback"]
    rec = json.loads((root / ".memcli" / "trace.jsonl").read_text().splitlines()[-1])
    assert rec["command"] == "context" and rec["ids"] == ["rollback"] and rec["layer"] in ("index", "details")


class MeaningLayer(Layer):
    """A stand-in for the semantic layer: a fallback with a confidence of its own (no signals)."""

    name = "semantic"
    help = "a stand-in meaning layer"
    fallback = True
    ORDER = ("postgres-pool-exhaustion", "mysql-charset")

    def active(self) -> bool:
        return True

    def search(self, ask: Ask):
        return [
            Candidate(Hit(self.name, k, k, f"memory/{k}.md", 0.8 - i / 10, "", methods=("embedding",)), 0.8 - i / 10)
            for i, k in enumerate(self.ORDER)
        ], len(self.ORDER)


def test_a_fallback_layer_runs_without_a_sure_answer_and_its_hits_are_rated_beside_the_rest(monkeypatch, example_root):
    monkeypatch.setattr(registry, "_LAYERS", list(registry._LAYERS))
    register(MeaningLayer())
    mem = Memory(example_root)
    sure = recall(mem.store, "mysql charset", limit=3, now="2026-12-01T00:00:00Z")
    assert [t.layer for t in sure.trace][-1] == "details" and sure.hits[0].id == "mysql-charset"
    unsure = recall(mem.store, "a question no word of which is held", limit=3, now="2026-12-01T00:00:00Z")
    assert [t.layer for t in unsure.trace][-1] == "semantic"
    assert [h.id for h in unsure.hits][:2] == list(MeaningLayer.ORDER)
    # --deep asks it anyway, and a memory two layers found is listed once, at its best
    deep = recall(mem.store, "mysql charset", limit=3, deep=True, now="2026-12-01T00:00:00Z")
    assert [t.layer for t in deep.trace][-1] == "semantic" and [h.id for h in deep.hits].count("mysql-charset") == 1
