"""`memcli outcome ID success|failure [--note TEXT]`: a procedure worked or failed."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .typer_app import Json, app, memory, run
from .boundary import Out
from .complete import MemoryId


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
