"""`memcli trust`: allow this root's memcli.yaml, as it is now, to run the commands it names
(and to switch off the checks it switches off); recorded in the user's state folder."""

from __future__ import annotations

import typer

from .. import render as r
from .app import Json, app, run, state
from .boundary import Out


@app.command()
def trust(ctx: typer.Context, json_: Json = False):
    """Let memcli.yaml run its commands (session.summarizer, reflect.extractor) on this machine, until it changes.

    A cloned memory repository never runs code by itself: read memcli.yaml first. The record
    is kept outside the root ($XDG_STATE_HOME/memcli/trust/), keyed by the root's real path and
    the file's SHA-256; `write.secrets: allow` in memcli.yaml needs the same step.

    Example: memcli trust
    """
    from ..config import find_root, trust as record

    def act():
        res = record(find_root(state(ctx).root))

        def human():
            cmds = res["commands"]
            r.talk("trusted memcli.yaml (sha256 " + res["sha256"][:12] + "…)"
                   + ("; it may now use: " + "; ".join(f"{k}: {v}" for k, v in cmds.items()) if cmds else ""))
            r.talk(f"recorded in {res['record']}")
        return Out(res, human)
    run(ctx, "trust", json_, act)
