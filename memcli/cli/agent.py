"""Commands that plug memcli into agents: the MCP server and the agent hooks."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .app import app, run, state
from .boundary import Out, stdin_bytes

hook_app = typer.Typer(help="Hooks an agent runs on its own events (reads the event's JSON on stdin).\n\n"
                            "Example: memcli hook claude-code < event.json", no_args_is_help=True)
app.add_typer(hook_app, name="hook")


@app.command()
def mcp(ctx: typer.Context):
    """Serve this memory to agents over the Model Context Protocol (stdio).

    Needs the mcp extra (pip install 'memcli[mcp]'). Tools: recall, should_recall, context,
    remember, update, forget, get, list, session_add, scope_set, scope_get, scope_check, heartbeat,
    reflect, reflect_material, propose, inbox;
    resources: memcli://index and memcli://memory/{id}. Claude Code: claude mcp add memcli -- memcli
    --root ~/notes mcp

    Example: memcli --root ~/notes mcp
    """
    def act():
        from ..config import find_root

        root = find_root(state(ctx).root)
        from ..mcp import serve  # a missing extra is a one-line error naming the install command

        serve(root)
        return Out(None)
    run(ctx, "mcp", False, act)


@hook_app.command("claude-code")
def claude_code(
    ctx: typer.Context,
    budget: Annotated[Optional[int], typer.Option("--budget", "-b", help="Token budget for the context block.")] = None,
):
    """Claude Code's UserPromptSubmit hook: memory context for prompts that need it.

    Reads the hook's JSON on stdin, records the prompt in the session named after session_id and
    prints the context block when should-recall says so. Broken input exits 1 (never 2, which
    would block the prompt). Runs without the CLI framework: it runs before every prompt.

    Example: echo '{"prompt": "用上次那个方案", "session_id": "s1"}' | memcli hook claude-code
    """
    from ..hooks import claude_code as hook, emit

    st = state(ctx)
    code = emit(hook(stdin_bytes(), st.root, budget, st.scope))
    if code:
        raise typer.Exit(code)
