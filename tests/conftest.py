import io
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from memcli.cli import main
from memcli.usecases.init import init_root

ROOT_DIR = Path(__file__).resolve().parent.parent

# Hypothesis profiles. "quick", the default, tries a tenth of the examples each property asks
# for; "full" tries them all: under `pytest -m stress` (which then also selects every property
# test) or with CI_FULL=1. A property states its full count with `examples(N)`.
FULL_EXAMPLES = 100
settings.register_profile("full", max_examples=FULL_EXAMPLES, deadline=None)
settings.register_profile("quick", max_examples=FULL_EXAMPLES // 10, deadline=None)


def examples(full: int) -> int:
    """The examples a property gets under the loaded profile: `full` under "full", a tenth
    (at least 5) under "quick"."""
    scale = settings().max_examples / FULL_EXAMPLES
    return full if scale >= 1 else max(5, round(full * scale))


def _stress_run(config) -> bool:
    expr = config.getoption("markexpr") or ""
    return bool(re.search(r"\bstress\b", expr)) and not re.search(r"\bnot\s+stress\b", expr)


def pytest_configure(config):
    # No command started by a fixture of any scope asks or starts a `memcli serve` (isolated_env
    # says it again for each test): a test that wants one says so.
    os.environ["MEMCLI_SERVE"] = "off"
    if config.getoption("hypothesis_profile", None):  # --hypothesis-profile NAME chose one
        return
    full = os.environ.get("CI_FULL", "") not in ("", "0") or _stress_run(config)
    settings.load_profile("full" if full else "quick")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """`-m stress` runs the property tests too, with the full profile's examples."""
    if _stress_run(config):
        from hypothesis import is_hypothesis_test

        for item in items:
            if is_hypothesis_test(getattr(item, "obj", None)):
                item.add_marker(pytest.mark.stress)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Every test: its own HOME (and so its own user configuration, trust records and hook
    roots) and working folder, no MEMCLI_*, editor or XDG folder from outside."""
    for k in list(os.environ):
        if k.startswith("MEMCLI_") or k in ("EDITOR", "VISUAL", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
            monkeypatch.delenv(k, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    import shutil
    import tempfile

    runtime = tempfile.mkdtemp(prefix="memcli-rt-")  # short: a unix socket's path has ~100 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    # No command asks a `memcli serve`, and the hook starts none: a test that wants one says so
    # (MEMCLI_SERVE unset or "manual"), so each test knows which process answered.
    monkeypatch.setenv("MEMCLI_SERVE", "off")
    yield
    shutil.rmtree(runtime, ignore_errors=True)


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr as they were interleaved


class _Stream(io.TextIOWrapper):
    """A piped (not a terminal) UTF-8 stream that also records into a shared transcript."""

    def __init__(self, transcript: list):
        super().__init__(io.BytesIO(), encoding="utf-8", write_through=True)
        self.transcript = transcript

    def write(self, s):
        n = super().write(s)  # a text stream refuses bytes (Click probes with b"") before recording
        self.transcript.append(s)
        return n

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")


def invoke(argv, input=None) -> Result:
    """`memcli ARGV` in this process, through `memcli.cli.main`: the fast path for the per-turn
    commands, the Typer app for the rest; stdin from `input`, stdout and stderr captured."""
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    transcript: list = []
    out, err = _Stream(transcript), _Stream(transcript)
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"), out, err
    code = 0
    try:
        main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, out.text(), err.text(), "".join(transcript))


class Cli:
    """The CLI in-process, with --root of one memory root."""

    def __init__(self, root: Path | None):
        self.root = root

    def __call__(self, *args, input=None, root=True):
        argv = (["--root", str(self.root)] if root and self.root else []) + [str(a) for a in args]
        return invoke(argv, input=input)

    def json(self, *args, input=None, code=None):
        res = self(*args, "--json", input=input)
        if code is not None:
            assert res.exit_code == code, res.output
        return json.loads(res.stdout)


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "mem"
    init_root(r)
    return r


@pytest.fixture
def cli(root):
    return Cli(root)


@pytest.fixture(scope="session")
def _example_template(tmp_path_factory):
    r = tmp_path_factory.mktemp("example") / "ex"
    init_root(r, example=True)
    return r


@pytest.fixture
def example_root(tmp_path, _example_template):
    """A root holding the example memories (`memcli init --example`, made once and copied)."""
    import shutil

    r = tmp_path / "ex"
    shutil.copytree(_example_template, r, symlinks=True)
    return r


def child_env() -> dict:
    """The environment of a process a test starts: this one's without MEMCLI_* (but MEMCLI_SERVE,
    which says whether it may ask a `memcli serve`)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_") or k == "MEMCLI_SERVE"}


