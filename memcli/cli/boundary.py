"""The one error boundary, shared by the Typer commands and the start-up fast path.

It runs a command's action, maps MemcliError to its exit code, and prints: the JSON
envelope with --json, else warnings and errors on stderr and the human rendering.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from .. import render as r
from ..errors import MemcliError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a turn does without it)
if TYPE_CHECKING:
    from typing import Any


class State:
    """The global options: --root, --json, --session, --scope (None when not given)."""

    __slots__ = ("root", "json", "session", "scope")

    def __init__(
        self, root: str | None = None, json: bool = False, session: str | None = None, scope: str | None = None
    ):
        self.root, self.json, self.session, self.scope = root, json, session, scope


class Out:
    """What a command hands the boundary: data for --json, a human renderer, an exit code."""

    __slots__ = ("data", "human", "code", "warnings")
    data: Any  # what --json prints (a result's to_dict())

    def __init__(
        self, data: object = None, human: Callable[[], None] | None = None, code: int = 0, warnings: list | None = None
    ):
        self.data, self.human, self.code = data, human, code
        self.warnings = [] if warnings is None else warnings

    @classmethod
    def of(cls, result, human: Callable[[], None] | None = None, code: int = 0, warnings=()) -> "Out":
        """A library result (anything with to_dict() and warnings): its data, its warnings after any given."""
        return cls(result.to_dict(), human, code, [*warnings, *result.warnings])


def execute(command: str, as_json: bool, action: Callable[[], Out]) -> int:
    try:
        res = action()
    except MemcliError as e:
        if as_json:
            r.out(r.envelope(command, False, e.data, [], {"code": e.code, "message": e.message}))
        else:
            r.error(e.message, e.hint)
        return e.exit_code
    except KeyboardInterrupt:
        r.talk("memcli: interrupted")
        return 130
    from ..frontend import plugin_problems

    res.warnings = [*res.warnings, *plugin_problems()]  # a plugin that failed is said, never fatal
    if as_json:
        r.out(r.envelope(command, True, res.data, res.warnings))
    else:
        for w in res.warnings:
            r.warn(w)
        if res.human is not None:
            res.human()
    return res.code


def read_input(text: str | None, file: str | None, stdin_text, what: str) -> str:
    """TEXT, or '-' for stdin, or a file; binary, non-UTF-8 and over-1-MB input is refused."""
    from ..errors import UsageError
    from ..frontend import decode_input as decode
    from ..frontend import read_input_file

    if text is not None and file is not None:
        raise UsageError(f"give the {what} as text or as a file, not both")
    if file is not None:
        if file == "-":
            return decode(stdin_text(), f"{what} (stdin)")
        return read_input_file(file)
    if text == "-":
        return decode(stdin_text(), f"{what} (stdin)")
    return text or ""


def stdin_bytes() -> bytes:
    return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()


def open_memory(root: str | None):
    from ..core import Memory

    return Memory.find(root, door="cli")


def names(session: str | None, scope: str | None) -> tuple[str, str]:
    from ..frontend import session_names

    return session_names(session, scope)


def text_arg(value: str, what: str) -> str:
    return read_input(value, None, stdin_bytes, what)


# ---- the hot commands' actions: called by the Typer commands and by the fast path alike, with
# the global options and each command's own parameters under the Typer parameter names ----


def recall_action(st: State, query, **options) -> Out:
    from ..requests import RecallRequest

    sess, sc = names(st.session, st.scope)
    m = open_memory(st.root)
    req = RecallRequest.of(options, query=text_arg(query, "query"), session=sess, scope=sc)

    def ask():
        return m.recall_request(req)

    if st.json or not r.is_tty(sys.stderr):  # what an agent runs: nothing drawn, nothing more imported
        res = ask()
    else:  # a person at a terminal: the first search of the details shows its progress
        from .progress import reporting

        with reporting(m, False):
            res = ask()
    out = Out.of(res)
    out.human, out.code = (lambda: r.recall(out.data, _bodies(m, out.data["hits"]))), 0 if out.data["hits"] else 1
    return out


def _bodies(m, hits: list) -> dict | None:
    """{path: body} of the memories among the hits, for a person at a terminal (None elsewhere)."""
    from contextlib import suppress

    from ..errors import MemcliError

    if not r.is_tty():
        return None
    found = {}
    for h in hits:
        with suppress(MemcliError):  # an episode, or a memory that cannot be read: its snippet
            found[h["path"]] = m.get(h["path"]).body
    return found


def should_recall_action(st: State, text) -> Out:
    res = open_memory(st.root).should_recall(text_arg(text, "text"))
    return Out.of(res, lambda: r.out(res["kind"]), code=0 if res["kind"] != "none" else 1)


def remember_action(st: State, title, summary=None, body=None, body_file=None, **options) -> Out:
    from ..errors import UsageError
    from ..requests import RememberRequest

    if [title, summary, body].count("-") + (body_file == "-") > 1:
        raise UsageError("only one argument can read standard input ('-')")
    m = open_memory(st.root)
    t = read_input(title, None, stdin_bytes, "title")
    s = read_input(summary, None, stdin_bytes, "summary")
    b = read_input(body, body_file, stdin_bytes, "body")
    res = m.gate("cli").remember(RememberRequest.of(options, title=t, summary=s, body=b))
    return Out.of(res, lambda: r.write_result(res.to_dict()), warnings=m.config.warnings)


def scope_set_action(st: State, key, value, agent=None, force=False) -> Out:
    _, sc = names(None, st.scope)
    m = open_memory(st.root)
    res = m.scope(sc).set(key, text_arg(value, "value"), agent or "", force)
    return Out.of(res, lambda: r.talk(f"{key} set by {agent}"))


def session_add_action(st: State, role, text) -> Out:
    sess, _ = names(st.session, None)
    m = open_memory(st.root)
    res = m.session(sess).add(role, text_arg(text, "text"))

    def human():
        r.talk(
            f"session {res['session']}: {r.plural(res['turns'], 'turn')}"
            + (f"; folded {res['folded']} into the summary ({res['episode']})" if res["folded"] else "")
        )

    return Out.of(res, human, warnings=m.config.warnings)


def context_action(st: State, query=None, budget=None) -> Out:
    sess, sc = names(st.session, st.scope)
    m = open_memory(st.root)
    res = m.context(text_arg(query, "query") if query else None, budget=budget, session=sess, scope=sc)
    return Out.of(res, lambda: r.write(res["text"]))


# command -> action, for the fast path (cli/argv.py declares their arguments)
HOT: dict[str, Callable[..., Out]] = {
    "recall": recall_action,
    "should-recall": should_recall_action,
    "remember": remember_action,
    "scope set": scope_set_action,
    "session add": session_add_action,
    "context": context_action,
}


# ---- the Typer path: Click's own errors (a missing argument, an unknown option or command, a
# value of the wrong type) go through the same boundary as memcli's, so --json always gets an
# envelope and a pipe always gets plain text ----


def wants_json(args: list) -> bool:
    """--json anywhere before a `--`: decided from the words alone, since a usage error can stop
    the parse before the option is read."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _click():
    """Click's exception classes, reached through Typer (which ships it)."""
    import typer.core

    return typer.core.click.exceptions


