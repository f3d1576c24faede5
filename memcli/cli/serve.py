"""`memcli serve`: keep the embedding model of the `semantic` extra loaded for this root."""

from __future__ import annotations

import typer

from .. import render as r
from .app import Json, app, memory, run
from .boundary import Out


@app.command()
def serve(ctx: typer.Context, json_: Json = False):
    """Hold the semantic extra's model and vectors, answering this root's recalls over a socket.

    The socket lives in a folder only you can enter ($XDG_RUNTIME_DIR/memcli, else
    ~/.cache/memcli/run); a socket or folder another user could own is never used. A recall that needs embeddings asks this process instead of loading the model itself, and
    does the work itself when no server answers. Stops cleanly on Ctrl-C or SIGTERM.

    Example: memcli serve &
    """
    import signal

    from ..errors import Refused, UsageError

    def act():
        from .. import serve as server_mod
        from ..search import semantic

        if not semantic.enabled():
            raise UsageError("memcli serve needs the semantic extra: pip install 'memcli[semantic]'")
        server = server_mod.Server(memory(ctx).root)
        try:
            sock = server.bind()
        except RuntimeError as e:
            raise Refused(str(e)) from None
        r.talk(f"memcli: serving {server.mem.root} on {server.path}")
        why: list = []

        def on_signal(signum, frame):
            why.append(signal.Signals(signum).name)
            raise KeyboardInterrupt

        old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            server.serve(sock)
        except KeyboardInterrupt:
            pass
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        res = {"root": str(server.mem.root), "socket": str(server.path), "stopped_by": why[0] if why else None}
        return Out(res, lambda: r.talk("memcli: stopped serving"))
    run(ctx, "serve", json_, act)
