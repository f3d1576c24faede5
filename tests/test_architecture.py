"""The shape of the library, read from its source (benchmarks/import_map.py): dependencies point
one way (errors, model <- store, search, safety <- recall, heartbeat, usecases <- the Memory
facade <- the front ends), no import cycle, no module using another's private names, no module
over 600 lines (a bracketed expression counting as one: the formatter's wrapping does not count), and
one index planner."""

import ast
import sys

import pytest

from tests.conftest import ROOT_DIR

sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

from import_map import Graph  # noqa: E402

GRAPH = Graph(ROOT_DIR / "memcli")
FRONT_ENDS = ("memcli.cli", "memcli.hooks", "memcli.mcp", "memcli.mcp_result", "memcli.mcp_stdio", "memcli.serve")
# What a front end may import of memcli: the facade (and the package, for its version), the errors,
# the plain values and the renderer, the resident path's client (memcli.resident: where a root's
# `memcli serve` listens, and one exchange with it); and another front end it starts (`memcli mcp`
# runs mcp.py, `memcli hook` hooks.py, `memcli serve` serve.py).
FACADE = ("memcli", "memcli.core", "memcli.errors", "memcli.model", "memcli.render", "memcli.resident")
MAX_LINES = 600


def under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def imports_of(*packages: str):
    return [(a, b, line) for a, b, line, _ in GRAPH.edges if under(a, *packages)]


def test_the_map_reads_every_module_and_inner_imports():
    """The rules below are only as good as the map: it sees imports inside functions too."""
    assert "memcli.core" in GRAPH.modules and "memcli.store.root" in GRAPH.modules
    assert any(inner for *_, inner in GRAPH.edges), "imports inside functions are part of the graph"
    assert ("memcli.core", "memcli.usecases.write") in {(a, b) for a, b, _, _ in GRAPH.edges}


def test_there_is_no_import_cycle():
    assert GRAPH.cycles() == []


def test_no_module_uses_another_modules_private_names():
    assert GRAPH.private == []


def test_front_ends_import_only_the_facade_errors_model_and_render():
    bad = [(a, b, line) for a, b, line in imports_of(*FRONT_ENDS) if not (b in FACADE or under(b, *FRONT_ENDS))]
    assert bad == []


def test_search_never_imports_recall_a_use_case_or_a_front_end():
    bad = [(a, b, line) for a, b, line in imports_of("memcli.search")
           if under(b, "memcli.recall", "memcli.usecases", "memcli.heartbeat", "memcli.core", *FRONT_ENDS)]
    assert bad == []


def test_the_store_is_the_bottom_layer():
    """store/ touches files for everyone and imports nothing above it."""
    bad = [(a, b, line) for a, b, line in imports_of("memcli.store")
           if under(b, "memcli.search", "memcli.safety", "memcli.recall", "memcli.heartbeat", "memcli.usecases",
                    "memcli.core", *FRONT_ENDS)]
    assert bad == []


def test_layers_and_checks_never_reach_up_to_use_cases_or_the_facade():
    bad = [(a, b, line) for a, b, line in imports_of("memcli.recall", "memcli.heartbeat", "memcli.safety")
           if under(b, "memcli.usecases", "memcli.core", *FRONT_ENDS)]
    assert bad == []


def test_use_cases_take_a_root_never_the_facade():
    bad = [(a, b, line) for a, b, line in imports_of("memcli.usecases") if under(b, "memcli.core", *FRONT_ENDS)]
    assert bad == []
    takes_memory = [(name, node.name) for name, path in GRAPH.modules.items() if under(name, "memcli.usecases")
                    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and any(a.arg in ("mem", "memory") for a in node.args.args)]
    assert takes_memory == []


def test_the_plugin_loader_stands_on_nothing_of_memcli():
    """Every registry asks memcli.plugins for its hook, so it imports none of them."""
    assert [b for a, b, _ in imports_of("memcli.plugins")] == []


PLUGINS = ROOT_DIR / "tests" / "plugins"
PUBLIC = ("memcli", "memcli.api")  # what a plugin may import of memcli: Memory, __version__ and memcli.api


def plugin_imports():
    for path in sorted(PLUGINS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                yield from ((path, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                yield from ((path, f"{node.module}.{a.name}") if node.module == "memcli" and
                            f"memcli.{a.name}" in GRAPH.modules else (path, node.module) for a in node.names)


def test_plugins_import_only_the_public_api():
    used = [(p.name, m) for p, m in plugin_imports() if m == "memcli" or m.startswith("memcli.")]
    assert used and all(m in PUBLIC for _, m in used), used


def test_model_is_plain_values():
    assert {b for a, b, _ in imports_of("memcli.model")} <= {"memcli.errors", "memcli.store.layout"}


def test_a_module_is_sized_by_its_lines_not_by_how_they_are_wrapped():
    from import_map import size

    one = 'def f(a, b):\n    """Two\n    lines."""\n    return g(a, [b, 1], {"k": 2})\n'
    wrapped = ('def f(\n    a,\n    b,\n):\n    """Two\n    lines."""\n'
               '    return g(\n        a,\n        [b, 1],\n        {"k": 2},\n    )\n')
    assert size(one) == size(wrapped) == 4
    assert size(one + "\n\nx = 1  # (\n") == 7  # a bracket in a comment or a string opens nothing


@pytest.mark.parametrize("module", sorted(GRAPH.modules))
def test_no_module_is_over_600_lines(module):
    assert GRAPH.lines[module] <= MAX_LINES, f"{module}: {GRAPH.lines[module]} lines"


def test_one_index_planner():
    """Only store/indexrules.py decides which memories MEMORY.md lists: no other module ranks,
    demotes or measures the index's room itself."""
    planners = {"rank", "demote", "free_room"}
    users = {}
    for name, path in GRAPH.modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in planners and getattr(node.value, "id", "") == "indexrules":
                users.setdefault(name, set()).add(node.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("indexrules"):
                for a in node.names:
                    if a.name in planners:
                        users.setdefault(name, set()).add(a.name)
    assert users == {}, users
