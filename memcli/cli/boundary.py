"""What one run of a command line is given (``Call``: its output, stdin, environment and working
folder as values; a cold process gives its own, `memcli serve` its client's), and the one error
boundary every command goes through (``execute``, and ``run_app`` for Click's own errors)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, Optional

from .. import render as r
from ..errors import MemcliError


Admit = Optional[Callable[[str, Callable[[], Optional[str]]], None]]  # a server's check of (command, root)


class Call:
    """What one run of a command line is given; ``admit``: a server's check before the command acts."""

    __slots__ = ("out", "stdin", "env", "cwd", "admit", "json")

    def __init__(
        self, out: r.Output, stdin: Callable[[], bytes], env: Mapping[str, str], cwd: str, admit: Admit = None
    ):
        self.out, self.stdin, self.env, self.cwd, self.admit, self.json = out, stdin, env, cwd, admit, False

    @classmethod
    def here(cls, stdin: bytes | None = None) -> Call:
        """This process's own streams, environment and working folder (``stdin``: what was read of it)."""
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = "/"
        return cls(r.Output(sys.stdout, sys.stderr), _Stdin(stdin), os.environ, cwd)

    def path(self, name: str) -> str:
        """A path given on the command line, as the caller's working folder and home make it."""
        from ..roots import expand

        return os.path.join(self.cwd, expand(name, self.env))


class _Stdin:
    """Standard input, read once, as bytes."""

    def __init__(self, data: bytes | None = None):
        self.data = data

    def __call__(self) -> bytes:
        if self.data is None:
            stream = sys.stdin
            self.data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
            return self.data
        data, self.data = self.data, b""
        return data


class State:
    """The global options (None when not given) and the run's ``Call``; ``opened``: the root a command opened."""

    __slots__ = ("root", "json", "session", "scope", "call", "opened")

    def __init__(self, root: str | None = None, json: bool = False, session=None, scope=None, call: Call | None = None):
        self.root, self.json, self.session, self.scope = root, json, session, scope
        self.call = Call.here() if call is None else call
        self.opened: str | None = None

    @property
    def out(self) -> r.Output:
        return self.call.out

    def memory(self):
        from ..core import Memory

        m = Memory.find(self.root, door="cli", env=self.call.env, cwd=self.call.cwd)
        self.opened = str(m.root)
        return m

    def names(self, session: bool = True, scope: bool = True) -> tuple[str, str]:
        """The session and scope names: the options, else MEMCLI_SESSION / MEMCLI_SCOPE, else 'default'."""
        from ..config import names

        return names(self.session if session else None, self.scope if scope else None, self.call.env)

    def text(self, value: str, what: str) -> str:
        """An argument's text: itself, or stdin for '-'."""
        return read_input(self.call, value, None, what)


Human = Optional[Callable[[r.Output], None]]  # what prints a command's result for a person


class Out:
    """What a command hands the boundary: data for --json, a human renderer, an exit code."""

    __slots__ = ("data", "human", "code", "warnings")
    data: Any  # what --json prints (a result's to_dict())

    def __init__(self, data: object = None, human: Human = None, code: int = 0, warnings: list | None = None):
        self.data, self.human, self.code = data, human, code
        self.warnings = [] if warnings is None else warnings

    @classmethod
    def of(cls, result, human: Human = None, code: int = 0, warnings=()) -> Out:
        """A library result (anything with to_dict() and warnings): its data, its warnings after any given."""
        return cls(result.to_dict(), human, code, [*warnings, *result.warnings])


def execute(command: str, as_json: bool, action: Callable[[], Out], o: r.Output) -> int:
    try:
        res = action()
    except MemcliError as e:
        _failed(o, as_json, command, e.code, e.message, e.data, hint=e.hint)
        return e.exit_code
    except KeyboardInterrupt:
        o.talk("memcli: interrupted")
        return 130
    from ..plugins import problems

    res.warnings = [*res.warnings, *problems()]  # a plugin that failed is said, never fatal
    if as_json:
        o.out(r.envelope(command, True, res.data, res.warnings))
    else:
        for w in res.warnings:
            o.warn(w)
        if res.human is not None:
            res.human(o)
    return res.code


