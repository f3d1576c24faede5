"""Start-up: the command line's client is thin. With a `memcli serve` answering, a per-turn command
imports the client (memcli.cli, memcli.resident, and memcli.roots and memcli.xdg: which root, where
its socket is) and the standard library's socket, nothing else of memcli's and nothing
heavy. Timings are measured by benchmarks/ (resident_bench.py, hook_bench.py); here we pin what
gets imported, which is stable."""

import json

import pytest

from tests.conftest import loaded_modules, run_memcli, start_server, stop_server

THIN = {"memcli", "memcli.cli", "memcli.resident", "memcli.roots", "memcli.xdg"}
HEAVY = {"typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3", "dataclasses", "typing"}


def event(root, prompt: str) -> str:
    return json.dumps({"session_id": "s", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": prompt})


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "charset"],
        ["should-recall", "上次那个方案"],
        ["context", "charset"],
        ["session", "add", "user", "deploy it like last time"],
        ["scope", "set", "plan", "ship friday", "--agent", "Planner"],
        ["remember", "Thin client note", "a summary", "-t", "x"],
        ["recall", "-"],
        ["hook", "claude-code"],
    ],
)
def test_a_served_turn_imports_only_the_client(example_root, args):
    assert run_memcli("hook", "allow", example_root).returncode == 0
    run_memcli("--root", example_root, "recall", "charset")  # the plugin cache, as a first run leaves it
    data = event(example_root, "上次那个 charset 的方案?") if args[0] == "hook" else "charset"
    proc = start_server(example_root)
    try:
        r, mods = loaded_modules("--root", example_root, *args, input=data, env={"MEMCLI_SERVE": "manual"}, full=True)
    finally:
        stop_server(proc)
    assert r.returncode == 0, r.stderr
    assert {m for m in mods if m.startswith("memcli")} == THIN
    assert "socket" in mods and not mods & HEAVY, mods & HEAVY  # a cold run imports typer


def test_without_a_server_the_client_adds_nothing_before_typer(example_root):
    """MEMCLI_SERVE=off: the line goes straight to the Typer app (nothing of the resident path is
    asked), which builds the one command it runs."""
    r, mods = loaded_modules("--root", example_root, "recall", "charset", full=True)
    assert r.returncode == 0 and "charset" in r.stdout.lower()
    assert "typer" in mods and "memcli.cli.cascade" in mods
    assert not {m for m in mods if m.startswith("memcli.cli.")} & {
        "memcli.cli.git",
        "memcli.cli.reflect",
        "memcli.cli.heartbeat",
        "memcli.cli.transfer",
        "memcli.cli.agent",
    }, "the commands of other modules are not imported for a recall"
