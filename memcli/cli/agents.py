"""`memcli agents add|list|remove` (memcli's MCP server and hooks in each agent's own
configuration) and `memcli doctor` (every wired agent checked for real)."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import render as r
from .boundary import Out
from .typer_app import Json, app, run, state

agents_app = typer.Typer(
    help="Wire memcli into the agents you run: add (claude-code, codex, gemini; any other MCP client "
    "gets the snippet to paste), list, remove.\n\nExample: memcli agents add claude-code",
    no_args_is_help=True,
)
app.add_typer(agents_app, name="agents")

Scope = Annotated[
    str,
    typer.Option(
        "--scope", metavar="user|project", help="The user's own files, or the project's (the current folder)."
    ),
]


@agents_app.command("add")
def agents_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="claude-code, codex, gemini, or any other MCP client.")],
    scope: Scope = "user",
    json_: Json = False,
):
    """Add memcli's MCP server and hooks to an agent's configuration, for this root.

    Merges with what is there (every key you wrote stays; the old file is kept beside it as
    FILE.memcli-backup; a second run changes nothing) and lets the hook use the root (`memcli hook
    allow`). Claude Code and Codex get SessionStart, UserPromptSubmit, Stop and SessionEnd; Gemini
    CLI SessionStart, BeforeAgent, AfterAgent and SessionEnd. Any other name: the snippet to paste.

    Example: memcli --root ~/notes agents add claude-code
    """
    from ..core import Memory
    from ..frontend import find_root

    def act():
        root = find_root(state(ctx).root)
        agents = Memory.agents()
        if name not in ("claude-code", "codex", "gemini"):
            snip = agents.snippet(root)

            def paste():
                r.talk(f"memcli does not edit {name}'s files; give it this MCP server (stdio):")
                r.out(snip["command"])
                r.talk("or, where it reads a JSON block of servers:")
                r.out(snip["json"])

            return Out({"agent": name, "snippet": snip}, paste)
        res = agents.add(name, root, scope)

        def human():
            _wrote(res)
            if not res["changed"]:
                r.talk(f"{name} already had memcli for {root}; nothing changed")
            r.out(f"{name} ({scope}): MCP server `memcli` in {res['mcp']['file']}")
            r.out(f"{name} ({scope}): hooks {', '.join(res['hooks']['events'])} in {res['hooks']['file']}")
            r.out(f"root {root} (allowed for the hook); check it all with `memcli doctor`")
            if res["note"]:
                r.talk(res["note"])

        return Out(res, human)

    run(ctx, "agents add", json_, act)


def _wrote(res: dict) -> None:
    for f in res["changed"]:
        kept = next((b for b in res["backups"] if b.startswith(f)), None)
        r.talk(f"wrote {f}" + (f" (the old one is {kept})" if kept else ""))


@agents_app.command("list")
def agents_list(ctx: typer.Context, json_: Json = False):
    """The agents memcli is wired into, for the user and for this project: files, root, events.

    Example: memcli agents list
    """
    from ..core import Memory

    def act():
        rows = Memory.agents().listing()

        def human():
            for x in rows:
                events = ", ".join((x["hooks"] or {}).get("events", {})) or "no hooks"
                r.out(
                    f"{x['agent']} ({x['scope']}): root {x['root'] or '?'}; MCP {'yes' if x['mcp'] else 'no'}; {events}"
                )
            if not rows:
                r.talk("no agent has memcli yet: `memcli agents add claude-code` (or codex, gemini)")

        return Out({"agents": rows}, human)

    run(ctx, "agents list", json_, act)


@agents_app.command("remove")
def agents_remove(
    ctx: typer.Context, name: Annotated[str, typer.Argument(metavar="NAME")], scope: Scope = "user", json_: Json = False
):
    """Take memcli's MCP server and hooks out of an agent's configuration (the rest stays).

    Example: memcli agents remove codex
    """
    from ..core import Memory

    def act():
        res = Memory.agents().remove(name, scope)

        def human():
            _wrote(res)
            r.out(f"{name} ({scope}): memcli removed" if res["changed"] else f"{name} ({scope}) had no memcli")

        return Out(res, human)

    run(ctx, "agents remove", json_, act)


@app.command()
def doctor(ctx: typer.Context, json_: Json = False):
    """Check every agent memcli is wired into, for real; exit 1 when something fails.

    Runs each hook command with a sample event and starts the MCP server and lists its tools
    (each in its own process), says what the agent gets and what to fix, and gives each root's
    health in one line (heartbeat's summary).

    Example: memcli doctor
    """
    from ..core import Memory

    def act():
        res = Memory.doctor()

        def human():
            for x in res["agents"]:
                r.out(f"{x['title']} ({x['scope']}), root {x['root'] or '?'}")
                for c in x["checks"]:
                    fix = f" -> fix: {c['fix']}" if c["fix"] else ""
                    r.out(f"  {'ok  ' if c['ok'] else 'FAIL'} {c['what']}: {c['said']}{fix}")
                if x["note"] and all(c["fix"] != x["note"] for c in x["checks"]):
                    r.out(f"  note: {x['note']}")
            for h in res["roots"]:
                r.out(f"root {h['root']}: {r.heartbeat_head(h['summary']) if h['summary'] else h['said']}")
            if not res["agents"]:
                r.talk("no agent has memcli yet: `memcli agents add claude-code` (or codex, gemini)")

        return Out.of(res, human, code=0 if res["ok"] and res["agents"] else 1)

    run(ctx, "doctor", json_, act)
