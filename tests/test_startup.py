"""Start-up is a feature: the hot commands load none of the heavy modules they do not need.

Timings are measured by benchmarks/bench.py; here we pin what gets imported, which is stable.
"""

import json

import pytest

from tests.conftest import loaded_modules, run_memcli

HEAVY = ("typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3")


def loaded(*args, full: bool = False) -> set:
    """The top-level modules a run imports (``full``: every module, dotted names too)."""
    return loaded_modules(*args, full=full)[1]


def test_version_loads_nothing_heavy():
    mods = loaded("--version")
    assert not mods & set(HEAVY), mods & set(HEAVY)
    assert "memcli.core" not in mods


def test_recall_hitting_the_index_needs_no_framework(example_root):
    run_memcli("--root", example_root, "recall", "charset")  # fills the indexed-memory cache
    mods = loaded("--root", example_root, "recall", "charset")
    assert not mods & {"typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3"}, mods


def test_should_recall_needs_no_framework(example_root):
    run_memcli("--root", example_root, "should-recall", "hello")
    mods = loaded("--root", example_root, "should-recall", "上次那个方案")
    assert not mods & {"typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3"}, mods


# What a process costs several milliseconds to import or set up, that the index-hit recall and
# should-recall do without: dataclasses (and inspect, ast, dis behind it), typing, hashlib,
# shutil and tempfile (the semantic extra's model code), threading; importlib.metadata, which finding
# the plugins would cost without memcli.plugins' cache.
SLOW_FOR_A_TURN = {
    "dataclasses",
    "inspect",
    "ast",
    "typing",
    "hashlib",
    "shutil",
    "tempfile",
    "threading",
    "importlib.metadata",
}


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "charset"],
        ["should-recall", "上次那个方案"],
        ["recall", "alembic", "--layer", "details"],
        ["context", "charset"],
        ["session", "add", "user", "deploy it like last time"],
        # text with an '@' and digits: the personal-data scan runs
        ["session", "add", "user", "mail bob@example.com or call 138 0013 8000"],
    ],
)
def test_the_turn_commands_load_nothing_slow_to_import(example_root, args):
    run_memcli("--root", example_root, *args)  # fills the indexed-memory cache (and the search cache)
    mods = loaded("--root", example_root, *args, full=True)
    assert not mods & SLOW_FOR_A_TURN, mods & SLOW_FOR_A_TURN


