"""The commands of a memory's life: init, remember, update, show, list, edit, forget, restore,
rename, outcome and index (the Typer app they share with the other command modules is ``typer_app``)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .. import render as r
from ..errors import UsageError
from ..model import listed_ids
from ..requests import RememberRequest, UpdateRequest
from .boundary import Out, read_input
from .complete import MemoryId, ids, tags
from .progress import reporting
from .typer_app import Json, app, memory, output, run, state, takes

index_app = typer.Typer(help="Regenerate or verify MEMORY.md.\n\nExample: memcli index check", no_args_is_help=True)
app.add_typer(index_app, name="index")


@app.command()
def init(
    ctx: typer.Context,
    path: Annotated[Optional[str], typer.Argument(help="Folder to make a root (default: here).")] = None,
    example: Annotated[bool, typer.Option("--example", help="Fill it with the example memories.")] = False,
    git_: Annotated[bool, typer.Option("--git", help="Also make it git-ready (see `memcli git setup`).")] = False,
    json_: Json = False,
):
    """Create a memory root; never overwrites a file.

    Example: memcli init notes --example
    """
    from ..core import Memory

    def act():
        res = Memory.create(path or state(ctx).root or ".", example, git=git_)

        def human(o):
            for c in res["created"]:
                if not c.startswith("memory/") or c.endswith("/"):
                    o.talk(f"created {c}")
            for k in res["kept"]:
                o.talk(f"kept    {k} (exists)")
            if res["examples"]:
                o.talk(f"added {len(res['examples'])} example memories")
            o.out(res["root"])

        return Out.of(res, human)

    run(ctx, "init", json_, act)


@app.command()
@takes(RememberRequest)
def remember(
    ctx: typer.Context,
    body_file: Annotated[
        Optional[str], typer.Option("--body-file", "-f", metavar="FILE", help="Read the body from a file ('-': stdin).")
    ] = None,
    json_: Json = False,
    **options,
):
    """Write a detail file and its index line.

    Example: memcli remember "MySQL charset double encoding" "set utf8mb4 on the connection" -t mysql
    """
    st = state(ctx)

    def act():
        title, summary, body = options.pop("title"), options.pop("summary"), options.pop("body")
        if [title, summary, body].count("-") + (body_file == "-") > 1:
            raise UsageError("only one argument can read standard input ('-')")
        m = st.memory()
        t = read_input(st.call, title, None, "title")
        s = read_input(st.call, summary, None, "summary")
        b = read_input(st.call, body, body_file, "body")
        res = m.gate("cli").remember(RememberRequest.of(options, title=t, summary=s, body=b))
        return Out.of(res, lambda o: r.write_result(o, res.to_dict()), warnings=m.config.warnings)

    run(ctx, "remember", json_, act)


@app.command()
@takes(UpdateRequest)
def update(ctx: typer.Context, json_: Json = False, **options):
    """Change a memory; a replaced summary goes under a dated ## History section.

    Example: memcli update mysql-charset --summary "use utf8mb4 everywhere" --tag encoding
    """
    st = state(ctx)

    def act():
        summary, append = options.pop("summary"), options.pop("append")
        if [summary, append].count("-") > 1:
            raise UsageError("only one argument can read standard input ('-')")
        s = read_input(st.call, summary, None, "summary") if summary is not None else None
        a = read_input(st.call, append, None, "append") if append is not None else None
        res = st.memory().gate("cli").update(UpdateRequest.of(options, summary=s, append=a))
        return Out.of(res, lambda o: r.write_result(o, res.to_dict()))

    run(ctx, "update", json_, act)


@app.command()
def show(
    ctx: typer.Context,
    id_: MemoryId,
    json_: Json = False,
):
    """Print one memory.

    Example: memcli show mysql-charset
    """

    def act():
        m = memory(ctx)
        data = m.get(id_).to_dict()
        text = m.raw(id_)
        return Out(data, lambda o: r.show(o, data, text))

    run(ctx, "show", json_, act)


@app.command("list")
def list_(
    ctx: typer.Context,
    tag: Annotated[
        Optional[str], typer.Option("--tag", "-t", help="Only memories with this tag.", autocompletion=tags)
    ] = None,
    type_: Annotated[Optional[str], typer.Option("--type", help="Only this type.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Include memory/archive/.")] = False,
    format_: Annotated[
        Optional[str],
        typer.Option(
            "--format", metavar="json|tsv|md", help="json | tsv | md (piped default: tsv with a header line)."
        ),
    ] = None,
    json_: Json = False,
):
    """List memories in index order.

    Example: memcli list --tag mysql
    """

    def act():
        data = memory(ctx).list(tag=tag, type=type_, all=all_).to_dict()
        rows, probs = data["memories"], data["problems"]
        fmt = format_ or (None if output(ctx).tty() else "tsv")
        text = r.format_listing(rows, fmt) if fmt else None

        def human(o):
            if text is None:
                return r.listing(o, rows, probs)
            o.write(text)
            for p in probs:
                o.warn(f"skipped {p}")

        return Out(data, human)

    run(ctx, "list", json_, act)


@app.command()
def edit(
    ctx: typer.Context,
    id_: MemoryId,
    reuse: Annotated[
        Optional[bool],
        typer.Option("--reuse-draft/--new-draft", help="Go on with a draft an earlier edit left, or start anew."),
    ] = None,
    json_: Json = False,
):
    """Open a memory in $VISUAL or $EDITOR, then check it and refresh its index line.

    The editor works on a copy under .memcli/edits/; a change made meanwhile is merged, or the copy
    is kept and named (exit 4). The result is checked like `remember` (exit 2, also for a missing
    opening ---; 3 when its frontmatter cannot be read; 4 for a secret), the copy kept; a change
    sets `updated`. A copy an earlier edit left (interrupted, or refused) is offered on a terminal;
    elsewhere --reuse-draft or --new-draft says what to do with it.

    Example: EDITOR=nano memcli edit mysql-charset
    """
    import os

    from . import editor as editors

    def act():
        m = memory(ctx)
        m.locate(id_)  # an unknown id is said before the editor starts
        editor = editors.chosen("edit ID")
        o = output(ctx)
        try:
            s = m.edit_begin(id_, reuse)
        except UsageError as e:
            if not (isinstance(e.data, dict) and "draft" in e.data and r.is_tty(sys.stdin) and o.tty(err=True)):
                raise
            kept = e.data["draft"]
            again = typer.confirm(f"An earlier edit of {id_} left a draft ({kept}); go on with it?", err=True)
            s = m.edit_begin(id_, again)
            if not again:
                o.talk(f"starting again from the file; the earlier draft stays in {kept}")
        if s.reopened:
            output(ctx).talk(
                f"reopening the draft an earlier edit of {s.id} kept: {os.path.relpath(s.draft, m.root)}"
                + (
                    f" (the file changed since: {r.plural(s.marked, 'place')} where both differ "
                    "stand between <<<<<<< and >>>>>>> lines; keep what you want)"
                    if s.marked
                    else ""
                )
            )
        code = editors.run(editor, s.draft, lambda: m.edit_abandon(s))
        if code != 0:
            kept = m.edit_abandon(s)
            raise UsageError(
                f"the editor exited with {code}; nothing was changed"
                + (f" (your text is kept in {kept})" if kept else "")
            )
        res = m.edit_finish(s)
        return Out.of(res, lambda o: r.write_result(o, res.to_dict()))

    run(ctx, "edit", json_, act)


@app.command()
def forget(
    ctx: typer.Context,
    id_: MemoryId,
    purge: Annotated[bool, typer.Option("--purge", help="Delete the file instead of archiving it.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask before --purge (needed when not on a terminal).")
    ] = False,
    json_: Json = False,
):
    """Archive a memory: its index line goes, its file moves to memory/archive/ (`restore` brings it back).

    With --purge the file is deleted instead (asked on a terminal, --yes elsewhere).

    Example: memcli forget old-note
    """

    def act():
        m = memory(ctx)
        found = m.locate(id_)
        if purge and not yes:
            if not (r.is_tty(sys.stdin) and output(ctx).tty(err=True)):
                raise UsageError(
                    "forget --purge deletes a file: pass --yes when not on a terminal "
                    "(without --purge, forget archives it)"
                )
            what = found["title"] if found["title"] is not None else "its frontmatter cannot be read"
            if not typer.confirm(f"Delete {found['path']} ({what}) and its index line for good?", err=True):
                kept = {"action": "kept", "id": found["id"], "path": found["path"], "line": None}
                return Out(kept, lambda o: o.talk(f"kept {found['id']}: nothing deleted"))
        res = m.forget(id_, purge=purge)
        return Out.of(res, lambda o: r.write_result(o, res.to_dict()))

    run(ctx, "forget", json_, act)


@app.command()
def restore(
    ctx: typer.Context,
    id_: Annotated[str, typer.Argument(metavar="ID", help="The exact id (or its path).", autocompletion=ids)],
    json_: Json = False,
):
    """Bring a forgotten or expired memory back from memory/archive/, with its index line.

    A passed expiry is cleared (noted under its ## History).

    Example: memcli restore old-promo
    """

    def act():
        res = memory(ctx).restore(id_)
        return Out.of(res, lambda o: r.write_result(o, res.to_dict()))

    run(ctx, "restore", json_, act)


@app.command()
def rename(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="ID", help="The memory's id now (or its path).")],
    new: Annotated[str, typer.Argument(metavar="NEW_ID", help="Its new id.")],
    json_: Json = False,
):
    """Give a memory a new id; its index link and references (memory/ID.md, [[ID]]) follow.

    Example: memcli rename mysql-charset mysql-utf8mb4
    """

    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            data = m.rename(old, new)

        def human(o):
            o.out(data["id"])
            refs = data["references"]
            refs = f"; references updated in {listed_ids(refs, '--json names them all')}" if refs else ""
            o.talk(f"renamed {old} to {new} ({data['path']}){refs}")

        return Out.of(data, human)

    run(ctx, "rename", json_, act)


@app.command()
def outcome(
    ctx: typer.Context,
    id_: MemoryId,
    result: Annotated[str, typer.Argument(metavar="success|failure", help="Did it work?")],
    note: Annotated[Optional[str], typer.Option("--note", "-n", help="What happened, in one line.")] = None,
    json_: Json = False,
):
    """Record that a procedure worked or failed: its counts and a dated note under ## Outcomes.

    Counts from several clones add up when they merge; recall ranks by the smoothed success
    rate, `context` shows the record, and heartbeat reports a procedure that keeps failing.

    Example: memcli outcome deploy-staging failure --note "migration lock timed out"
    """

    def act():
        res = memory(ctx).outcome(id_, result, note)
        return Out.of(res, lambda o: o.out(f"{res['id']}: {res['record']}"))

    run(ctx, "outcome", json_, act)


@index_app.command("rebuild")
def index_rebuild(ctx: typer.Context, json_: Json = False):
    """Regenerate MEMORY.md from the detail files, keeping hand-written lines.

    Example: memcli index rebuild
    """

    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            res = m.rebuild_index()

        def human(o):
            o.out(f"MEMORY.md rebuilt: {r.plural(res['entries'], 'entry', 'entries')}")
            left = res["left_out"]
            if left:
                names = listed_ids(left, "`memcli list` shows every memory, --json names them all")
                o.talk(
                    f"{len(left):,} {'memory' if len(left) == 1 else 'memories'} not listed for lack of room "
                    f"(detail files kept): {names}"
                )
            for p in res["problems"]:
                o.warn(f"skipped {p}")

        return Out.of(res, human)

    run(ctx, "index rebuild", json_, act)


@index_app.command("check")
def index_check(ctx: typer.Context, json_: Json = False):
    """Verify MEMORY.md and the detail files; exit 1 when something is wrong.

    Each fault is reported with the fix `memcli heartbeat` gives for it.

    Example: memcli index check
    """

    def act():
        probs = memory(ctx).check_index()
        items = [{"path": p.path, "line": p.line, "message": p.message} for p in probs]
        return Out({"problems": items}, lambda o: r.problems(o, probs, "index ok"), code=1 if probs else 0)

    run(ctx, "index check", json_, act)
