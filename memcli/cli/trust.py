"""`memcli trust`: allow this root's memcli.yaml, as it is now, to run the commands it names
(and to switch off the checks it switches off); recorded in the user's state folder."""

from __future__ import annotations

import typer

from .typer_app import Json, app, memory, run
from .boundary import Out


@app.command()
def trust(ctx: typer.Context, json_: Json = False):
    """Let memcli.yaml run its commands (session.summarizer, reflect.extractor) and loosen settings, until it changes.

    A cloned memory repository never runs code by itself: read memcli.yaml first, and the files
    in the root its commands name (their SHA-256, or their absence, is recorded too: a command
    whose file changed, appeared or was relinked since is not run; a command line that cannot be
    analysed, such as `$VAR` or `sh -c`, is refused). The record is kept outside the root
    ($XDG_STATE_HOME/memcli/trust/), keyed by the root's real path and the file's SHA-256. A
    setting that protects you (write.*, inbox.auto_accept, reflect.on_fold, embed.*) counts from
    memcli.yaml only where it tightens yours, or after this step (docs/safety.md).

    Example: memcli trust
    """

    def act():
        res = memory(ctx).trust()

        def human(o):
            cmds = res["commands"]
            uses = ("; it may now use: " + "; ".join(f"{k}: {v}" for k, v in cmds.items())) if cmds else ""
            o.talk(f"trusted memcli.yaml (sha256 {res['sha256'][:12]}…){uses}")
            present = [w for w, d in res["files"].items() if d]
            if res["files"]:
                absent = len(res["files"]) - len(present)
                o.talk(
                    f"and the files they run: {', '.join(present) or 'none'}; {absent} absent (one added is a change)"
                )
            if res.get("loosens"):
                o.talk("it may now loosen: " + "; ".join(f"{k}: {v}" for k, v in res["loosens"].items()))
            o.talk(f"recorded in {res['record']}")

        return Out.of(res, human)

    run(ctx, "trust", json_, act)