def _command_words(ctx) -> str:
    """'remember', 'index rebuild' or '' (the top level) for the context an error was raised in."""
    return " ".join(ctx.command_path.split()[1:]) if ctx is not None else ""


def _groups(cmd):
    yield cmd
    for sub in getattr(cmd, "commands", {}).values():
        yield from _groups(sub)


def run_app(cmd, args: list) -> int:
    """Run the Typer app's Click command on args; its usage errors become one error on stderr (one
    envelope on stdout with --json) and exit 2."""
    exc = _click()
    as_json = wants_json(args)
    # With --json a group called without a command says so in the envelope instead of printing help.
    lifted = [g for g in _groups(cmd) if getattr(g, "no_args_is_help", False)] if as_json else []
    for g in lifted:
        g.no_args_is_help = False
    try:
        rv = cmd.main(args=args, prog_name="memcli", standalone_mode=False)
    except exc.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # the help is already printed
            return e.exit_code
        words = _command_words(e.ctx)
        message = e.format_message()
        if as_json:
            r.out(r.envelope(words, False, None, [], {"code": "usage", "message": message}))
        else:
            path = e.ctx.command_path if e.ctx is not None else "memcli"
            usage = e.ctx.get_usage().removeprefix("Usage: ") if e.ctx is not None else "memcli COMMAND"
            r.error(message, f"Usage: {usage}  (see '{path} --help')")
        return e.exit_code
    except exc.Abort:
        if as_json:
            r.out(r.envelope("", False, None, [], {"code": "aborted", "message": "aborted"}))
        else:
            r.talk("memcli: aborted")
        return 1
    except exc.ClickException as e:  # Click's file errors and the like: not a usage fault
        if as_json:
            r.out(r.envelope("", False, None, [], {"code": "error", "message": e.format_message()}))
        else:
            r.error(e.format_message())
        return e.exit_code
    finally:
        for g in lifted:
            g.no_args_is_help = True
    return rv if isinstance(rv, int) else 0
