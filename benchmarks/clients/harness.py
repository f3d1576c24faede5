"""Run the real clients against `memcli mcp` (and Claude Code's hook) with every model call going to
the fake APIs on 127.0.0.1 (fakeapi.py), and collect what reached the model.

Each client gets its own HOME under a scratch folder, a dummy key, a loopback base URL and its
documented switches for update checks and telemetry turned off; the proxy variables point at a
closed loopback port (for anything that would still try to go out) with the loopback interface
exempt. tests/test_clients.py (`pytest -m clients`) asserts on what this module collects.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from install import binary

RUN_TIMEOUT = 120  # seconds for one client command; a run normally takes 1-10 s
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, a stray request fails at once
PYTHON = sys.executable  # the interpreter running the check: its memcli is the one tested


def memcli_command(root: Path, *args: str) -> list[str]:
    return [PYTHON, "-m", "memcli", "--root", str(root), *args]


def memcli(env: dict, cwd: Path, *args) -> "Run":
    """memcli itself, in a client's environment (its HOME and client folders)."""
    return run([PYTHON, "-m", "memcli", *args], env, cwd)


@dataclass
class Run:
    """One client command: its exit code and output, and the model requests it made meanwhile."""

    argv: list
    code: int
    stdout: str
    stderr: str
    requests: list = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"`{' '.join(map(str, self.argv[:3]))} …` exit {self.code}\n--- stdout\n{self.stdout[-1500:]}\n"
            f"--- stderr\n{self.stderr[-1500:]}"
        )


def base_env(home: Path) -> dict:
    """An environment with nothing of the caller's but PATH: HOME and the XDG folders in home."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "TMPDIR": str(home / "tmp"),
        # the hook answers each event itself and starts no `memcli serve` that would outlive the check
        # (tests/test_resident.py shows a served hook answers the same)
        "MEMCLI_SERVE": "off",
        "DO_NOT_TRACK": "1",
        "NO_COLOR": "1",
        "CI": "1",
        "HTTP_PROXY": DEAD_PROXY,
        "HTTPS_PROXY": DEAD_PROXY,
        "ALL_PROXY": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "all_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    (home / "tmp").mkdir(exist_ok=True)
    return env


def run(argv: list, env: dict, cwd: Path, api=None, timeout: float = RUN_TIMEOUT) -> Run:
    before = len(api.requests) if api is not None else 0
    try:
        p = subprocess.run(
            [str(a) for a in argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = -1, _text(e.stdout), _text(e.stderr) + f"\n(timed out after {timeout} s)"
    return Run(list(argv), code, out, err, api.requests[before:] if api is not None else [])


def _text(b) -> str:
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")


# ---------------------------------------------------------------- Claude Code


def connected(log: Path) -> bool:
    """Claude Code's debug log says memcli's server connected."""
    return log.exists() and 'MCP server "memcli": Successfully connected' in log.read_text(errors="replace")


class ClaudeCode:
    """Claude Code with memcli wired by `memcli agents add claude-code` (the server in ~/.claude.json,
    the hooks in ~/.claude/settings.json), as README.md says."""

    def __init__(self, where: Path, home: Path, root: Path, api):
        self.bin, self.home, self.root, self.api = binary(where, "claude"), home, root, api
        self.env = base_env(home)
        self.env.update(
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-ant-dummy-key",
            # documented: turns off auto-update, telemetry, error reporting and /bug together
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            # list MCP tools with their schemas (the default defers them behind ToolSearch)
            ENABLE_TOOL_SEARCH="false",
            # documented: how long an MCP server may take to start (a loaded machine is slow)
            MCP_TIMEOUT="60000",
        )

    def setup(self, cwd: Path) -> Run:
        return memcli(self.env, cwd, "--root", self.root, "agents", "add", "claude-code")

    def __call__(self, *args, cwd: Path) -> Run:
        return run([self.bin, *args], self.env, cwd, self.api)

    def ask(self, prompt: str, *args, cwd: Path, timeout: float = RUN_TIMEOUT) -> Run:
        """`claude -p` with the prompt sent once memcli's server is connected. In print mode Claude
        Code sends the first request without waiting for MCP servers, so a prompt given on the command
        line races the server's start-up; the prompt goes in on stdin (stream-json) when Claude
        Code's debug log says the server connected."""
        self.asked = getattr(self, "asked", 0) + 1
        log = self.home / f"claude-debug-{self.asked}.log"
        argv = [
            self.bin,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--debug-file",
            str(log),
            *args,
        ]
        before = len(self.api.requests)
        p = subprocess.Popen(
            argv,
            env=self.env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline and p.poll() is None:
                if connected(log):
                    break
                time.sleep(0.1)
            message = {"type": "user", "message": {"role": "user", "content": prompt}}
            out, err = p.communicate(
                json.dumps(message, ensure_ascii=False) + "\n", timeout=max(deadline - time.monotonic(), 1)
            )
            code = p.returncode
        except (subprocess.TimeoutExpired, BrokenPipeError):
            p.kill()
            out, err = p.communicate()
            code, err = -1, err + f"\n(timed out after {timeout} s)"
        if not connected(log):
            err += f"\n(memcli's MCP server never connected; see {log})"
        return Run(argv, code, out, err, self.api.requests[before:])


# ---------------------------------------------------------------- Codex


class Codex:
    """Codex CLI with a model provider on the fake Responses API, and memcli wired by `memcli agents
    add codex` (the server in config.toml, marked `required`: without it Codex sends the first model
    request without waiting for the server to start; the hooks in hooks.json)."""

    def __init__(self, where: Path, home: Path, root: Path, api):
        self.bin, self.home, self.root, self.api = binary(where, "codex"), home, root, api
        self.env = base_env(home)
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        self.env.update(CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-dummy-key")
        (codex_home / "config.toml").write_text(f'''model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "{api.url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
''')

    def setup(self, cwd: Path) -> Run:
        return memcli(self.env, cwd, "--root", self.root, "agents", "add", "codex")

    def review_hooks(self, cwd: Path) -> list:
        """What accepting the hooks in Codex's review records: each hook's key and current hash (as
        its app server's hooks/list gives them) under [hooks.state] in config.toml. Returns the hooks."""
        p = subprocess.Popen(
            [self.bin, "app-server"],
            env=self.env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        hello = {"clientInfo": {"name": "memcli-check", "version": "1"}}
        try:
            for m in (
                {"id": 1, "method": "initialize", "params": hello},
                {"method": "initialized"},
                {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
            ):
                p.stdin.write(json.dumps({"jsonrpc": "2.0", **m}) + "\n")
                p.stdin.flush()
                while "id" in m:
                    answer = json.loads(p.stdout.readline())
                    if answer.get("id") == m["id"]:
                        break
        finally:
            p.kill()
            p.communicate()
        hooks = [h for entry in answer["result"]["data"] for h in entry["hooks"]]
        with open(self.home / ".codex" / "config.toml", "a") as f:
            for h in hooks:
                f.write(f"\n[hooks.state.{json.dumps(h['key'])}]\ntrusted_hash = {json.dumps(h['currentHash'])}\n")
        return hooks

    def __call__(self, *args, cwd: Path) -> Run:
        return run([self.bin, *args], self.env, cwd, self.api)


# ---------------------------------------------------------------- Gemini CLI


class Gemini:
    """Gemini CLI with an API key, its base URL on the fake Gemini API and memcli in settings.json."""

    MODEL = "gemini-2.5-flash"  # named, so no routing call goes first

    def __init__(self, where: Path, home: Path, root: Path, api):
        self.bin, self.home, self.root, self.api = binary(where, "gemini"), home, root, api
        self.env = base_env(home)
        self.env.update(
            GEMINI_CLI_HOME=str(home),
            GEMINI_API_KEY="dummy-key",
            GOOGLE_GEMINI_BASE_URL=api.url,
            GEMINI_TELEMETRY_ENABLED="false",
        )
        command = memcli_command(root, "mcp")
        settings = {
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            # timeout: a loaded machine starts the server slower than `gemini mcp list` waits by default
            "mcpServers": {"memcli": {"command": command[0], "args": command[1:], "timeout": 60000}},
        }
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))

    def setup(self, cwd: Path) -> Run:
        """`memcli agents add gemini`: the server (the timeout above kept) and the hooks in settings.json."""
        return memcli(self.env, cwd, "--root", self.root, "agents", "add", "gemini")

    def trust(self, folder: Path) -> None:
        """What the trust dialog records: the folder in ~/.gemini/trustedFolders.json."""
        (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(folder): "TRUST_FOLDER"}))

    def __call__(self, *args, cwd: Path) -> Run:
        return run([self.bin, *args], self.env, cwd, self.api)


