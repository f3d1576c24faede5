"""Learning from sessions: `memcli reflect` and `memcli inbox` (list, show, accept, reject, edit)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .. import render as r
from ..errors import MemcliError, UsageError
from .typer_app import Json, app, memory, run
from .boundary import Out

inbox_app = typer.Typer(
    help="Proposals waiting for review in memory/inbox/: list (the default), show, accept, "
    "reject, edit.\n\nExample: memcli inbox accept --all --type preference",
    invoke_without_command=True,
)
app.add_typer(inbox_app, name="inbox")

Ids = Annotated[Optional[List[str]], typer.Argument(metavar="ID...", help="Proposal ids (see `memcli inbox`).")]


@app.command()
def reflect(
    ctx: typer.Context,
    engine: Annotated[
        Optional[str],
        typer.Option(
            "--engine",
            metavar="offline|extractor",
            help="offline | extractor (default reflect.engine: the extractor when one is set).",
        ),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Everything in the episode log, not only what is new.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the proposals; write nothing.")] = False,
    budget: Annotated[
        Optional[int],
        typer.Option(
            "--budget",
            metavar="N",
            help="Offline engine: at most this many proposals per 100 turns (default reflect.budget).",
        ),
    ] = None,
    background: Annotated[bool, typer.Option("--background", hidden=True)] = False,
    json_: Json = False,
):
    """Turn what happened since the last reflection into proposals in memory/inbox/.

    Reads the episode sections and session summaries not reflected on yet, and writes proposals
    (new memories or updates of existing ones, each quoting its evidence) for a person to review
    with `memcli inbox`. Nothing reaches MEMORY.md until a proposal is accepted.

    Example: memcli reflect --dry-run
    """

    def act():
        m = memory(ctx)
        if background:
            return Out.of(m.reflect(background=True, origin="hook" if engine == "offline" else None))
        if budget is not None and budget < 1:
            raise UsageError("--budget must be at least 1")
        res = m.reflect(engine=engine, all=all_, dry_run=dry_run, budget=budget)

        def human(o):
            shown = res["proposals"]
            verb = "would propose" if dry_run else "proposed"
            for p in shown:
                if dry_run or p["id"] in res["proposed"]:
                    o.out(f"{p['id']}\t{p['kind']}\t{p['type']}\t{p['confidence']:.2f}\t{p['title']}")
            o.talk(
                f"reflected on {r.plural(res['turns'], 'turn')} ({r.plural(res['items'], 'section')}, "
                f"{res['engine']}): {verb} {len(shown) if dry_run else len(res['proposed'])}"
                + (f", auto-accepted {len(res['accepted'])}" if res["accepted"] else "")
                + (f", left out {len(res['skipped'])}" if res["skipped"] else "")
                + ("" if dry_run or not res["proposed"] else "; review with `memcli inbox`")
            )

        return Out.of(res, human)

    run(ctx, "reflect", json_, act)


def _row(p) -> dict:
    d = p.to_dict()
    d["evidence"] = len(d["evidence"])
    d.pop("text")
    return d


@inbox_app.callback()
def inbox(ctx: typer.Context, json_: Json = False):
    """List the proposals waiting for review (oldest first)."""
    if ctx.invoked_subcommand is not None:
        return

    def act():
        items, problems = memory(ctx).inbox.list()
        rows = [_row(p) for p in items]

        def human(o):
            for x in rows:
                kind = x["kind"] + (f"→{x['target']}" if x["target"] else "")
                cells = [x["id"], kind, x["type"], f"{x['confidence']:.2f}", x["engine"], (x["created"] or "")[:10]]
                o.out("\t".join([*cells, r.plural(x["evidence"], "turn"), x["title"]]))
                if x["summary"]:
                    o.out(f"    {x['summary']}")
            if not rows:
                o.talk("the inbox is empty")
            for p in problems:
                o.warn(f"skipped {p}")

        return Out({"proposals": rows, "problems": [str(p) for p in problems]}, human)

    run(ctx, "inbox", json_, act)


@inbox_app.command("show")
def inbox_show(
    ctx: typer.Context, id_: Annotated[str, typer.Argument(metavar="ID", help="The proposal id.")], json_: Json = False
):
    """Print one proposal: what it proposes and the evidence turns it quotes.

    Example: memcli inbox show p-20261201-staging-deploys-need-the-vpn-5e268f
    """

    def act():
        from ..safety.scanner import flag_note, injection_kinds

        inbox = memory(ctx).inbox
        p = inbox.get(id_)
        text = inbox.raw(p)
        data, kinds = p.to_dict(), injection_kinds(text)
        if kinds:  # what it quotes may try to instruct whoever reads it
            data["injection"] = kinds
        return Out(data, lambda o: o.out((flag_note(kinds) + "\n" if kinds else "") + text.rstrip("\n")))

    run(ctx, "inbox show", json_, act)


def _decide(ctx, command: str, ids, all_, type_, json_, verb: str, **renamed):
    def act():
        m = memory(ctx)
        inbox = m.inbox
        results = (inbox.accept if verb == "accept" else inbox.reject)(ids or (), all=all_, type=type_, **renamed)
        warnings = [w for x in results for w in x.warnings]

        def human(o):
            for x in results:
                (o.talk if x["action"] == "already" else o.out)(x["message"])
            if not results:
                o.talk("nothing to " + verb)

        return Out({"results": results}, human, warnings=warnings)

    run(ctx, command, json_, act)


@inbox_app.command("accept")
def inbox_accept(
    ctx: typer.Context,
    ids: Ids = None,
    all_: Annotated[bool, typer.Option("--all", help="Every pending proposal.")] = False,
    type_: Annotated[Optional[str], typer.Option("--type", help="With --all: only proposals of this type.")] = None,
    id_: Annotated[
        Optional[str], typer.Option("--id", metavar="ID", help="One proposal: the id the new memory gets.")
    ] = None,
    title: Annotated[
        Optional[str],
        typer.Option("--title", metavar="TEXT", help="One proposal: the memory's title, as you would write it."),
    ] = None,
    json_: Json = False,
):
    """Apply proposals through the ordinary write path (remember, or update keeping History).

    A new memory whose id exists becomes an update of it, never an overwrite. The proposal moves to
    memory/inbox/archive/; accepting it again (another clone, after a sync) says so and does nothing.
    --id and --title rename one proposal's memory and fix its title in the same step.

    Example: memcli inbox accept p-20261201-orders-import-3f2a1c --id orders-import-utf8mb4
    """
    _decide(ctx, "inbox accept", ids, all_, type_, json_, "accept", id=id_, title=title)


@inbox_app.command("reject")
def inbox_reject(
    ctx: typer.Context,
    ids: Ids = None,
    all_: Annotated[bool, typer.Option("--all", help="Every pending proposal.")] = False,
    type_: Annotated[Optional[str], typer.Option("--type", help="With --all: only proposals of this type.")] = None,
    json_: Json = False,
):
    """Decline proposals: each moves to memory/inbox/archive/ (kept, never deleted).

    Example: memcli inbox reject p-20261201-small-talk-1a2b3c
    """
    _decide(ctx, "inbox reject", ids, all_, type_, json_, "reject")


@inbox_app.command("edit")
def inbox_edit(
    ctx: typer.Context, id_: Annotated[str, typer.Argument(metavar="ID", help="The proposal id.")], json_: Json = False
):
    """Open a proposal in $VISUAL or $EDITOR before accepting it; it is checked when you save.

    Example: EDITOR=nano memcli inbox edit p-20261201-staging-deploys-need-the-vpn-5e268f
    """
    import os

    from . import editor as editors

    def act():
        m = memory(ctx)
        editor = editors.chosen("inbox edit ID")
        draft, before = m.inbox.edit_begin(id_)
        code = editors.run(editor, draft, lambda: os.unlink(draft))
        with open(draft, encoding="utf-8") as f:
            after = f.read()
        if code != 0:
            raise UsageError(f"the editor exited with {code}; nothing was changed (your text is kept in {draft})")
        try:
            res = m.inbox.edit_finish(id_, before, after)
        except MemcliError as e:
            e.message = f"{e.message} (your text is kept in {draft})"
            raise
        os.unlink(draft)
        return Out.of(res, lambda o: o.out(f"{res['action']} {res['path']}"))

    run(ctx, "inbox edit", json_, act)
