"""The thin command line: parse, make one library call, render, map errors to exit codes."""

from __future__ import annotations

import sys
from typing import Callable, List, Optional

import typer
from typing import Annotated

from .. import __version__
from .. import render as r
from ..errors import UsageError
from ..model import DEFAULT_IMPORTANCE, DEFAULT_TYPE
from .boundary import Out, State, execute, open_memory, read_input, stdin_bytes

app = typer.Typer(
    name="memcli", add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="A file-based Markdown memory for AI agents: MEMORY.md (the index) + memory/*.md (the details).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
index_app = typer.Typer(help="Regenerate or verify MEMORY.md.", no_args_is_help=True)
app.add_typer(index_app, name="index")

Json = Annotated[bool, typer.Option("--json", help="Print one JSON envelope on stdout.")]


def _version(value: bool):
    if value:
        r.out(f"memcli {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    root: Annotated[Optional[str], typer.Option("--root", help="The memory root (else MEMCLI_ROOT, else the nearest ancestor with MEMORY.md).")] = None,
    json_: Json = False,
    session: Annotated[Optional[str], typer.Option("--session", help="Session name (else MEMCLI_SESSION, else 'default').")] = None,
    scope: Annotated[Optional[str], typer.Option("--scope", help="Scope name (else MEMCLI_SCOPE, else 'default').")] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = False,
):
    ctx.obj = State(root or None, json_, session or None, scope or None)


def command():
    """The app's Click command, built once per process (`main` and in-process tests share it)."""
    global _COMMAND
    if _COMMAND is None:
        _COMMAND = typer.main.get_command(app)
    return _COMMAND


_COMMAND = None


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


def memory(ctx: typer.Context):
    return open_memory(state(ctx).root)


def run(ctx: typer.Context, command: str, json_flag: bool, action: Callable[[], Out]) -> None:
    """Every Typer command goes through the one error boundary."""
    code = execute(command, json_flag or state(ctx).json, action)
    if code:
        raise typer.Exit(code)


# ---------------------------------------------------------------- commands

@app.command()
def init(
    ctx: typer.Context,
    path: Annotated[Optional[str], typer.Argument(help="Folder to make a root (default: here).")] = None,
    example: Annotated[bool, typer.Option("--example", help="Fill it with the example memories.")] = False,
    json_: Json = False,
):
    """Create a memory root; never overwrites a file.  Example: memcli init notes --example"""
    from ..initroot import init_root

    def act():
        res = init_root(path or state(ctx).root or ".", example)

        def human():
            for c in res["created"]:
                if not c.startswith("memory/") or c.endswith("/"):
                    r.talk(f"created {c}")
            for k in res["kept"]:
                r.talk(f"kept    {k} (exists)")
            if res["examples"]:
                r.talk(f"added {len(res['examples'])} example memories")
            r.out(res["root"])
        return Out(res, human)
    run(ctx, "init", json_, act)


@app.command()
def remember(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="One line naming the memory ('-' reads stdin).")],
    summary: Annotated[Optional[str], typer.Argument(help="The conclusion, in one line ('-' reads stdin).")] = None,
    tag: Annotated[Optional[List[str]], typer.Option("--tag", "-t", help="A tag (repeatable).")] = None,
    alias: Annotated[Optional[List[str]], typer.Option("--alias", "-a", help="Another name it is known by (repeatable).")] = None,
    body: Annotated[Optional[str], typer.Option("--body", "-b", help="The full text ('-' reads stdin).")] = None,
    body_file: Annotated[Optional[str], typer.Option("--body-file", "-f", help="Read the body from a file ('-': stdin).")] = None,
    type_: Annotated[Optional[str], typer.Option(
        "--type", help=f"fact | preference | lesson | procedure | event | note (default {DEFAULT_TYPE})")] = None,
    importance: Annotated[Optional[float], typer.Option(
        "--importance", "-i", help=f"0..1 (default {DEFAULT_IMPORTANCE})")] = None,
    pin: Annotated[bool, typer.Option("--pin", help="Always keep it in MEMORY.md.")] = False,
    expires: Annotated[Optional[str], typer.Option("--expires", help="A date (2027-01-31) or a duration (30d).")] = None,
    id_: Annotated[Optional[str], typer.Option("--id", help="Use this id instead of one made from the title.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Where it came from.")] = None,
    json_: Json = False,
):
    """Write a detail file and its index line.

    Example: memcli remember "MySQL charset double encoding" "set utf8mb4 on the connection" -t mysql
    """
    from .boundary import remember_action

    def act():
        return remember_action(state(ctx), title, summary, tag, alias, body, body_file, type_, importance, pin,
                               expires, id_, source)
    run(ctx, "remember", json_, act)


