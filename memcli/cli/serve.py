"""`memcli serve`: keep memcli loaded for this root and answer its per-turn commands over a socket."""

from __future__ import annotations

from typing import Optional

import typer
from typing import Annotated

from .. import render as r
from .typer_app import Json, app, memory, output, run
from .boundary import Out


@app.command()
def serve(
    ctx: typer.Context,
    idle_exit: Annotated[
        Optional[str],
        typer.Option(
            "--idle-exit",
            metavar="DURATION",
            help="Exit after this long without a request (e.g. 10m); default: run until stopped.",
        ),
    ] = None,
    json_: Json = False,
):
    """Keep memcli loaded for this root and run its per-turn commands for any process of yours.

    recall, should-recall, context, session add, remember, scope set and the agent hook then run
    here in a few milliseconds instead of a cold start, and a recall that needs embeddings finds
    the model loaded. A command asks the server of its root and runs in its own process when none answers, with
    the same output either way. The socket lives in a folder only you can enter
    ($XDG_RUNTIME_DIR/memcli, else memcli-UID in the temp folder); a socket, folder or process
    of another user is never used. A per-turn command run in its own process starts one by itself
    (exiting after ten idle minutes) unless MEMCLI_SERVE=off or manual. Stops cleanly on Ctrl-C or
    SIGTERM.

    Example: memcli serve --idle-exit 10m &
    """
    from ..errors import Refused
    from ..serve import Resident
    from .long_running import seconds, until_signal

    def act():
        idle = None if idle_exit is None else seconds(idle_exit, "--idle-exit", positive=False)
        server = Resident(memory(ctx), idle=idle)
        try:
            server.lock()
            server.preload()
            sock = server.bind()
        except RuntimeError as e:
            raise Refused(str(e)) from None
        output(ctx).talk(f"memcli: serving {server.root} on {server.path}")
        with until_signal(server.stop) as why:
            stopped = server.serve(sock)
        res = {
            "root": server.root,
            "socket": server.path,
            "stopped_by": why[0] if why else stopped,
            "served": server.served,
        }
        said = f"memcli: stopped serving ({res['stopped_by']}, {r.plural(server.served, 'command')} run)"
        return Out(res, lambda o: o.talk(said))

    run(ctx, "serve", json_, act)
