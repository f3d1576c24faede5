"""The command line. `main` answers the hot commands (--version, recall, should-recall, remember,
scope set, session add, context, and the agent hook) without loading Typer; everything else goes
to the Typer app, and both call the same actions through the same error boundary. One parser
reads the words of the hot commands (``argv``), over one table checked against the Typer app.

A hot command (but --version) is first offered to a running `memcli serve` for its root
(``memcli.resident``), which runs this same code in a process that has it loaded; when none
answers, it runs here."""

from __future__ import annotations

import os
import sys

from . import argv, hot


def _version(line: argv.Line) -> None:
    from .. import __version__

    if line.value("json_"):
        from ..render import envelope

        sys.stdout.write(envelope("version", True, {"version": __version__}) + "\n")
    else:
        sys.stdout.write(f"memcli {__version__}\n")


def _resident_root(args: list, line: argv.Line) -> tuple | None:
    """(the root whose server may run this line, whether it is the hook), or None: the line runs
    here. A server runs the hook and the fast path's commands, for a client whose output is not
    a terminal (rich renders for one), with no argument '-' (stdin) but the hook's event."""
    from .. import resident

    if resident.mode() == "off" or _tty(sys.stdout) or _tty(sys.stderr):
        return None
    hook = hot.hook_root_option(args, line)
    if hook is not None:
        explicit = hook[0]
    elif (
        hot.hook_line(args, line) is not None
        or line.words is None
        or line.help
        or line.error is not None
        or "-" in args
    ):
        return None
    else:
        explicit = line.value("root") or None
    root = resident.find_root(explicit)
    return None if root is None else (root, hook is not None)


def _tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _resident(args: list, root: str, hook: bool) -> tuple:
    """(exit code, None) when the server of root ran the line, its output written here; else
    (None, the hook's input as read, or None)."""
    import io

    from .. import resident

    data = sys.stdin.buffer.read() if hook else None
    try:
        got = resident.run(root, args, data)
    except resident.Lost:
        sys.stderr.write(
            f"memcli: error: the memcli server for {root} stopped before answering; the command may have run\n"
        )
        return 1, None
    if got is None:
        return None, None if data is None else io.BytesIO(data)
    code, events = got
    for stream, text in events:
        out = sys.stdout if stream == 1 else sys.stderr
        if text is None:
            out.flush()
        else:
            out.write(text)
    return code, None


def main(args: list | None = None) -> None:
    args = sys.argv[1:] if args is None else list(args)
    line = argv.parse(args)
    code = None
    if line.value("version") and line.error is None and not line.help:
        _version(line)  # as Click does: --version among the global options wins over what follows
        sys.stdout.flush()
        return
    if "_MEMCLI_COMPLETE" not in os.environ:  # shell completion goes through Typer
        stdin = None
        resident = _resident_root(args, line)
        if resident is not None:  # a running `memcli serve` answers, else this process does
            code, stdin = _resident(args, *resident)
        if code is None:
            code = hot.hook(args, line, stdin)
            if code is None:
                code = hot.fast(line)
    if code is None:
        from .app import command
        from .boundary import run_app

        code = run_app(command(), args)
    sys.stdout.flush()
    sys.exit(code)