def _failed(o: r.Output, as_json: bool, command: str, code: str, message: str, data=None, hint=None, said=None):
    """A command that failed: its envelope with --json, else one line on stderr (``said``, or the error)."""
    if as_json:
        o.out(r.envelope(command, False, data, [], {"code": code, "message": message}))
    elif said is not None:
        o.talk(said)
    else:
        o.error(message, hint)


def read_input(call: Call, text: str | None, file: str | None, what: str, limit: int = 1_000_000) -> str:
    """TEXT, or '-' for stdin, or a file; binary, non-UTF-8 and over-limit input is refused."""
    from ..errors import UsageError
    from ..store.fs import decode, read_bytes

    if text is not None and file is not None:
        raise UsageError(f"give the {what} as text or as a file, not both")
    if file == "-" or (file is None and text == "-"):
        return decode(call.stdin(), f"{what} (stdin)", limit)
    if file is not None:
        return decode(read_bytes(call.path(file), file, limit), file, limit)
    return text or ""


def wants_json(args: list) -> bool:
    """--json before a `--`, from the words alone: a usage error can stop the parse before it."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


HOOK = "hook claude-code"  # a usage error of the agent hook exits 1: Claude Code blocks a prompt on 2
HOOK_USAGE = "usage: memcli hook claude-code [--budget N] [--json]"


def _hook_line(words: str, args: list) -> bool:
    """Whether a usage error belongs to the agent hook (raised in it, or before it on its line)."""
    if words in ("hook", HOOK):
        return True
    return words == "" and any(args[i : i + 2] == HOOK.split() for i in range(len(args)))


def run_app(cmd, args: list, call: Call) -> int:
    """Run the Typer app's Click command on args for a call; Click's own errors (a missing argument,
    an unknown option) become one error on stderr (one envelope on stdout with --json), exit 2. A
    server's call gets no help option: -h and --help are then usage errors, which it declines."""
    import typer.core

    exc = typer.core.click.exceptions  # Click's, as Typer ships it
    as_json = call.json = wants_json(args)
    o = call.out
    # With --json (or in a server) a group called without a command says so in the envelope
    # instead of printing help (``typer_app.Commands.lift``).
    if as_json or call.admit is not None:
        cmd.lifted = []
        cmd.lift(cmd)
    extra: dict = {} if call.admit is None else {"help_option_names": []}
    try:
        rv = cmd.main(args=args, prog_name="memcli", standalone_mode=False, obj=call, **extra)
    except exc.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # the help is already printed
            return e.exit_code
        words = " ".join(e.ctx.command_path.split()[1:]) if e.ctx is not None else ""  # 'index rebuild'
        message = e.format_message()
        if _hook_line(words, args):  # one line, exit 1, whatever was wrong
            _failed(o, as_json, "hook", "usage", message, said=f"memcli hook: {message.rstrip('.')} ({HOOK_USAGE})")
            return 1
        path = e.ctx.command_path if e.ctx is not None else "memcli"
        usage = e.ctx.get_usage().removeprefix("Usage: ") if e.ctx is not None else "memcli COMMAND"
        _failed(o, as_json, words, "usage", message, hint=f"Usage: {usage}  (see '{path} --help')")
        return e.exit_code
    except exc.Abort:
        _failed(o, as_json, "", "aborted", "aborted", said="memcli: aborted")
        return 1
    except exc.ClickException as e:  # Click's file errors and the like: not a usage fault
        _failed(o, as_json, "", "error", e.format_message())
        return e.exit_code
    finally:
        for g in cmd.lifted or ():
            g.no_args_is_help = True
        cmd.lifted = None
    return rv if isinstance(rv, int) else 0