# ---------------------------------------------------------------- MCP Inspector (CLI mode)


class Inspector:
    """The Inspector's CLI mode on the stdio command `memcli agents add` gives any other MCP client."""

    def __init__(self, where: Path, home: Path, root: Path):
        self.bin, self.root = binary(where, "mcp-inspector"), root
        self.env = base_env(home)
        snippet = json.loads(memcli(self.env, home, "--root", root, "agents", "add", "mcp-inspector", "--json").stdout)
        self.server = shlex.split(snippet["data"]["snippet"]["command"])

    def __call__(self, *args, cwd: Path) -> Run:
        return run([self.bin, "--cli", *self.server, *args], self.env, cwd)


# ---------------------------------------------------------------- what reached the model


def anthropic_tool_results(requests: list) -> list[dict]:
    """The tool_result blocks of the last Messages request, in order."""
    msgs = requests[-1]["body"]["messages"] if requests else []
    return [
        b for m in msgs if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_result"
    ]


def openai_tool_outputs(requests: list) -> list[str]:
    items = requests[-1]["body"]["input"] if requests else []
    return [
        i.get("output", "") if isinstance(i.get("output"), str) else json.dumps(i.get("output"))
        for i in items
        if i.get("type") == "function_call_output"
    ]


def gemini_tool_responses(requests: list) -> list[dict]:
    contents = requests[-1]["body"]["contents"] if requests else []
    return [p["functionResponse"] for c in contents for p in c.get("parts", []) if "functionResponse" in p]


def text_of(value) -> str:
    """Everything a block holds, as one string (tool results are strings or lists of blocks)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
