"""`memcli agents add|list|remove` (memcli's MCP server and hooks in each agent's own files) and
`memcli doctor` (every wired agent checked for real)."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import render as r
from .boundary import Out
from .typer_app import Json, app, root_of, run

agents_app = typer.Typer(
    help="Wire memcli into the agents you run (claude-code, codex, gemini; any other MCP client gets "
    "the command to paste): add, list, remove.\n\nExample: memcli agents add claude-code",
    no_args_is_help=True,
)
app.add_typer(agents_app, name="agents")
Name = Annotated[str, typer.Argument(metavar="NAME", help="claude-code, codex, gemini (add: or any MCP client).")]
Scope = Annotated[str, typer.Option("--scope", metavar="user|project", help="Your own files, or this folder's.")]


def _wrote(o: r.Output, res: dict, said: str = "") -> None:
    for f in res["changed"]:
        o.talk(f"wrote {f}" + (f" (the old one: {f}.memcli-backup)" if f + ".memcli-backup" in res["backups"] else ""))
    if said:
        o.out(said)


@agents_app.command("add")
def agents_add(ctx: typer.Context, name: Name, scope: Scope = "user", json_: Json = False):
    """Add memcli's MCP server and hooks for this root to an agent's own files.

    Merges with what is there (every key you wrote stays, the old file stays beside it as
    FILE.memcli-backup, a second run changes nothing) and lets the hook use the root. Claude
    Code and Codex get SessionStart, UserPromptSubmit, Stop and SessionEnd; Gemini CLI
    SessionStart, BeforeAgent, AfterAgent and SessionEnd. Any other name: the command to paste.

    Example: memcli --root ~/notes agents add claude-code
    """
    from ..core import Memory

    def act():
        res = Memory.agents().add(name, root_of(ctx), scope)

        def human(o):
            if "snippet" in res:
                o.talk(f"memcli does not edit {name}'s files; give it this MCP server (stdio), or the JSON block:")
                o.out(res["snippet"]["command"])
                return o.out(res["snippet"]["json"])
            _wrote(o, res)
            o.out(
                f"{name} ({scope}): the MCP server in {res['files'][0]}, hooks {', '.join(res['events'])} in "
                f"{res['files'][1]}; the hook may use {res['root']}. Check it: memcli doctor"
            )
            if res["note"] or not res["changed"]:
                o.talk(res["note"] or "nothing changed: it was there already")

        return Out(res, human)

    run(ctx, "agents add", json_, act)


@agents_app.command("list")
def agents_list(ctx: typer.Context, json_: Json = False):
    """The agents memcli is wired into, for you and for this folder: root, server, events.

    Example: memcli agents list
    """
    from ..core import Memory

    def act():
        rows = Memory.agents().listing()

        def human(o):
            for x in rows:
                hooks = ", ".join((x["hooks"] or {}).get("events", {})) or "no hooks"
                o.out(f"{x['agent']} ({x['scope']}): root {x['root'] or '?'}, server {bool(x['mcp'])}, {hooks}")
            if not rows:
                o.talk("no agent has memcli: memcli agents add claude-code (or codex, gemini)")

        return Out({"agents": rows}, human)

    run(ctx, "agents list", json_, act)


@agents_app.command("remove")
def agents_remove(ctx: typer.Context, name: Name, scope: Scope = "user", json_: Json = False):
    """Take memcli's MCP server and hooks out of an agent's files (the rest stays).

    Example: memcli agents remove codex
    """
    from ..core import Memory

    def act():
        res = Memory.agents().remove(name, scope)
        return Out(
            res,
            lambda o: _wrote(o, res, f"{name} ({scope}): memcli {'removed' if res['changed'] else 'was not there'}"),
        )

    run(ctx, "agents remove", json_, act)


@app.command()
def doctor(ctx: typer.Context, json_: Json = False):
    """Check every agent memcli is wired into, for real; exit 1 when a check fails.

    Runs each hook command with a sample event and starts the MCP server and lists its tools,
    each in its own process; says what the agent gets and what to fix, and each root's health
    in one line (heartbeat's summary).

    Example: memcli doctor
    """
    from ..core import Memory

    def act():
        res = Memory.doctor()

        def human(o):
            for x in res["agents"]:
                o.out(f"{x['agent']} ({x['scope']}), root {x['root'] or '?'}")
                for c in x["checks"]:
                    o.out(
                        f"  {'ok  ' if c['ok'] else 'FAIL'} {c['what']}: {c['said']}"
                        + (f" -> fix: {c['fix']}" if c["fix"] else "")
                    )
                if x["note"] and all(c["fix"] != x["note"] for c in x["checks"]):
                    o.out(f"  note: {x['note']}")
            for h in res["roots"]:
                o.out(f"root {h['root']}: {r.heartbeat_head(h['summary']) if h['summary'] else h['said']}")
            if not res["agents"]:
                o.talk("no agent has memcli: memcli agents add claude-code (or codex, gemini)")

        return Out.of(res, human, code=0 if res["ok"] and res["agents"] else 1)

    run(ctx, "doctor", json_, act)