@app.command()
def update(
    ctx: typer.Context,
    id_: Annotated[str, typer.Argument(metavar="ID", help="The exact id.")],
    title: Annotated[Optional[str], typer.Option("--title", help="New title (the old one becomes an alias).")] = None,
    summary: Annotated[Optional[str], typer.Option("--summary", "-s", help="New summary ('-' reads stdin).")] = None,
    append: Annotated[Optional[str], typer.Option("--append", help="Text to add to the body ('-' reads stdin).")] = None,
    tag: Annotated[Optional[List[str]], typer.Option("--tag", "-t", help="Add a tag.")] = None,
    untag: Annotated[Optional[List[str]], typer.Option("--untag", help="Remove a tag.")] = None,
    alias: Annotated[Optional[List[str]], typer.Option("--alias", "-a", help="Add an alias.")] = None,
    type_: Annotated[Optional[str], typer.Option("--type")] = None,
    importance: Annotated[Optional[float], typer.Option("--importance", "-i")] = None,
    pin: Annotated[Optional[bool], typer.Option("--pin/--unpin")] = None,
    expires: Annotated[Optional[str], typer.Option("--expires", help="A date, a duration (30d) or 'never'.")] = None,
    json_: Json = False,
):
    """Change a memory; a replaced summary goes under a dated ## History section.

    Example: memcli update mysql-charset --summary "use utf8mb4 everywhere" --tag encoding
    """
    def act():
        if [summary, append].count("-") > 1:
            raise UsageError("only one argument can read standard input ('-')")
        s = read_input(summary, None, stdin_bytes, "summary") if summary is not None else None
        a = read_input(append, None, stdin_bytes, "append") if append is not None else None
        res = memory(ctx).update(id_, title=title, summary=s, append=a, tags=tag or (), untags=untag or (),
                                 aliases=alias or (), type=type_, importance=importance, pinned=pin,
                                 expires=expires)
        data = res.to_dict()
        return Out(data, lambda: r.write_result(data), warnings=res.warnings)
    run(ctx, "update", json_, act)


@app.command()
def show(ctx: typer.Context, id_: Annotated[str, typer.Argument(metavar="ID")], json_: Json = False):
    """Print one memory.  Example: memcli show mysql-charset"""
    def act():
        m = memory(ctx)
        d = m.get(id_)
        data = d.to_dict()
        from ..store.fs import read_text

        text = read_text(m.root / d.path, d.path)
        return Out(data, lambda: r.show(data, text))
    run(ctx, "show", json_, act)


@app.command("list")
def list_(
    ctx: typer.Context,
    tag: Annotated[Optional[str], typer.Option("--tag", "-t", help="Only memories with this tag.")] = None,
    type_: Annotated[Optional[str], typer.Option("--type", help="Only this type.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Include memory/archive/.")] = False,
    json_: Json = False,
):
    """List memories in index order.  Example: memcli list --tag mysql"""
    def act():
        res = memory(ctx).list(tag=tag, type=type_, all=all_)
        rows = [{"id": d.id, "title": d.title, "summary": d.summary, "type": d.type, "importance": d.importance,
                 "pinned": d.pinned, "tags": list(d.tags), "updated": d.updated, "path": d.path,
                 "indexed": d.id in res.indexed and "/archive/" not in d.path,
                 "archived": "/archive/" in d.path} for d in res.details]
        probs = [str(p) for p in res.problems]
        return Out({"memories": rows, "problems": probs}, lambda: r.listing(rows, probs))
    run(ctx, "list", json_, act)


@app.command()
def edit(ctx: typer.Context, id_: Annotated[str, typer.Argument(metavar="ID")], json_: Json = False):
    """Open a memory in $VISUAL or $EDITOR, then check it and refresh its index line."""
    import os
    import shlex
    import subprocess

    def act():
        m = memory(ctx)
        d = m.get(id_)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            code = subprocess.call([*shlex.split(editor), str(m.root / d.path)])
        except OSError as e:
            raise UsageError(f"cannot start the editor {editor!r}: {e.strerror or e}")
        if code != 0:
            raise UsageError(f"the editor exited with {code}; nothing was changed in MEMORY.md")
        res = m.after_edit(d.id) if "/archive/" not in d.path else None
        data = res.to_dict() if res else {"action": "edited", "id": d.id, "path": d.path, "line": None}
        return Out(data, lambda: r.write_result(data))
    run(ctx, "edit", json_, act)


@app.command()
def forget(
    ctx: typer.Context,
    id_: Annotated[str, typer.Argument(metavar="ID", help="The exact id.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not on a terminal).")] = False,
    json_: Json = False,
):
    """Delete a memory: its index line and its detail file.  Example: memcli forget old-note --yes"""
    def act():
        m = memory(ctx)
        d = m.get(id_)
        if not yes:
            if not (r.is_tty(sys.stdin) and r.is_tty(sys.stderr)):
                raise UsageError("forget deletes a file: pass --yes when not on a terminal")
            if not typer.confirm(f"Delete {d.path} ({d.title}) and its index line?", err=True):
                raise UsageError("nothing deleted")
        res = m.forget(d.id)
        data = res.to_dict()
        return Out(data, lambda: r.write_result(data))
    run(ctx, "forget", json_, act)


@index_app.command("rebuild")
def index_rebuild(ctx: typer.Context, json_: Json = False):
    """Regenerate MEMORY.md from the detail files, keeping hand-written lines."""
    def act():
        res = memory(ctx).rebuild_index()

        def human():
            r.out(f"MEMORY.md rebuilt: {res['entries']} entries")
            if res["left_out"]:
                r.talk(f"not listed for lack of room (detail files kept): {', '.join(res['left_out'])}")
            for p in res["problems"]:
                r.warn(f"skipped {p}")
        return Out(res, human)
    run(ctx, "index rebuild", json_, act)


@index_app.command("check")
def index_check(ctx: typer.Context, json_: Json = False):
    """Verify MEMORY.md and the detail files; exit 1 when something is wrong."""
    def act():
        probs = memory(ctx).check_index()
        items = [{"path": p.path, "line": p.line, "message": p.message} for p in probs]
        return Out({"problems": items}, lambda: r.problems(probs, "index ok"), code=1 if probs else 0)
    run(ctx, "index check", json_, act)


from . import cascade  # noqa: E402,F401  (registers the cascade's commands)
from . import maint  # noqa: E402,F401  (registers heartbeat and watch)
from . import trust  # noqa: E402,F401  (registers trust)
from . import serve  # noqa: E402,F401  (registers serve)
