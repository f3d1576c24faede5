"""`memcli agents add|list|remove` merged into the clients' own files, and `memcli doctor`
running what they wired, in real processes."""

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import run_memcli

HOOK = "hook claude-code"


@pytest.fixture(autouse=True)
def no_client_homes(monkeypatch):
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(k, raising=False)


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


def add(root, name, *args, cwd=None):
    return run_memcli("--root", root, "agents", "add", name, *args, "--json", cwd=cwd)


def ok(r) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["data"]


def memcli_hooks(settings: dict) -> dict:
    return {
        e: [h["command"] for g in groups for h in g["hooks"] if HOOK in h["command"]]
        for e, groups in settings["hooks"].items()
    }


def test_claude_code_keeps_every_key_and_a_second_run_changes_nothing(root, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}]},
    }
    settings.write_text(json.dumps(mine))
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "o"}}}))
    data = ok(add(root, "claude-code"))
    assert sorted(data["changed"]) == sorted([str(home / ".claude.json"), str(settings)])
    got = json.loads(settings.read_text())
    assert got["model"] == "opus" and got["permissions"] == mine["permissions"]
    assert got["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]  # the user's own hook, untouched
    hooks = memcli_hooks(got)
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
    assert all(len(c) == 1 and f"--root {os.path.realpath(root)} hook claude-code" in c[0] for c in hooks.values())
    state = json.loads((home / ".claude.json").read_text())
    assert state["numStartups"] == 3 and state["mcpServers"]["other"] == {"command": "o"}
    assert state["mcpServers"]["memcli"]["args"] == ["--root", os.path.realpath(root), "mcp"]
    assert json.loads(Path(str(settings) + ".memcli-backup").read_text()) == mine
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (settings, home / ".claude.json")}
    again = ok(add(root, "claude-code"))
    assert again["changed"] == [] and {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before
    assert json.loads(Path(str(settings) + ".memcli-backup").read_text()) == mine  # still the user's file
    assert os.path.realpath(root) in run_memcli("hook", "list").stdout  # the hook may use the root


def test_project_scope_writes_the_projects_files(root, tmp_path, home):
    project = tmp_path / "project"
    project.mkdir()
    data = ok(add(root, "claude-code", "--scope", "project", cwd=project))
    assert data["files"][0] == str(project / ".mcp.json")
    assert "memcli" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(memcli_hooks(json.loads((project / ".claude" / "settings.json").read_text()))) == {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
    }
    assert not (home / ".claude.json").exists()
    listed = ok(run_memcli("agents", "list", "--json", cwd=project))["agents"]
    assert [(x["agent"], x["scope"], x["root"]) for x in listed] == [("claude-code", "project", os.path.realpath(root))]


CODEX = """# my settings
model = "gpt-5"  # the default model

[projects."/home/me/my project"]
trust_level = "trusted"

[mcp_servers.memcli]
command = "old-memcli"
args = [
  "--root",
  "/old",
]
env_vars = ["HTTP_PROXY"]  # mine

[mcp_servers.memcli.env]
LANG = "C.UTF-8"

[mcp_servers.docs]
command = "docs-server"
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the check of the whole file needs tomllib")
def test_codex_edits_its_own_table_and_keeps_the_rest(root, home):
    import tomllib

    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX)
    ok(add(root, "codex"))
    text = config.read_text()
    got = tomllib.loads(text)
    assert "# my settings" in text and "# the default model" in text and got["model"] == "gpt-5"
    assert got["projects"] == {"/home/me/my project": {"trust_level": "trusted"}}
    server = got["mcp_servers"]["memcli"]
    assert server["args"] == ["--root", os.path.realpath(root), "mcp"] and server["required"] is True
    assert server["env_vars"] == ["HTTP_PROXY"] and server["env"] == {"LANG": "C.UTF-8"}
    assert got["mcp_servers"]["docs"] == {"command": "docs-server"}
    assert set(memcli_hooks(json.loads((home / ".codex" / "hooks.json").read_text()))) == {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
    }
    assert Path(str(config) + ".memcli-backup").read_text() == CODEX
    assert ok(add(root, "codex"))["changed"] == [] and config.read_text() == text
    ok(run_memcli("agents", "remove", "codex", "--json"))
    after = tomllib.loads(config.read_text())
    assert "memcli" not in after["mcp_servers"] and after["mcp_servers"]["docs"] and after["model"] == "gpt-5"
    assert memcli_hooks(json.loads((home / ".codex" / "hooks.json").read_text())) == {}


@pytest.mark.parametrize(
    "text",
    ['model = "x"\nmcp_servers.memcli.command = "mine"\n', '[mcp_servers]\nmemcli = { command = "mine" }\n'],
)
@pytest.mark.skipif(sys.version_info < (3, 11), reason="the check of the whole file needs tomllib")
def test_codex_table_written_another_way_is_left_to_the_user(root, home, text):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    r = add(root, "codex")
    assert r.returncode == 3 and "[mcp_servers.memcli]" in json.loads(r.stdout)["error"]["message"]
    assert config.read_text() == text and not Path(str(config) + ".memcli-backup").exists()


@pytest.mark.parametrize(
    "client, path, text",
    [
        ("claude-code", ".claude/settings.json", '{"hooks": '),
        ("gemini", ".gemini/settings.json", "[1, 2]"),
        ("codex", ".codex/config.toml", "model = \n"),
    ],
)
def test_a_file_memcli_cannot_read_is_left_alone(root, home, client, path, text):
    if path.endswith(".toml") and sys.version_info < (3, 11):
        pytest.skip("reading TOML needs tomllib")
    f = home / path
    f.parent.mkdir(parents=True)
    f.write_text(text)
    r = run_memcli("--root", root, "agents", "add", client)
    assert r.returncode == 3 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert str(f) in r.stderr and "fix it" in r.stderr
    assert f.read_text() == text and sorted(p.name for p in f.parent.iterdir()) == [f.name]


def test_gemini_gets_server_and_hooks_in_one_file(root, home):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    ok(add(root, "gemini"))
    got = json.loads(settings.read_text())
    assert got["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert got["mcpServers"]["memcli"]["args"][-1] == "mcp"
    assert set(memcli_hooks(got)) == {"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"}


def test_any_other_client_gets_the_snippet(root, home):
    data = ok(add(root, "cursor"))
    assert data["snippet"]["command"].endswith(f"--root {os.path.realpath(root)} mcp")
    assert json.loads(data["snippet"]["json"])["mcpServers"]["memcli"]["args"][-1] == "mcp"
    assert not [p for p in home.iterdir() if p.name != ".cache"]  # nothing written (.cache: memcli's plugin list)


def test_remove_takes_out_only_memclis_entries(root, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    settings.write_text(json.dumps(mine))
    ok(add(root, "claude-code"))
    removed = ok(run_memcli("agents", "remove", "claude-code", "--json"))
    assert str(settings) in removed["changed"]
    assert json.loads(settings.read_text()) == mine
    assert "memcli" not in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert ok(run_memcli("agents", "list", "--json"))["agents"] == []


# ---------------------------------------------------------------- doctor


def doctor(cwd=None):
    r = run_memcli("doctor", "--json", cwd=cwd, timeout=300)
    return r.returncode, json.loads(r.stdout)["data"]


def test_doctor_runs_every_hook_and_server_of_every_agent(example_root, home):
    pytest.importorskip("mcp")
    for client in ("claude-code", "codex", "gemini"):
        ok(add(example_root, client))
    code, data = doctor()
    by = {x["agent"]: {c["what"]: c for c in x["checks"]} for x in data["agents"]}
    assert set(by) == {"claude-code", "codex", "gemini"}
    for agent in ("claude-code", "gemini"):
        assert all(c["ok"] for c in by[agent].values()), by[agent]
    assert "the index at session start" in by["claude-code"]["SessionStart"]["said"]
    assert "memory context" in by["claude-code"]["UserPromptSubmit"]["said"]
    assert "records the assistant's reply" in by["gemini"]["AfterAgent"]["said"]
    assert "recall" in by["claude-code"]["MCP server"]["said"]
    # Codex runs hooks only after the user reviewed them: doctor says so, and fails until then
    assert not by["codex"]["hook review"]["ok"] and code == 1
    assert all(c["ok"] for w, c in by["codex"].items() if w != "hook review")
    assert data["roots"] == [
        {"root": os.path.realpath(example_root), "ok": True, "summary": data["roots"][0]["summary"], "said": ""}
    ]
    # the sample events leave nothing behind: no session, no episode
    assert not list((example_root / ".memcli" / "sessions").glob("*.json"))
    assert not (example_root / "memory" / "episodes").exists() or not list(
        (example_root / "memory" / "episodes").glob("*.md")
    )
    human = run_memcli("doctor", timeout=300)
    assert "root " in human.stdout and "heartbeat: " in human.stdout and "FAIL hook review" in human.stdout


def test_doctor_says_what_is_missing_and_runs_no_other_program(root, home, tmp_path):
    ok(add(root, "claude-code"))
    settings = home / ".claude" / "settings.json"
    got = json.loads(settings.read_text())
    del got["hooks"]["Stop"]
    marker = tmp_path / "ran"
    evil = tmp_path / "bin" / "memcli"
    evil.parent.mkdir()
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    evil.chmod(0o755)
    got["hooks"]["SessionEnd"][0]["hooks"][0]["command"] = f"{evil} --root {root} hook claude-code"
    settings.write_text(json.dumps(got))
    code, data = doctor()
    checks = {c["what"]: c for c in data["agents"][0]["checks"]}
    assert code == 1 and not marker.exists()
    assert checks["Stop"]["said"] == "not wired" and "memcli agents add claude-code" in checks["Stop"]["fix"]
    assert "not this memcli" in checks["SessionEnd"]["said"]


def test_doctor_runs_no_other_memcli_command_a_projects_files_name(root, home, tmp_path):
    """A project's files may come from a clone: a memcli entry there that runs another command
    than memcli's server or hook (here `remember`, ending in "mcp" and "hook claude-code") is
    reported and never run."""
    from memcli.usecases.agents import program

    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    prog = program()
    planted = [*prog[1:], "--root", str(root), "remember", "planted", "mcp"]
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memcli": {"command": prog[0], "args": planted}}}))
    hook = {"type": "command", "command": " ".join([*prog, "--root", str(root), "remember", "hooked", HOOK])}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    code, data = doctor(cwd=project)
    assert code == 1 and not list((root / "memory").glob("*.md")), data
    checks = {c["what"]: c for c in data["agents"][0]["checks"]}
    assert "not this memcli" in checks["MCP server"]["said"] and checks["Stop"]["said"] == "not wired"


def test_doctor_with_nothing_wired_says_how(home):
    r = run_memcli("doctor")
    assert r.returncode == 1 and "memcli agents add claude-code" in r.stderr


def test_doctor_reports_a_root_that_is_gone(root, home):
    import shutil

    ok(add(root, "gemini"))
    shutil.rmtree(root)
    code, data = doctor()
    assert code == 1 and not data["roots"][0]["ok"] and "not a memory root" in data["roots"][0]["said"]
    assert not all(c["ok"] for c in data["agents"][0]["checks"])


def test_memcli_as_a_module_is_always_run_isolated(monkeypatch, tmp_path):
    """Without a `memcli` script beside the interpreter the wired command is `python -I -m memcli`
    (a folder holding a memcli/ of its own never runs instead); an entry an older version wrote
    without -I is still memcli's, and doctor runs it isolated."""
    from memcli.usecases import agents, doctor

    monkeypatch.setattr(agents.sys, "executable", str(tmp_path / "python3"))
    argv = agents.program()
    assert argv == [str(tmp_path / "python3"), "-I", "-m", "memcli"]
    monkeypatch.undo()
    wired = [sys.executable, "-I", "-m", "memcli", "--root", "/r", "hook", "claude-code"]
    older = [sys.executable, "-m", "memcli", "--root", "/r", "hook", "claude-code"]
    assert agents.ours(wired) == agents.ours(older) == "/r"
    assert doctor.runnable(wired) == doctor.runnable(older) == wired
