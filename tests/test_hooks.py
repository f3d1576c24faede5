"""`memcli hook claude-code` fed the JSON Claude Code's UserPromptSubmit hook sends, in real processes."""

import json
import subprocess
import sys

import pytest

from tests.conftest import run_memcli

SESSION = "9f1c2d4e-6b7a-4c3e-9d2f-1a2b3c4d5e6f"


def payload(prompt, cwd, **over):
    data = {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{SESSION}.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    data.update(over)
    return json.dumps(data, ensure_ascii=False)


def hook(stdin, *args, env=None, cwd=None):
    return run_memcli(*args, "hook", "claude-code", input=stdin, env=env, cwd=cwd)


def session(root, name=SESSION):
    r = run_memcli("--root", root, "--session", name, "session", "show", "--json")
    return json.loads(r.stdout)["data"]


@pytest.fixture
def project(example_root):
    """A project folder inside the memory root, where Claude Code runs; the root is one the user
    allowed the hook to use."""
    p = example_root / "src" / "shop"
    p.mkdir(parents=True)
    assert run_memcli("hook", "allow", example_root).returncode == 0
    return p


def test_prompt_needing_memory_gets_context_and_is_recorded(example_root, project):
    r = hook(payload("上次那个 MySQL charset 乱码是怎么修的?", project), cwd=project)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("<!-- memcli context.") and "memory/mysql-charset.md" in r.stdout
    assert "```memory-data" in r.stdout and r.stderr == ""
    turns = session(example_root)["turns"]
    assert [(t["role"], t["text"]) for t in turns] == [("user", "上次那个 MySQL charset 乱码是怎么修的?")]


def test_budget_bounds_the_context(example_root, project):
    text = payload("上次那个 MySQL charset 乱码是怎么修的?", project)
    full = hook(text, cwd=project).stdout
    small = run_memcli("hook", "claude-code", "--budget", "200", input=text, cwd=project)
    assert small.returncode == 0 and small.stdout.startswith("<!-- memcli context.") and len(small.stdout) < len(full)
    bad = run_memcli("hook", "claude-code", "--budget", "10", input=text, cwd=project)
    assert bad.returncode == 0 and bad.stdout == "" and "--budget must be at least 50" in bad.stderr


def test_prompt_without_signals_prints_nothing_but_is_recorded(example_root, project):
    r = hook(payload("write a haiku about the sea", project), cwd=project)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert session(example_root)["turns"][0]["text"] == "write a haiku about the sea"


def test_turns_beyond_max_rounds_fold_into_the_summary(example_root, project):
    for i in range(7):
        assert hook(payload(f"step {i}: add the checkout page.", project), cwd=project).returncode == 0
    data = session(example_root)
    assert len(data["turns"]) == 5 and data["folded"] == 2 and "step 0" in data["summary"]


@pytest.mark.parametrize(
    "stdin", ["", "not json", "[1, 2]", json.dumps({"session_id": "x"}), json.dumps({"prompt": 5})]
)
def test_broken_input_is_a_non_blocking_error(example_root, project, stdin):
    r = hook(stdin, cwd=project)
    assert r.returncode == 1 and r.stdout == ""  # exit 2 would block the user's prompt
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("memcli hook: ")
    assert not (example_root / ".memcli/sessions").exists() or not list((example_root / ".memcli/sessions").iterdir())


def test_non_utf8_input_is_a_non_blocking_error(project):
    r = subprocess.run(
        [sys.executable, "-m", "memcli", "hook", "claude-code"],
        input=b"\xff\xfe{",
        cwd=project,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 1 and r.stdout == b"" and b"not UTF-8" in r.stderr


def test_outside_any_root_does_nothing(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = hook(payload("上次那个方案", elsewhere), cwd=elsewhere)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert not (elsewhere / ".memcli").exists()


def test_root_from_the_environment_and_the_option(example_root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    by_env = hook(
        payload("remember the staging deploy steps?", elsewhere), env={"MEMCLI_ROOT": str(example_root)}, cwd=elsewhere
    )
    by_opt = hook(payload("remember the staging deploy steps?", elsewhere), "--root", example_root, cwd=elsewhere)
    for r in (by_env, by_opt):
        assert r.returncode == 0 and "memory/staging-deploy.md" in r.stdout
    assert len(session(example_root)["turns"]) == 2


def test_damaged_session_file_is_set_aside_and_the_prompt_still_gets_memory(example_root, project):
    sessions = example_root / ".memcli" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{SESSION}.json").write_text("{ broken")
    r = hook(payload("continue with the mysql charset fix", project), cwd=project)
    assert r.returncode == 0 and "memory/mysql-charset.md" in r.stdout
    aside = [p for p in sessions.iterdir() if p.name.startswith(f"{SESSION}.json.broken-")]
    assert len(aside) == 1 and aside[0].read_text() == "{ broken" and aside[0].name in r.stderr
    assert "continue with the mysql charset fix" in (sessions / f"{SESSION}.json").read_text()


def test_other_events_and_blank_prompts_are_ignored(example_root, project):
    r = hook(payload("x", project, hook_event_name="PreToolUse"), cwd=project)
    assert r.returncode == 0 and r.stdout == "" and "UserPromptSubmit" in r.stderr
    r = hook(payload("   ", project), cwd=project)
    assert (r.returncode, r.stdout) == (0, "")
    assert not (example_root / ".memcli/sessions").exists() or not list((example_root / ".memcli/sessions").iterdir())


def test_odd_session_ids_become_safe_session_names(example_root, project):
    r = hook(payload("hello there", project, session_id="../../etc/passwd"), cwd=project)
    assert r.returncode == 0
    assert [p.name for p in (example_root / ".memcli/sessions").iterdir()] == ["etc-passwd.json"]


def test_without_a_session_id_the_agent_session_then_memcli_session_then_default(example_root, project, monkeypatch):
    """The precedence the MCP tools use too: the event's session id, CLAUDE_CODE_SESSION_ID,
    MEMCLI_SESSION, 'default'."""
    from tests.conftest import invoke

    sessions = example_root / ".memcli" / "sessions"

    def recorded(env):
        for k in ("CLAUDE_CODE_SESSION_ID", "MEMCLI_SESSION"):
            monkeypatch.delenv(k, raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        before = set(sessions.iterdir()) if sessions.exists() else set()
        assert invoke(["hook", "claude-code"], input=payload("hello there", project, session_id="")).exit_code == 0
        return sorted(p.name for p in set(sessions.iterdir()) - before)

    monkeypatch.chdir(project)
    assert recorded({"CLAUDE_CODE_SESSION_ID": "cc-42", "MEMCLI_SESSION": "chat-1"}) == ["cc-42.json"]
    assert recorded({"MEMCLI_SESSION": "chat-1"}) == ["chat-1.json"]
    assert recorded({}) == ["default.json"]


def test_the_command_and_the_typer_command_agree(example_root, project):
    from typer.testing import CliRunner

    from memcli.cli.typer_app import app

    text = payload("previously we fixed the mysql charset, what was it?", project)
    fast = hook(text, "--root", example_root, "--session", "unused")
    slow = CliRunner().invoke(app, ["--root", str(example_root), "hook", "claude-code"], input=text)
    assert fast.returncode == slow.exit_code == 0
    assert fast.stdout.split("## Session")[0].rstrip() == slow.stdout.split("## Session")[0].rstrip()
    assert "memory/mysql-charset.md" in fast.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["hook", "claude"],
        ["hook", "claude-code", "--bogus"],
        ["hook"],
        ["hook", "claude-code", "--budget", "lots"],
        ["hook", "claude-code", "extra"],
    ],
)
def test_wrong_hook_arguments_never_block_the_prompt(example_root, project, args):
    r = run_memcli(*args, input=payload("上次那个方案", project), cwd=project)
    assert r.returncode == 1 and r.stdout == ""  # exit 2 would block the user's prompt
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("memcli hook: ")


def test_hook_help_comes_from_the_typer_app():
    r = run_memcli("hook", "claude-code", "--help")
    assert r.returncode == 0 and "UserPromptSubmit" in r.stdout and "Example: " in r.stdout


def test_global_options_before_hook(example_root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_memcli("--root", example_root, "--scope", "shop", "scope", "start", "checkout page")
    run_memcli("--root", example_root, "--scope", "shop", "scope", "set", "plan", "ship friday", "--agent", "A")
    r = run_memcli(
        f"--root={example_root}",
        "--scope",
        "shop",
        "hook",
        "claude-code",
        "-b",
        "1500",
        input=payload("上次那个 checkout 的方案?", elsewhere),
        cwd=elsewhere,
    )
    assert r.returncode == 0 and "## Scope `shop`" in r.stdout and "ship friday" in r.stdout
