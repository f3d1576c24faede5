"""The shape of the library, read from its source (benchmarks/import_map.py): dependencies point
one way (errors, model <- store, search, safety <- recall, heartbeat, usecases <- the Memory
facade <- the front ends), no import cycle, no module using another's private names, no module
over 600 lines (every physical line, as a reader counts them), and one index planner."""

import ast
import sys

import pytest

from tests.conftest import ROOT_DIR

sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

from import_map import Graph  # noqa: E402

GRAPH = Graph(ROOT_DIR / "memcli")
FRONT_ENDS = (
    "memcli.cli",
    "memcli.hooks",
    "memcli.mcp",
    "memcli.mcp_result",
    "memcli.mcp_stdio",
    "memcli.serve",
    "memcli.gitmerge",
    "memcli.__main__",
)
# What a front end may import of memcli: the facade (and the package, for its version), the errors,
# the plain values, the requests a front end hands on and the renderer; for what acts on no one
# root, the module that holds it (no module passes it on); and another front end it starts
# (`memcli mcp` runs mcp.py, `memcli serve` serve.py, the server answers through cli).
FACADE = {
    "memcli": "the version",
    "memcli.core": "Memory, the facade over the use cases",
    "memcli.errors": "the errors and their exit codes",
    "memcli.model": "plain values and defaults",
    "memcli.requests": "one request per operation, its options declared once",
    "memcli.render": "the output",
    "memcli.resident": "where a root's server listens, and one exchange with it",
    "memcli.roots": "which folder is the root",
    "memcli.config": "the root, the session and the scope the environment names",
    "memcli.trust": "the roots the user lets the hook use",
    "memcli.plugins": "the installed plugins and what failed",
    "memcli.recall.registry": "the recall layers' names",
    "memcli.safety.scanner": "the injection flags said beside text shown",
    "memcli.store.fs": "decoding input given on the command line or stdin",
    "memcli.store.markers": "what a person runs to settle a conflicted file",
    "memcli.dates": "durations given as options",
}
# and the server: the details layer's files it follows, the model it holds for the semantic step
SERVED = ("memcli.store.watcher", "memcli.search.remote", "memcli.search.semantic")
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


# The bottom of the library, in the order each may import the ones before it (and nothing after):
# path rules, plain values, the store, the settings, the user's trust records, the rule that a
# committed memcli.yaml only tightens (which loads a root's settings), the write checks.
BOTTOM = (
    "memcli.paths",
    "memcli.model",
    "memcli.store",
    "memcli.config",
    "memcli.trust",
    "memcli.settings_guard",
    "memcli.safety",
)


def test_no_package_level_cycle_but_front_ends_starting_each_other():
    """Modules form no cycle, and neither do packages (``memcli.store`` as one): only front ends
    start one another (`memcli hook` runs hooks.py, `memcli serve` serve.py, which answer through cli)."""
    groups = GRAPH.cycles(packages=True)
    assert all(under(p, *FRONT_ENDS) for g in groups for p in g), groups


def test_the_bottom_packages_are_layered():
    packages = GRAPH.package_imports()
    bad = [(a, b) for i, a in enumerate(BOTTOM) for b in sorted(packages[a]) if b in BOTTOM[i:]]
    assert bad == []


def test_no_module_uses_another_modules_private_names():
    assert GRAPH.private == []


def test_front_ends_import_only_the_facade_and_the_homes_of_what_acts_on_no_root():
    allowed = lambda a, b: b in FACADE or under(b, *FRONT_ENDS) or (a == "memcli.serve" and b in SERVED)  # noqa: E731
    bad = [(a, b, line) for a, b, line in imports_of(*FRONT_ENDS) if not allowed(a, b)]
    assert bad == []


def test_the_library_never_calls_an_entry_point():
    """The facade and its support module reach the use cases; no entry point (the command line,
    the merge driver git runs, the hook, the server, MCP) is called from below the front ends."""
    bad = [(a, b, line) for a, b, line, _ in GRAPH.edges if not under(a, *FRONT_ENDS) and under(b, *FRONT_ENDS)]
    assert bad == []