@pytest.mark.parametrize(
    "prompt", ["上次那个 charset 的方案是怎么做的?", "上次那个 charset 的方案? 电话 138 0013 8000"]
)
def test_the_hook_loads_nothing_slow_to_import(example_root, prompt):
    from memcli.search import embed

    if embed.available():
        pytest.skip("with the semantic extra, a prompt that needs memory loads the model (its layer runs)")
    event = json.dumps(
        {"session_id": "s", "cwd": str(example_root), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    )
    assert run_memcli("hook", "allow", example_root).returncode == 0
    run_memcli("--root", example_root, "hook", "claude-code", input=event)
    r, mods = loaded_modules("--root", example_root, "hook", "claude-code", input=event, full=True)
    assert "charset" in r.stdout.lower()
    assert not mods & SLOW_FOR_A_TURN, mods & SLOW_FOR_A_TURN


_COMPILED = """
import json, os, sys
import re._compiler as compiler

seen, compile = [], compiler.compile


def counted(pattern, flags=0):
    frame = sys._getframe(1)
    while frame is not None and "memcli" not in frame.f_code.co_filename:
        frame = frame.f_back
    where = frame.f_code.co_filename.replace(os.sep, "/").rpartition("/memcli/")[2] if frame else None
    seen.append([where, str(pattern)])
    return compile(pattern, flags)


compiler.compile = counted
from memcli.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(seen), file=sys.stderr)
"""


def compiled(*args, input=None) -> list:
    """(memcli module, as a path inside the package; pattern) of each regular expression a run
    compiles."""
    import subprocess
    import sys

    from tests.conftest import child_env

    r = subprocess.run(
        [sys.executable, "-c", _COMPILED, *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    return [tuple(x) for x in json.loads(r.stderr.strip().splitlines()[-1])]


def test_should_recall_loads_and_compiles_what_the_signals_need(example_root):
    """should-recall reads the index's names: not the cascade, its layers or the search, nor the
    patterns of an outcome section, of frontmatter rewriting or of the file scan."""
    run_memcli("--root", example_root, "should-recall", "hello")
    mods = loaded("--root", example_root, "should-recall", "上次那个 charset 方案", full=True)
    assert {m for m in mods if m.startswith(("memcli.recall.", "memcli.search."))} == {"memcli.recall.signals"}
    where = {w for w, _ in compiled("--root", example_root, "should-recall", "上次那个 charset 方案")}
    assert not where & {"store/outcomes.py", "store/frontmatter.py", "search/tokenize.py", "recall/layer.py"}, where
    assert "paths.py" in where  # the plain id check the index cache makes


def test_english_text_compiles_no_cjk_pattern(root):
    """The tokenizer's CJK split and particles are compiled for the first token that is not ASCII
    (the index layer's recall; the details layer's search cache checks the tokenizer with CJK text)."""
    assert run_memcli("--root", root, "remember", "Quokka deploy checklist", "drain the queue first").returncode == 0
    run_memcli("--root", root, "recall", "quokka")

    def cjk(*args) -> list:
        return [
            p
            for w, p in compiled("--root", root, "recall", *args)
            if w == "search/tokenize.py" and ("\u4e00" in p or "上" in p)
        ]

    assert len(cjk("quokka 部署", "--layer", "index")) == 2
    assert cjk("quokka") == [] and cjk("quokka", "--layer", "index") == []


def test_the_resident_client_loads_only_what_a_round_trip_needs(example_root):
    """With a `memcli serve` answering, the client imports memcli.cli (the parser), memcli.resident
    (and memcli.xdg, where the runtime folder is) and the C socket module, and nothing else of
    memcli's or anything heavy."""
    from tests.conftest import start_server, stop_server

    run_memcli("--root", example_root, "recall", "charset")  # the plugin cache, as a first run leaves it
    proc = start_server(example_root)
    try:
        r, mods = loaded_modules("--root", example_root, "recall", "charset", env={"MEMCLI_SERVE": "manual"}, full=True)
    finally:
        stop_server(proc)
    assert r.returncode == 0 and "charset" in r.stdout.lower()
    ours = {m for m in mods if m.startswith("memcli")}
    assert ours == {"memcli", "memcli.cli", "memcli.cli.argv", "memcli.cli.hot", "memcli.resident", "memcli.xdg"}, ours
    assert "_socket" in mods and not mods & {"socket", "datetime", *SLOW_FOR_A_TURN}, mods & {
        "socket",
        "datetime",
        *SLOW_FOR_A_TURN,
    }


def test_details_recall_loads_sqlite_but_no_framework(example_root):
    run_memcli("--root", example_root, "recall", "alembic", "--layer", "details")
    mods = loaded("--root", example_root, "recall", "alembic", "--layer", "details")
    assert "sqlite3" in mods
    assert not mods & {"typer", "click", "rich", "watchdog"}, mods


def test_typos_load_rapidfuzz_only_when_needed(example_root):
    run_memcli("--root", example_root, "recall", "charset")
    assert "rapidfuzz" in loaded("--root", example_root, "recall", "chrset")


@pytest.mark.parametrize("args", [["recall", "--help"], ["recall", "x", "--bogus"], ["should-recall"]])
def test_unusual_arguments_go_to_typer(example_root, args):
    r = run_memcli("--root", example_root, *args)
    assert ("Usage" in r.stdout + r.stderr) and r.returncode in (0, 2)


def test_fast_path_and_typer_agree(example_root):
    from typer.testing import CliRunner

    from memcli.cli.app import app

    fast = run_memcli("--root", example_root, "recall", "charset", "--json")
    slow = CliRunner().invoke(app, ["--root", str(example_root), "recall", "charset", "--json"])
    a, b = json.loads(fast.stdout), json.loads(slow.stdout)
    for env in (a, b):
        for t in env["data"]["trace"]:
            t["ms"] = 0
    assert a == b and fast.returncode == slow.exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        [
            "remember",
            "Fast path note",
            "a summary",
            "-t",
            "x",
            "--tag",
            "y",
            "-a",
            "alias one",
            "--type",
            "fact",
            "-i",
            "0.7",
            "--pin",
            "--expires",
            "2030-01-01",
            "--source",
            "test",
        ],
        ["scope", "set", "plan", "ship friday", "--agent", "Planner"],
        ["session", "add", "user", "hello there"],
    ],
)
def test_per_turn_writes_need_no_framework(example_root, args):
    mods = loaded("--root", example_root, *args)
    assert not mods & {"typer", "click", "rich", "watchdog"}, mods


def test_remember_loads_rapidfuzz_only_when_a_memory_comes_close(example_root):
    mods = loaded("--root", example_root, "remember", "Kafka consumer lag alert", "page at ten thousand")
    assert not mods & {"rapidfuzz", "typer", "click", "rich", "watchdog", "sqlite3"}, mods
    mods = loaded(
        "--root",
        example_root,
        "remember",
        "MySQL charset double encodings",
        "set utf8mb4 on the connections, not only the tables",
    )
    assert "rapidfuzz" in mods


def _normalised(env):
    text = json.dumps(env, sort_keys=True)
    import re

    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", text)


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "Same either way", "summary", "-t", "a", "-t", "b", "-a", "other name", "-i", "0.9", "--pin"],
        ["remember", "Bad importance", "s", "-i", "7"],
        ["remember", "Secret inside", "--body", "token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"],
        ["scope", "set", "k", "v", "--agent", "A"],
        ["scope", "set", "k", "v"],
        ["session", "add", "user", "hi"],
        ["session", "add", "nobody", "hi"],
    ],
)
def test_fast_path_and_typer_agree_on_writes(tmp_path, monkeypatch, args):
    import memcli.cli
    from tests.conftest import invoke

    results = []
    for runner in ("fast", "typer"):
        root = tmp_path / runner
        assert run_memcli("init", root).returncode == 0
        if runner == "fast":
            r = run_memcli("--root", root, *args, "--json")
            results.append((r.returncode, _normalised(json.loads(r.stdout))))
        else:  # main's Typer path, the fast path turned off
            monkeypatch.setattr(memcli.cli.hot, "fast", lambda line: None)
            r = invoke(["--root", str(root), *args, "--json"])
            results.append((r.exit_code, _normalised(json.loads(r.stdout))))
    assert results[0] == results[1]
