"""The `memcli` command. A running `memcli serve` for the command's root answers it when it is a
per-turn command (``memcli.resident`` finds the root and asks); otherwise this process runs it
through the Typer app, the one parser of every command line."""

from __future__ import annotations

import sys


def main(args: list | None = None) -> None:
    from .. import resident

    args = sys.argv[1:] if args is None else list(args)
    try:
        code, stdin = resident.offer(args)
    except resident.Lost as e:
        sys.stderr.write(
            f"memcli: error: the memcli server for {e} stopped before answering; the command may have run\n"
        )
        code, stdin = 1, None
    if code is None:
        from .boundary import Call, run_app
        from .typer_app import command

        code = run_app(command(), args, Call.here(stdin))
    sys.stdout.flush()
    sys.exit(code)