ENTRY_POINTS = ("memcli.gitmerge", "memcli.hooks", "memcli.serve", "memcli.mcp")


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_entry_points_call_use_cases_through_the_facade(entry):
    """An entry point parses, calls the facade or its support module, and says the result: it does
    no store work of its own (no store, use case, check or search of its own)."""
    used = {b for a, b, _ in imports_of(entry)}
    assert "memcli.core" in used, used
    assert all(b in FACADE or b in SERVED or under(b, *FRONT_ENDS) for b in used), used


def test_search_never_imports_recall_a_use_case_or_a_front_end():
    bad = [
        (a, b, line)
        for a, b, line in imports_of("memcli.search")
        if under(b, "memcli.recall", "memcli.usecases", "memcli.heartbeat", "memcli.core", *FRONT_ENDS)
    ]
    assert bad == []


def test_the_store_is_the_bottom_layer():
    """store/ touches files for everyone and imports nothing above it: a Root is given its settings
    ready, so the store reads no configuration and asks no trust record."""
    bad = [
        (a, b, line)
        for a, b, line in imports_of("memcli.store")
        if under(
            b,
            "memcli.config",
            "memcli.trust",
            "memcli.settings_guard",
            "memcli.search",
            "memcli.safety",
            "memcli.recall",
            "memcli.heartbeat",
            "memcli.usecases",
            "memcli.core",
            *FRONT_ENDS,
        )
    ]
    assert bad == []


def test_layers_and_checks_never_reach_up_to_use_cases_or_the_facade():
    bad = [
        (a, b, line)
        for a, b, line in imports_of("memcli.recall", "memcli.heartbeat", "memcli.safety")
        if under(b, "memcli.usecases", "memcli.core", *FRONT_ENDS)
    ]
    assert bad == []


def test_use_cases_take_a_root_never_the_facade():
    bad = [(a, b, line) for a, b, line in imports_of("memcli.usecases") if under(b, "memcli.core", *FRONT_ENDS)]
    assert bad == []
    takes_memory = [
        (name, node.name)
        for name, path in GRAPH.modules.items()
        if under(name, "memcli.usecases")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(a.arg in ("mem", "memory") for a in node.args.args)
    ]
    assert takes_memory == []


def test_the_plugin_loader_stands_on_nothing_of_memcli():
    """Every registry asks memcli.plugins for its hook, so it imports none of them (only where the
    user's cache folder is: memcli.xdg, which imports nothing of memcli)."""
    assert [b for a, b, _ in imports_of("memcli.plugins")] == ["memcli.xdg"]
    assert [b for a, b, _ in imports_of("memcli.xdg")] == []


PLUGINS = ROOT_DIR / "tests" / "plugins"
PUBLIC = ("memcli", "memcli.api")  # what a plugin may import of memcli: Memory, __version__ and memcli.api


