"""Commands that plug memcli into agents: the MCP server and the agent hooks."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .typer_app import Json, app, root_of, run, state
from .boundary import Out

hook_app = typer.Typer(
    help="Hooks an agent runs on its own events (reads the event's JSON on stdin), and the "
    "roots they may use (allow, deny, list).\n\n"
    "Example: memcli hook claude-code < event.json",
)  # no help for a bare `memcli hook`: an agent runs it, and gets one line and exit 1 (boundary.HOOK)
app.add_typer(hook_app, name="hook")


@app.command()
def mcp(ctx: typer.Context):
    """Serve this memory to agents over the Model Context Protocol (stdio).

    Needs the mcp extra (without it, it names the command that adds it to this install). Tools:
    recall, should_recall, context, remember, update, forget, get, list, session_add, scope_set,
    scope_get, scope_check, heartbeat, reflect, reflect_material, propose, inbox;
    resources: memcli://index and memcli://memory/{id}. Claude Code: claude mcp add memcli -- memcli
    --root ~/notes mcp

    Example: memcli --root ~/notes mcp
    """

    def act():
        root = root_of(ctx)
        from ..mcp import serve  # a missing extra is a one-line error naming the install command

        serve(root)
        return Out(None)

    run(ctx, "mcp", False, act)


@hook_app.command("claude-code")
def claude_code(
    ctx: typer.Context,
    budget: Annotated[
        Optional[int], typer.Option("--budget", "-b", metavar="TOKENS", help="Token budget for the context block.")
    ] = None,
    root: Annotated[
        Optional[str], typer.Option("--root", help="The memory root, as the global --root (either place).")
    ] = None,
    json_: Json = False,
):
    """An agent's hook (Claude Code, Codex, Gemini CLI): the index, memory for prompts, replies kept.

    Reads the event's JSON on stdin; its hook_event_name says which. SessionStart prints the
    index as additionalContext; UserPromptSubmit (Gemini: BeforeAgent) records the prompt in
    the session named after session_id and prints the context block when should-recall says
    so; Stop (AfterAgent) records the assistant's reply; SessionEnd puts the session in the
    episode log. `memcli agents add` wires it. The root is
    --root, MEMCLI_ROOT or the nearest one above the prompt's cwd that `memcli hook
    allow` registered; no other is touched. Broken input or arguments exit 1 (never 2,
    which would block the prompt).

    Example: echo '{"prompt": "用上次那个方案", "session_id": "s1"}' | memcli hook claude-code
    """
    from .. import hooks

    st = state(ctx)
    where, call = root or st.root, st.call
    admit = call.admit
    served = None if admit is None else (lambda found: admit("hook claude-code", lambda: found))
    res = hooks.claude_code(call.stdin(), where, budget, st.scope, call.env, call.cwd, admit=served)
    code = hooks.answer(res, st.out, as_json=json_ or st.json)
    if call.admit is None and res.root is not None:  # answered here: a server answers the next prompts
        from .. import resident

        resident.start(str(res.root))
    if code:
        raise typer.Exit(code)


Where = Annotated[Optional[str], typer.Argument(metavar="PATH", help="A memory root (default: the current root).")]


@hook_app.command("allow")
def hook_allow(ctx: typer.Context, path: Where = None, json_: Json = False):
    """Let the hook use this root when a prompt's folder is in it (recorded outside the root).

    The hook then records every prompt in the root's session; turns beyond session.max_rounds
    fold into memory/episodes/, which `memcli sync` commits. A root that was never allowed is
    ignored (one line on stderr), so a MEMORY.md in a cloned or shared folder gets no prompts.

    Example: memcli hook allow ~/notes
    """
    from ..trust import allow_hook_root

    def act():
        root = root_of(ctx, path)
        added = allow_hook_root(root)

        def human(o):
            o.talk(
                f"the hook {'now uses' if added else 'already used'} {root}: it records every prompt there "
                "(turns beyond session.max_rounds go into memory/episodes/, which sync commits)"
            )
            o.out(str(root))

        return Out({"root": str(root), "added": added}, human)

    run(ctx, "hook allow", json_, act)


@hook_app.command("deny")
def hook_deny(ctx: typer.Context, path: Where = None, json_: Json = False):
    """Stop the hook from using this root (its files stay as they are).

    Example: memcli hook deny ~/notes
    """
    from ..trust import deny_hook_root, real

    def act():
        root = real(path) if path else str(root_of(ctx))
        removed = deny_hook_root(root)

        def human(o):
            o.talk(f"the hook no longer uses {root}" if removed else f"{root} was not allowed; nothing changed")
            o.out(str(root))

        return Out({"root": str(root), "removed": removed}, human)

    run(ctx, "hook deny", json_, act)


@hook_app.command("list")
def hook_list(ctx: typer.Context, json_: Json = False):
    """The roots the hook may use (besides --root and MEMCLI_ROOT).

    Example: memcli hook list
    """
    from ..trust import hook_roots

    def act():
        roots = hook_roots()

        def human(o):
            for x in roots:
                o.out(x)
            if not roots:
                o.talk("no root allowed: the hook acts only with --root or MEMCLI_ROOT (`memcli hook allow PATH`)")

        return Out({"roots": roots}, human)

    run(ctx, "hook list", json_, act)
