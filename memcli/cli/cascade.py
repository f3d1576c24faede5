"""Commands of the cascade: recall, should-recall, session, scope, context."""

from __future__ import annotations

from typing import List, Optional

import typer
from typing import Annotated

from .. import render as r
from ..frontend import CONTEXT_BUDGET
from .typer_app import Json, app, memory, options, run, state
from .boundary import Out, State, names, recall_action, should_recall_action, text_arg
from .complete import layer_help, layers

session_app = typer.Typer(
    help="The short-term layer: recent turns plus a summary.\n\n"
    'Example: memcli session add user "deploy it like last time"',
    no_args_is_help=True,
)
scope_app = typer.Typer(
    help="The current task's shared keys, with collision detection.\n\n"
    'Example: memcli scope set plan "ship friday" --agent Planner',
    no_args_is_help=True,
)
app.add_typer(session_app, name="session")
app.add_typer(scope_app, name="scope")


def _names(ctx):
    st = state(ctx)
    return names(st.session, st.scope)


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for ('-' reads stdin).")],
    limit: Annotated[Optional[int], typer.Option("--limit", "-k", metavar="N", help="At most this many hits.")] = None,
    deep: Annotated[bool, typer.Option("--deep", help="Search every layer and merge (not with --layer).")] = False,
    layer: Annotated[Optional[str], typer.Option("--layer", "-l", help=layer_help(), autocompletion=layers)] = None,
    threshold: Annotated[
        Optional[float],
        typer.Option(
            "--threshold",
            metavar="FLOAT",
            help="The confidence a hit needs to count as an answer and to be injected (default recall.threshold, "
            "fitted); 0 counts every hit.",
        ),
    ] = None,
    inbox: Annotated[bool, typer.Option("--inbox", help="Also search the proposals waiting in memory/inbox/.")] = False,
    type_: Annotated[Optional[str], typer.Option("--type", help="Only memories of this type (e.g. procedure).")] = None,
    min_success: Annotated[
        Optional[float],
        typer.Option(
            "--min-success",
            metavar="RATE",
            help="Only memories whose smoothed success rate (memcli outcome) reaches RATE, 0..1.",
        ),
    ] = None,
    also: Annotated[
        Optional[List[str]],
        typer.Option(
            "--also",
            metavar="TEXT",
            help="Another phrasing of the same question (repeatable): a translation into the other language, a "
            "paraphrase. The results are fused by rank.",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Only hits reaching the threshold, never weak candidates: for memory put into a prompt."
        ),
    ] = False,
    json_: Json = False,
):
    """Find the memory that fits: session, then scope, then the index, then the details.

    The best hits, each with its confidence (strong, good, weak). -k N asks for up to N.
    Exit 1 when no memory shares an informative word with the query.
    `--type procedure --min-success 0.7` keeps the procedures that usually work.

    Example: memcli recall "MySQL中文查不到数据" --also "MySQL Chinese text garbled"
    """
    st = state(ctx)
    st = State(st.root, json_ or st.json, st.session, st.scope)  # --json after the command counts too
    run(ctx, "recall", json_, lambda: recall_action(st, **options(ctx)))


@app.command("should-recall")
def should_recall(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The user's message ('-' reads stdin).")],
    json_: Json = False,
):
    """Does this message need memory? explicit / implicit / none; exit 0 for yes, 1 for no.

    Example: memcli should-recall "用上次那个方案"
    """
    run(ctx, "should-recall", json_, lambda: should_recall_action(state(ctx), text))


@app.command()
def context(
    ctx: typer.Context,
    query: Annotated[Optional[str], typer.Argument(help="Recall memories for this query too.")] = None,
    budget: Annotated[
        Optional[int],
        typer.Option(
            "--budget", "-b", metavar="TOKENS", help=f"Token budget for the whole block (default {CONTEXT_BUDGET})."
        ),
    ] = None,
    json_: Json = False,
):
    """One Markdown block for a prompt, trimmed to a token budget.

    Example: memcli context "deploy to staging" --budget 800
    """
    from .boundary import context_action

    run(ctx, "context", json_, lambda: context_action(state(ctx), query, budget))


# ---------------------------------------------------------------- session


@session_app.command("add")
def session_add(
    ctx: typer.Context,
    role: Annotated[str, typer.Argument(help="user | assistant | system | tool")],
    text: Annotated[str, typer.Argument(help="The turn's text ('-' reads stdin).")],
    json_: Json = False,
):
    """Add a turn; beyond session.max_rounds the oldest turns are folded into the summary.

    Example: memcli session add user "用上次那个方案部署"
    """
    from .boundary import session_add_action

    run(ctx, "session add", json_, lambda: session_add_action(state(ctx), role, text))


@session_app.command("show")
def session_show(ctx: typer.Context, json_: Json = False):
    """Print the session: its summary and recent turns.

    Example: memcli --session deploy session show
    """

    def act():
        sess, _ = _names(ctx)
        data = memory(ctx).session(sess).show()

        def human():
            if data.get("summary"):
                r.out("## Summary\n\n" + data["summary"] + "\n")
            if data["turns"]:
                r.out("## Recent turns\n")
                for t in data["turns"]:
                    r.out(f"**{t['role']}**: {t['text']}")
            if not data.get("summary") and not data["turns"]:
                r.talk(f"session {sess} is empty")

        return Out.of(data, human)

    run(ctx, "session show", json_, act)