def plugin_imports():
    for path in sorted(PLUGINS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                yield from ((path, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                yield from (
                    (path, f"{node.module}.{a.name}")
                    if node.module == "memcli" and f"memcli.{a.name}" in GRAPH.modules
                    else (path, node.module)
                    for a in node.names
                )


def test_plugins_import_only_the_public_api():
    used = [(p.name, m) for p, m in plugin_imports() if m == "memcli" or m.startswith("memcli.")]
    assert used and all(m in PUBLIC for _, m in used), used


def test_model_is_plain_values_and_imports_nothing_of_the_store():
    """Plain values stand on the errors and the pure path rules (``memcli.paths``), not on the
    store that reads and writes the files; the root finder (``memcli.roots``) stands on nothing of
    memcli's (the command line's client imports it)."""
    assert {b for a, b, _ in imports_of("memcli.model")} <= {"memcli.errors", "memcli.paths"}
    assert {b for a, b, _ in imports_of("memcli.paths")} <= {"memcli.errors", "memcli.roots"}
    assert not {b for a, b, _ in imports_of("memcli.roots")}


def test_one_root_finder():
    """memcli/roots.py finds the root: config.find_root raises what it says is wrong, the agent hook
    walks ``roots.above``, the command line's client asks ``roots.find``; no other module has one."""
    finders = {
        name
        for name, tree in module_trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name.startswith("find") and "root" in n.name
    }
    assert finders == {"memcli.config"}
    users = {a for a, b, _, _ in GRAPH.edges if b == "memcli.roots"}
    assert {"memcli.config", "memcli.resident", "memcli.usecases.hooks"} <= users


def test_a_module_is_sized_by_every_line_a_reader_sees():
    from import_map import size

    one = 'def f(a, b):\n    """Two\n    lines."""\n    return g(a, [b, 1], {"k": 2})\n'
    wrapped = (
        'def f(\n    a,\n    b,\n):\n    """Two\n    lines."""\n'
        '    return g(\n        a,\n        [b, 1],\n        {"k": 2},\n    )\n'
    )
    assert size(one) == 4 and size(wrapped) == 11  # a wrapped call is as many lines as it shows
    assert size("x = 1") == 1 and size("") == 0


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
            if (
                isinstance(node, ast.Attribute)
                and node.attr in planners
                and getattr(node.value, "id", "") == "indexrules"
            ):
                users.setdefault(name, set()).add(node.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("indexrules"):
                for a in node.names:
                    if a.name in planners:
                        users.setdefault(name, set()).add(a.name)
    assert users == {}, users


# ---------------------------------------------------------------- one home for each rule


def module_trees():
    for name, path in sorted(GRAPH.modules.items()):
        yield name, ast.parse(path.read_text(encoding="utf-8"))


# CJK script and the wide characters around it: Hangul Jamo, radicals to the unified ideographs,
# Hangul syllables, compatibility ideographs, the supplementary ideographs.
CJK_BLOCKS = ((0x1100, 0x11FF), (0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x3134F))


# where a CJK range starts or ends: a number a module compares a code point with to say "CJK"
CJK_BOUNDS = {
    0x1100,
    0x11FF,
    0x2E80,
    0x3040,
    0x30FF,
    0x3400,
    0x4DBF,
    0x4E00,
    0x9FA5,
    0x9FFF,
    0xAC00,
    0xD7AF,
    0xF900,
    0xFAFF,
    0x20000,
    0x3134F,
}


def in_cjk(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in CJK_BLOCKS)


def test_one_home_for_the_cjk_ranges():
    """Only memcli/cjk.py writes a CJK range: no other module holds a regex class range between two
    CJK characters, or compares a character with a CJK code point."""
    import re

    found = []
    for name, tree in module_trees():
        if name == "memcli.cjk":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for lo, hi in re.findall(r"(.)-(.)", node.value):
                    if in_cjk(ord(lo)) and in_cjk(ord(hi)):
                        found.append((name, node.lineno, f"{lo}-{hi}"))
            elif isinstance(node, ast.Compare) and all(
                isinstance(o, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for o in node.ops
            ):
                for c in [node.left, *node.comparators]:
                    value = c.value if isinstance(c, ast.Constant) else None
                    if (isinstance(value, int) and value in CJK_BOUNDS) or (
                        isinstance(value, str) and len(value) == 1 and in_cjk(ord(value))
                    ):
                        found.append((name, node.lineno, hex(value if isinstance(value, int) else ord(value))))
    assert found == []


def code_strings(tree):
    """(line, text) of every string constant that is not a docstring."""
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def homes(rule) -> set:
    """The modules where rule(text) holds for a string of their code."""
    return {name for name, tree in module_trees() if any(rule(s) for _, s in code_strings(tree))}


def test_one_home_for_the_users_folders():
    """Only memcli/xdg.py reads an XDG_* variable (config, state, cache, runtime)."""
    assert homes(lambda s: s.startswith("XDG_") and s.endswith(("_HOME", "_DIR"))) == {"memcli.xdg"}


def test_one_home_for_the_frontmatter_fence():
    """A block between `---` lines is opened, found and written by store/frontmatter.py (opens,
    span, split, fenced): no other module writes the fence with a line end or asks whether text
    starts with it (a Markdown rule `---` among other line starts is not the fence)."""
    asks = {
        name
        for name, tree in module_trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and getattr(n.func, "attr", "") == "startswith"
        and any(isinstance(a, ast.Constant) and a.value == "---" for a in n.args)
    }
    assert homes(lambda s: s.startswith("---\n") or "\n---" in s) | asks <= {"memcli.store.frontmatter"}


def test_one_home_for_the_episode_grammar():
    """A section's heading and a turn's block are read by store/episodes.py's patterns alone (the
    writer, reflection, the search's documents and the git merge use them)."""
    section = lambda s: "## " in s and r"\d{4}-\d{2}-\d{2}T" in s  # noqa: E731
    turn = lambda s: r"\*\*user\*\*" in s or r"\*\*(user|" in s or r"\*\*\w+\*\* \(" in s  # noqa: E731
    assert homes(section) == homes(turn) == {"memcli.store.episodes"}


def test_one_home_for_launching_the_editor():
    assert homes(lambda s: s in ("VISUAL", "EDITOR")) == {"memcli.cli.editor"}


def test_one_home_for_the_near_duplicate_rule():
    """The ratio's threshold and the prefilter before it are memcli/near_duplicates.py's: the two modules
    that compare memories by a rapidfuzz ratio import them (a typo's scorer is another rule), and
    no module compares with a bare 90."""
    users = {
        name
        for name, tree in module_trees()
        if any(
            isinstance(n, ast.Call)
            and getattr(n.func, "attr", "") == "ratio"
            and getattr(n.func.value, "id", "") == "fuzz"
            for n in ast.walk(tree)
        )
    }
    assert users == {"memcli.heartbeat.duplicates", "memcli.usecases.duplicates"}
    for name in users:
        used = {
            (a.name)
            for n in ast.walk(dict(module_trees())[name])
            if isinstance(n, ast.ImportFrom) and (n.module or "").endswith("near_duplicates")
            for a in n.names
        }
        assert {"DUPLICATE_RATIO", "lengths_allow"} <= used, (name, used)
    bare = [
        (name, n.lineno)
        for name, tree in module_trees()
        if name != "memcli.near_duplicates"
        for n in ast.walk(tree)
        if isinstance(n, ast.Compare)
        and any(isinstance(c, ast.Constant) and c.value in (90, 90.0) for c in [n.left, *n.comparators])
    ]
    assert bare == []


def test_one_glossary():
    """Chinese-English term tables (lines pairing Chinese words with English ones) live in
    search/glossary.txt alone, no module holding one: recall and reflection read the same one."""
    import re

    def table(s: str, pair: str = r"[\u3400-\u9fff].*[a-z]{3}|[a-z]{3}.*[\u3400-\u9fff]") -> bool:
        return len([ln for ln in s.splitlines() if re.search(pair, ln)]) >= 20

    # a data file pairs them as `中文 = english` (rules of the other languages hold both, unpaired)
    data = [
        p.relative_to(ROOT_DIR).as_posix()
        for p in (ROOT_DIR / "memcli").rglob("*")
        if p.is_file()
        and p.suffix not in (".py", ".pyc")
        and table(p.read_text(encoding="utf-8", errors="ignore"), r"[\u3400-\u9fff][^=]*=[^=]*[a-z]{3}")
    ]
    assert homes(table) == set() and data == ["memcli/search/glossary.txt"]


def test_plain_pytest_imports_the_tests_helpers(tmp_path):
    """`pytest`, not only `python -m pytest`, collects a module that imports `tests.…`: pytest's
    own script does not put the working folder on the path, so the project says so itself."""
    import subprocess
    from pathlib import Path

    script = Path(sys.executable).parent / "pytest"
    if not script.exists():
        pytest.skip("no pytest script beside this interpreter")
    done = subprocess.run(
        [
            str(script),
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-o",
            "addopts=",
            "tests/test_watch.py",
        ],
        cwd=ROOT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "errors during collection" not in done.stdout and " error" not in done.stdout.splitlines()[-1]


def test_no_module_swaps_the_process_wide_state():
    """A command gets its streams, environment and working folder as values (``cli.boundary.Call``):
    no module assigns os.environ or the standard streams, or changes the working folder."""
    swaps = []
    for name, tree in module_trees():
        for n in ast.walk(tree):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                text = ast.unparse(t)
                if text in ("sys.stdout", "sys.stderr", "sys.stdin", "os.environ") or text.startswith("os.environ["):
                    swaps.append((name, n.lineno, text))
            if isinstance(n, ast.Call) and ast.unparse(n.func) in ("os.chdir", "os.environ.update", "os.putenv"):
                swaps.append((name, n.lineno, ast.unparse(n.func)))
    assert swaps == []
