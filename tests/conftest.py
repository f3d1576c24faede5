import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.cli.app import app

ROOT_DIR = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Every test: its own HOME and working folder, no MEMCLI_* or editor from outside."""
    for k in list(os.environ):
        if k.startswith("MEMCLI_") or k in ("EDITOR", "VISUAL"):
            monkeypatch.delenv(k, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield


class Cli:
    """The CLI in-process. The Click command is built once: Typer rebuilds it on every invoke."""

    command = None

    def __init__(self, root: Path | None):
        self.root = root
        self.runner = CliRunner()
        if Cli.command is None:
            import typer.main

            Cli.command = typer.main.get_command(app)

    def __call__(self, *args, input=None, root=True):
        argv = (["--root", str(self.root)] if root and self.root else []) + [str(a) for a in args]
        return super(CliRunner, self.runner).invoke(Cli.command, argv, input=input, catch_exceptions=False)

    def json(self, *args, input=None, code=None):
        res = self(*args, "--json", input=input)
        if code is not None:
            assert res.exit_code == code, res.output
        return json.loads(res.stdout)


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "mem"
    res = CliRunner().invoke(app, ["init", str(r)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return r


@pytest.fixture
def cli(root):
    return Cli(root)


@pytest.fixture
def example_root(tmp_path):
    r = tmp_path / "ex"
    res = CliRunner().invoke(app, ["init", str(r), "--example"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return r


def run_memcli(*args, input=None, env=None, cwd=None, timeout=60):
    """A real process, for what CliRunner cannot show (stdin pipes, exit codes, concurrency)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "memcli", *map(str, args)], input=input, capture_output=True,
                          text=True, env=e, cwd=cwd, timeout=timeout)
