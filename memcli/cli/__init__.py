"""The command line. `main` answers the hot commands (--version, recall, should-recall, remember,
scope set, session add, and the agent hook) without loading Typer; everything else goes to the
Typer app, and both call the same actions through the same error boundary. One parser reads the
words of the hot commands (``argv``), over one table checked against the Typer app."""

from __future__ import annotations

import os
import sys

from . import argv

_HOOK_ROOTS = ("allow", "deny", "list")  # `memcli hook allow PATH` …: the roots the hook may use


def _fast(line: argv.Line) -> int | None:
    """Run a hot command read by the parser; None hands the call to Typer (help, errors, every
    other command), which then says what is wrong the way it says it for every command."""
    if line.words is None or line.help or line.error is not None or line.words[0] == "hook":
        return None
    from . import boundary as b

    values = dict(line.values)
    as_json = line.value("json_") or values.pop("json_", False)
    command = " ".join(line.words)
    st = b.State(line.value("root") or None, as_json, line.value("session") or None, line.value("scope") or None)
    return b.execute(command, as_json, lambda: b.HOT[command](st, **values))


def _hook(args: list, line: argv.Line) -> int | None:
    """`memcli [--root R] [--scope S] hook AGENT ...` runs without Typer: an agent runs it before
    every prompt, and nothing may exit 2 there (Claude Code blocks the prompt on 2): a wrong word
    anywhere on the line is one line on stderr and exit 1. Help, and `hook allow|deny|list`
    (not per prompt), go to Typer."""
    if line.words is not None and line.words[0] != "hook":
        return None
    at = _hook_word(args)
    if at is None:
        return None
    after = args[at + 1:]
    if after[:1] and after[0] in _HOOK_ROOTS or _help(line, at, after):
        return None
    from ..hooks import run

    if line.words is None and (at != line.at or line.error is not None):
        # the global options could not be read up to `hook`: still never exit 2
        error = line.error or f"'hook' was read as the value of {args[at - 1]}"
        return run([], error=error, as_json="--json" in args[:at])
    return run(after, root=line.value("root"), scope=line.value("scope"), as_json=line.value("json_"))


def _help(line: argv.Line, at: int, after: list) -> bool:
    """Whether Typer would print a help for this hook line (and nothing else would stop it)."""
    if line.error is not None:
        return False
    if line.help and (line.words is not None or line.at <= at):  # `memcli -h ...`, `hook claude-code -h`
        return True
    lead = []
    for a in after:  # `hook -h`: the hook group's own options, up to its command
        if not a.startswith("-") or a in ("-", "--"):
            break
        lead.append(a)
    return line.words is None and line.at == at and bool(lead) and all(a in argv.HELP for a in lead)


def _hook_word(args: list) -> int | None:
    """Where `hook` stands when the words before it are global options and their values."""
    value_next = False
    for i, a in enumerate(args):
        if a == "hook":
            return i
        if a == "--":  # the end of the options: the command comes next
            return i + 1 if args[i + 1:i + 2] == ["hook"] else None
        if a.startswith("-") and a != "-":
            value_next = a in argv.GLOBAL and argv.GLOBAL[a][1] is not bool
        elif value_next:
            value_next = False
        else:
            return None
    return None


def _version(line: argv.Line) -> None:
    from .. import __version__

    if line.value("json_"):
        from ..render import envelope

        sys.stdout.write(envelope("version", True, {"version": __version__}) + "\n")
    else:
        sys.stdout.write(f"memcli {__version__}\n")


def main(args: list | None = None) -> None:
    args = sys.argv[1:] if args is None else list(args)
    line = argv.parse(args)
    code = None
    if line.value("version") and line.error is None and not line.help:
        _version(line)  # as Click does: --version among the global options wins over what follows
        sys.stdout.flush()
        return
    if "_MEMCLI_COMPLETE" not in os.environ:  # shell completion goes through Typer
        code = _hook(args, line)
        if code is None:
            code = _fast(line)
    if code is None:
        from .app import command
        from .boundary import run_app

        code = run_app(command(), args)
    sys.stdout.flush()
    sys.exit(code)