@session_app.command("clear")
def session_clear(ctx: typer.Context, json_: Json = False):
    """End the session; its turns and summary go to the episode log first.

    Example: memcli --session deploy session clear
    """

    def act():
        sess, _ = _names(ctx)
        res = memory(ctx).session(sess).clear()
        return Out.of(
            res, lambda: r.talk(f"session {sess} cleared" + (f"; kept in {res['episode']}" if res["episode"] else ""))
        )

    run(ctx, "session clear", json_, act)


# ---------------------------------------------------------------- scope


@scope_app.command("start")
def scope_start(
    ctx: typer.Context, task: Annotated[str, typer.Argument(help="What the task is.")], json_: Json = False
):
    """Start a task's scope; an unended one is moved to the episode log.

    Example: memcli scope start "write the weekly article"
    """

    def act():
        _, sc = _names(ctx)
        res = memory(ctx).scope(sc).start(text_arg(task, "task"))
        return Out.of(res, lambda: r.talk(f"scope {sc} started: {res['task']}"))

    run(ctx, "scope start", json_, act)


@scope_app.command("set")
def scope_set(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The key.")],
    value: Annotated[str, typer.Argument(help="The value ('-' reads stdin).")],
    agent: Annotated[str, typer.Option("--agent", help="Who writes it.")],
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite another agent's key (logged as a collision).")
    ] = False,
    json_: Json = False,
):
    """Write a key. Another agent's key is refused (exit 4) unless --force.

    Example: memcli scope set editedArticle "..." --agent Editor
    """
    from .boundary import scope_set_action

    run(ctx, "scope set", json_, lambda: scope_set_action(state(ctx), key, value, agent, force))


@scope_app.command("get")
def scope_get(ctx: typer.Context, key: Annotated[str, typer.Argument(help="The key.")], json_: Json = False):
    """Print one key's value (exit 1 when the key is not set).

    Example: memcli scope get editedArticle
    """

    def act():
        _, sc = _names(ctx)
        res = memory(ctx).scope(sc).get(key)
        if res["value"] is None:
            return Out.of(res, lambda: r.talk(f"{key} is not set in scope {sc}"), code=1)
        return Out.of(res, lambda: r.out(str(res["value"])))

    run(ctx, "scope get", json_, act)


@scope_app.command("read")
def scope_read(
    ctx: typer.Context,
    keys: Annotated[List[str], typer.Argument(help="The keys this agent needs.")],
    agent: Annotated[str, typer.Option("--agent", help="Who reads.")] = "",
    json_: Json = False,
):
    """Give an agent only the keys it asks for (exit 1 when one is not set).

    Example: memcli scope read --agent Formatter editedArticle
    """

    def act():
        _, sc = _names(ctx)
        res = memory(ctx).scope(sc).read(agent, keys)

        def human():
            for k, v in res["keys"].items():
                r.out(f"## {k}\n\n{v}\n")
            if res["missing"]:
                r.talk(f"not set: {', '.join(res['missing'])}")

        return Out.of(res, human, code=1 if res["missing"] else 0)

    run(ctx, "scope read", json_, act)


@scope_app.command("show")
def scope_show(ctx: typer.Context, json_: Json = False):
    """Print the whole scope: task, keys, owners.

    Example: memcli --scope article scope show
    """
    from ..model import short

    def act():
        _, sc = _names(ctx)
        data = memory(ctx).scope(sc).show()

        def human():
            if data is None:
                r.talk(f"scope {sc} is not started")
                return
            r.out(f"# Scope {sc}" + (f": {data['task']}" if data.get("task") else ""))
            for k, v in data["keys"].items():
                r.out(f"- {k} ({v['agent']}): {short(v['value'], 100)}")

        return Out(data.to_dict() if data is not None else None, human)

    run(ctx, "scope show", json_, act)


@scope_app.command("check")
def scope_check(ctx: typer.Context, json_: Json = False):
    """List collisions and keys written by several agents (exit 1 if any).

    Example: memcli scope check --json
    """

    def act():
        _, sc = _names(ctx)
        res = memory(ctx).scope(sc).check()

        def human():
            for c in res["collisions"]:
                r.out(
                    f"collision: {c['key']} owned by {c['owner']}, written by {c['agent']}"
                    f" ({'forced' if c['forced'] else 'refused'}) at {c['time']}"
                )
            for s in res["shared_keys"]:
                r.out(f"shared key: {s['key']} written by {', '.join(s['writers'])}")
            if not res["collisions"] and not res["shared_keys"]:
                r.out("no collisions")

        return Out.of(res, human, code=1 if res["collisions"] or res["shared_keys"] else 0)

    run(ctx, "scope check", json_, act)


@scope_app.command("end")
def scope_end(ctx: typer.Context, json_: Json = False):
    """Clear the scope; its final state goes to the episode log.

    Example: memcli --scope article scope end
    """

    def act():
        _, sc = _names(ctx)
        res = memory(ctx).scope(sc).end()
        return Out.of(
            res,
            lambda: r.talk(
                f"scope {sc} ended"
                + (f"; kept in {res['episode']}" if res["episode"] else "" if res.warnings else " (it was not started)")
            ),
        )

    run(ctx, "scope end", json_, act)
