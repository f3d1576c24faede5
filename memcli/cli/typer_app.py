"""The Typer app every command module registers on, the global options and the one error
boundary each command goes through (``run``)."""

from __future__ import annotations

from typing import Annotated, Callable, Optional

import typer

from .. import __version__
from .. import render as r
from .boundary import Out, State, execute, open_memory

app = typer.Typer(
    name="memcli",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="A file-based Markdown memory for AI agents: MEMORY.md (the index) + memory/*.md (the details).\n\n"
    'Example: memcli recall "how do we deploy to staging"',
    context_settings={"help_option_names": ["-h", "--help"]},
)
index_app = typer.Typer(help="Regenerate or verify MEMORY.md.\n\nExample: memcli index check", no_args_is_help=True)
app.add_typer(index_app, name="index")

Json = Annotated[bool, typer.Option("--json", help="Print one JSON envelope on stdout.")]


def _version(ctx: typer.Context, value: bool):
    if value:
        if ctx.params.get("json_"):
            r.out(r.envelope("version", True, {"version": __version__}))
        else:
            r.out(f"memcli {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    root: Annotated[
        Optional[str],
        typer.Option("--root", help="The memory root (else MEMCLI_ROOT, else the nearest ancestor with MEMORY.md)."),
    ] = None,
    json_: Json = False,
    session: Annotated[
        Optional[str], typer.Option("--session", help="Session name (else MEMCLI_SESSION, else 'default').")
    ] = None,
    scope: Annotated[
        Optional[str], typer.Option("--scope", help="Scope name (else MEMCLI_SCOPE, else 'default').")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
):
    ctx.obj = State(root or None, json_, session or None, scope or None)


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


def options(ctx: typer.Context) -> dict:
    """The command's own parameters as Click parsed them, by name (--json, the boundary's, left
    out): what a command hands ``requests.*.of``."""
    return {k: v for k, v in ctx.params.items() if k != "json_"}


def memory(ctx: typer.Context):
    return open_memory(state(ctx).root)


def run(ctx: typer.Context, command: str, json_flag: bool, action: Callable[[], Out]) -> None:
    """Every Typer command goes through the one error boundary."""
    code = execute(command, json_flag or state(ctx).json, action)
    if code:
        raise typer.Exit(code)
