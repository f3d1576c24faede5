"""README and docs examples run: the Quick start's main job, the shell-scripted agent loop, the
Python API example, the git set-up, and the agent set-up lines agree with the guide's."""

import os
import re
import subprocess
import sys

from tests.conftest import GIT_ENV, ROOT_DIR, child_env

README = (ROOT_DIR / "README.md").read_text(encoding="utf-8")


def page(rel: str) -> str:
    return (ROOT_DIR / rel).read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    """The text under `## title` (or `### title`, or the page's `# title`) up to the next heading
    of that level, headings inside fenced blocks (an example output) aside."""
    if text.startswith(f"# {title}\n"):
        return text.split("\n", 1)[1]
    level = "### " if f"\n### {title}\n" in text else "## "
    lines = text.split(f"\n{level}{title}\n", 1)[1].split("\n")
    fenced = False
    for n, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (line.startswith("## ") or line.startswith(level)):
            return "\n".join(lines[:n])
    return "\n".join(lines)


def blocks(title: str, text: str = README, lang: str = "sh") -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section(title, text), re.S)


def loop_blocks() -> list[str]:
    """The shell-scripted agent loop, as the guide prints it."""
    return blocks("A shell-scripted agent loop", page("docs/guide/agent-loop.md"))


def shim(tmp_path):
    """A `memcli` on PATH that runs this checkout with this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "memcli"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH={ROOT_DIR} exec {sys.executable} -m memcli "$@"\n')
    exe.chmod(0o755)
    env = child_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def test_quick_start_has_exactly_two_commands():
    cmds = blocks("Quick start")
    assert len(cmds) == 2 and all(c.strip().count("\n") == 0 for c in cmds)
    assert "pytest" in cmds[1] and "[test]" in cmds[1]
    assert cmds[0].rstrip().split("&& ")[-1].split()[2:4] == ["demo", "recall"]


def test_quick_start_main_job_runs(tmp_path):
    first = blocks("Quick start")[0].strip()
    steps = [s.strip() for s in first.split("&&") if "memcli" in s and "pip" not in s]
    script = " && ".join(s.replace(".venv/bin/memcli", "memcli") for s in steps)
    r = subprocess.run(
        ["sh", "-c", script], cwd=tmp_path, env=shim(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    root_line, recalled = r.stdout.split("\n", 1)
    assert root_line.endswith("demo") and recalled.startswith("## MySQL charset double encoding")


def test_agent_loop_runs(tmp_path, example_root):
    loop = loop_blocks()[0]
    env = shim(tmp_path)
    env.update(MEMCLI_ROOT=str(example_root), HOME=str(tmp_path))
    script = "my_llm() { tail -n 1 | sed 's/^/echo: /'; }\n" + loop.replace(
        "export MEMCLI_ROOT=~/agent-memory ", "export "
    ).replace("my-llm", "my_llm")
    r = subprocess.run(
        ["bash", "-c", script],
        input="还记得上次 charset 的坑吗\nwrite a haiku\n",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    session = (example_root / ".memcli" / "sessions" / "chat-42.json").read_text()
    assert "charset" in session and "echo: write a haiku" in session
    scope = (example_root / ".memcli" / "scopes" / "article-7.json").read_text()
    assert "draft" in scope


def test_python_api_example_runs(tmp_path):
    """The Python API block runs as written, in a fresh folder, and prints what it says."""
    code = blocks("Python API", page("docs/python-api.md"), "python")[0]
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**child_env(), "PYTHONPATH": str(ROOT_DIR)},
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "utf8mb4 on the connection and the server"
    assert lines[1] == "['mysql-charset-double-encoding']"
    assert lines[2] == "mysql-charset-double-encoding index"
    assert lines[3] == "explicit"
    assert lines[4] == "first draft"
    assert lines[5].startswith("{'error': 0, 'warning': ")
    assert lines[6] == "[]"
    assert not (tmp_path / "notes" / "memory" / "mysql-charset-double-encoding.md").exists()
    assert "部署到测试环境" in (tmp_path / "notes" / ".memcli" / "sessions" / "chat-42.json").read_text()
    assert "first draft" in "".join(p.read_text() for p in (tmp_path / "notes" / "memory" / "episodes").iterdir())


def test_sharing_through_git_set_up_runs(tmp_path):
    """The two set-up lines: a new root published to an origin, then a clone made ready."""
    setup = blocks("Sharing a memory through git", page("docs/guide/git.md"))[0]
    first, second = setup.strip().splitlines()
    bare = tmp_path / "origin.git"
    env = shim(tmp_path)
    env.update(GIT_ENV)
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, env=env)
    for line, machine in ((first, "laptop"), (second, "server")):
        where = tmp_path / machine
        where.mkdir()
        r = subprocess.run(
            ["sh", "-c", line.replace("host:notes.git", str(bare))],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, (line, r.stderr)
    clone = tmp_path / "server" / "notes"
    assert (clone / "MEMORY.md").is_file() and (clone / ".gitattributes").is_file()
    driver = subprocess.run(
        ["git", "config", "merge.memcli-detail.driver"], cwd=clone, env=env, capture_output=True, text=True
    ).stdout
    assert "memcli.gitmerge detail" in driver


def test_the_agents_hook_uses_the_mcp_servers_root():
    """The guide's Claude Code set-up works as written: the hook names the same root as the MCP
    server, so a prompt from any project reaches that memory (without it the hook only looks
    above the prompt's folder)."""
    import json

    part = section("Agents: MCP and hooks", page("docs/guide/agents.md"))
    hook = json.loads(re.search(r"```json\n(\{\"hooks\".*?)\n```", part, re.S).group(1))
    command = hook["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    add = re.search(r"```sh\n(claude mcp add .*?)\n```", part, re.S).group(1)
    root = re.search(r"--root (\S+) mcp", add).group(1)
    assert command == f"memcli --root {root} hook claude-code"


def test_the_readmes_agent_lines_are_the_guides():
    """README's one command per client names each agent `agents add` wires (tests/test_agents.py and
    `pytest -m clients` run them), then `memcli doctor`; the guide shows the same command."""
    from memcli.usecases.agents import CLIENTS

    block = re.search(r"```sh\n(.*?)\n```", section("Agents"), re.S).group(1)
    assert re.findall(r"^memcli --root ~/notes agents add (\S+)", block, re.M) == list(CLIENTS)
    assert re.search(r"^memcli doctor", block, re.M)
    assert "memcli --root ~/notes agents add claude-code" in page("docs/guide/agents.md")


def test_the_test_time_readme_states_is_checked(monkeypatch):
    """`.ci/run` runs the test command through `.ci/suite_time.py`, which reads the CPU time the
    Quick start states and fails when the run takes more than twice that."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("suite_time", ROOT_DIR / ".ci" / "suite_time.py")
    suite_time = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite_time)
    assert suite_time.stated() > 0
    assert re.search(r"\d+ min \d+ s\s+and [\d,]+ CPU-seconds \(load average", section("Quick start"))
    busy = [sys.executable, "-c", "sum(range(3_000_000))"]
    monkeypatch.setattr(suite_time, "stated", lambda: 1e9)
    assert suite_time.main(busy) == 0
    monkeypatch.setattr(suite_time, "stated", lambda: 1e-9)
    assert suite_time.main(busy) == 1
    assert suite_time.main([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert ".ci/suite_time.py .venv/bin/python -m pytest" in (ROOT_DIR / ".ci" / "run").read_text()