def on_terminal(args, answer: bytes = b"", env=None, cols=100, cwd=None) -> tuple[int, str]:
    """memcli with stdin, stdout and stderr on a pseudo-terminal `cols` wide, `answer` typed once it
    asks (a "?" shown): (exit code, what the terminal showed, escape sequences removed)."""
    import fcntl
    import select
    import struct
    import termios
    import time

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    e = child_env()
    e.update(TERM="xterm-256color", COLUMNS=str(cols), **(env or {}))
    p = subprocess.Popen(
        [sys.executable, "-m", "memcli", *map(str, args)], stdin=slave, stdout=slave, stderr=slave, env=e, cwd=cwd
    )
    os.close(slave)
    got, sent = b"", not answer
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
            if not sent and b"?" in got:
                os.write(master, answer)
                sent = True
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    return p.returncode, re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", got).decode("utf-8", "replace")


def run_memcli(*args, input=None, env=None, cwd=None, timeout=60):
    """A real process, for what in-process calls cannot show (stdin pipes, exit codes, concurrency)."""
    e = child_env()
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "memcli", *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        env=e,
        cwd=cwd,
        timeout=timeout,
    )


def start_server(root, *extra, env=None):
    """`memcli --root ROOT serve` in its own process, listening when this returns. It imports the
    memcli that ``run_memcli`` runs (the installed one: a test works in a folder of its own), since
    a server answers only a client of the same memcli."""
    e = dict(os.environ, **(env or {}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(root), "serve", *extra],
        env=e,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    assert "serving" in line, line + proc.stderr.read()
    return proc


def stop_server(proc):
    """Stop a server started by ``start_server`` (SIGTERM); its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    return proc.wait(15)


_PROBE = """
import json, sys
from memcli.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_modules(*args, input=None, env=None, cwd=None, full=False):
    """A command line run in a fresh interpreter: (its process, the modules it imported: top-level
    names, or with ``full`` every dotted name)."""
    e = child_env()
    e.update(env or {})
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        env=e,
        cwd=cwd,
        timeout=60,
    )
    mods = json.loads(r.stderr.strip().splitlines()[-1])
    return r, set(mods if full else (m.split(".")[0] for m in mods))


# Real git, with no system configuration and a fixed author.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def git(cwd, *args, check=True):
    """git in cwd under GIT_ENV; the process (asserted to succeed unless ``check`` is false)."""
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert not check or p.returncode == 0, p.stderr
    return p


@pytest.fixture
def git_env(monkeypatch):
    """GIT_ENV in this process's environment (for git run by memcli in this process)."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


def shared_origin(tmp_path, mc, seed=None):
    """A bare origin that a root made with `init --git` pushed to (``seed(root)`` first writes what it
    should hold), and a function that clones it: clone(name, setup=True) -> a git-ready root.
    ``mc(root, *args)`` runs memcli (in this process or as a real one)."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    root = tmp_path / "seed"
    mc(tmp_path, "init", root, "--git")
    git(root, "remote", "add", "origin", str(bare))
    if seed:
        seed(root)
    mc(root, "sync")

    def clone(name, setup=True):
        path = tmp_path / name
        git(tmp_path, "clone", "-q", str(bare), str(path))
        if setup:
            mc(path, "git", "setup")
        return path

    return clone
