"""The heartbeat's check registry: a new check is one class and one registration."""

import sys
import types

import pytest

from memcli import Memory
from memcli.heartbeat import CHECKS, Check, audit, check_text, register
from memcli.heartbeat.cache import signature
from memcli.model import Finding
from memcli.store import layout


@pytest.fixture
def todo_check(monkeypatch):
    """A check written in a module of its own, registered once."""
    module = types.ModuleType("memcli_test_todo_check")
    module.__file__ = __file__
    monkeypatch.setitem(sys.modules, module.__name__, module)
    before = list(CHECKS)

    class Todo(Check):
        codes = ("todo",)
        kinds = (layout.DETAIL,)

        def file(self, f):
            return [Finding("todo", "info", f.rel, None, "a TODO is left", "do it")] if "TODO" in f.text else []

    Todo.__module__ = module.__name__
    register(Todo)
    yield Todo
    CHECKS[:] = before


def test_a_registered_check_runs_in_audit_and_watch(root, todo_check):
    m = Memory(root)
    m.remember("Plan", "TODO: write it", id="plan")
    assert [f.path for f in audit(m.store).findings if f.code == "todo"] == ["memory/plan.md"]
    text = (root / "memory" / "plan.md").read_text()
    assert [f.code for f in check_text("memory/plan.md", layout.DETAIL, text)] == ["todo"]
    assert check_text("memory/episodes/2026-01-01.md", layout.EPISODE, text) == []


def test_the_cache_signature_covers_every_registered_check(monkeypatch):
    base = signature()
    module = types.ModuleType("memcli_test_other_check")
    monkeypatch.setitem(sys.modules, module.__name__, module)

    class Other(Check):
        codes = ("other",)

    Other.__module__ = module.__name__
    CHECKS.append(Other())
    try:
        assert signature() != base
    finally:
        CHECKS.pop()
    assert signature() == base


def test_a_new_check_is_not_served_stale_findings(root, todo_check):
    """Findings cached before a check existed are not reused once it is registered."""
    CHECKS.remove(next(c for c in CHECKS if isinstance(c, todo_check)))
    m = Memory(root)
    m.remember("Plan", "TODO: write it", id="plan")
    assert not [f for f in audit(m.store).findings if f.code == "todo"]
    register(todo_check)
    assert [f.code for f in audit(m.store).findings if f.code == "todo"] == ["todo"]


def test_codes_are_unique_and_declared():
    codes = [c for check in CHECKS for c in check.codes]
    assert len(codes) == len(set(codes))
    assert {"secret", "injection", "expired", "duplicate", "index-drift", "temp-file"} <= set(codes)


@pytest.mark.parametrize(
    "rel, kind",
    [
        ("MEMORY.md", "index"),
        ("memcli.yaml", "config"),
        ("memory/a.md", layout.DETAIL),
        ("memory/archive/a.md", layout.ARCHIVED),
        ("memory/episodes/2026-01-01.md", layout.EPISODE),
        ("memory/sub/a.md", layout.OTHER),
        ("memory/.a.md", None),
        ("memory/a.txt", None),
        ("notes/a.md", None),
    ],
)
def test_kind_of(rel, kind):
    assert layout.kind_of(rel) == kind


@pytest.mark.parametrize(
    "line,bad",
    [
        ("importance: 1.5", True),
        ("importance: .nan", True),
        ("importance: true", True),
        ('importance: "0.7"', False),
        ("importance: 0", False),
        ("type: Lesson", True),
        ("type: lesson", False),
        ("id: plan", False),
        ("title: '  '", True),
        ("title: 计划", False),
    ],
)
def test_frontmatter_values_memcli_would_misread_are_reported(line, bad):
    keys = {"id": "id: plan", "title": "title: Plan", "type": "type: note", "importance": "importance: 0.5"}
    keys[line.split(":")[0]] = line
    text = "---\n" + "\n".join(keys.values()) + "\n---\nBody.\n"
    n = list(keys.values()).index(line) + 2
    found = [f for f in check_text("memory/plan.md", layout.DETAIL, text) if f.code == "frontmatter-invalid"]
    assert bool(found) == bad, found
    if bad:
        assert found[0].line == n and line.split(":")[0] in found[0].message and found[0].fix
