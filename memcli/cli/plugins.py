"""`memcli plugins`: the installed plugins and what each adds."""

from __future__ import annotations

import typer

from .boundary import Out
from .typer_app import Json, app, run

WHAT = {
    "register_layers": "recall layers",
    "register_checks": "heartbeat checks",
    "register_commands": "commands",
    "register_providers": "embedding providers",
    "register_rule_sets": "rule sets",
}


@app.command("plugins")
def plugins_(ctx: typer.Context, json_: Json = False):
    """List the installed plugins (entry points of the memcli.plugins group) and what each adds.

    Reads the installed distributions again, so a plugin changed in place shows at once.

    Example: memcli plugins
    """
    from ..plugins import installed

    def act():
        found = installed(refresh=True)

        def human(o):
            for p in found:
                what = ", ".join(WHAT[h] for h in p["hooks"]) or "nothing"
                o.out(f"{p['name']}\t{p['dist']} {p['version']}\t{what}")
            if not found:
                o.talk("no plugin installed (a plugin is a package with a memcli.plugins entry point)")

        return Out({"plugins": found}, human)

    run(ctx, "plugins", json_, act)
