"""Commands of the cascade: recall, should-recall, session, scope, context."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .. import render as r
from ..requests import RecallRequest
from ..model import CONTEXT_BUDGET
from .boundary import Out
from .typer_app import Json, app, memory, run, state, takes

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


@app.command()
@takes(RecallRequest)
def recall(ctx: typer.Context, json_: Json = False, **options):
    """Find the memory that fits: session, then scope, then the index, then the details.

    The best hits, each with its confidence (strong, good, weak). -k N asks for up to N.
    Exit 1 when no memory shares an informative word with the query.
    `--type procedure --min-success 0.7` keeps the procedures that usually work.

    Example: memcli recall "MySQL中文查不到数据" --also "MySQL Chinese text garbled"
    """
    st = state(ctx)

    def act():
        sess, sc = st.names()
        m = st.memory()
        req = RecallRequest.of(options, query=st.text(options["query"], "query"), session=sess, scope=sc)
        if json_ or st.json or not st.out.tty(err=True):  # what an agent runs: nothing drawn
            res = m.recall_request(req)
        else:  # a person at a terminal: the first search of the details shows its progress
            from .progress import reporting

            with reporting(m, False, st.out):
                res = m.recall_request(req)
        out = Out.of(res)
        out.human = lambda o: r.recall(o, out.data, _bodies(m, out.data["hits"]) if o.tty() else None)
        out.code = 0 if out.data["hits"] else 1
        return out

    run(ctx, "recall", json_, act)


def _bodies(m, hits: list) -> dict:
    """{path: body} of the memories among the hits, for a person at a terminal."""
    from contextlib import suppress

    from ..errors import MemcliError

    found = {}
    for h in hits:
        with suppress(MemcliError):  # an episode, or a memory that cannot be read: its snippet
            found[h["path"]] = m.get(h["path"]).body
    return found


@app.command("should-recall")
def should_recall(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The user's message ('-' reads stdin).")],
    json_: Json = False,
):
    """Does this message need memory? explicit / implicit / none; exit 0 for yes, 1 for no.

    Example: memcli should-recall "用上次那个方案"
    """
    st = state(ctx)

    def act():
        res = st.memory().should_recall(st.text(text, "text"))
        return Out.of(res, lambda o: o.out(res["kind"]), code=0 if res["kind"] != "none" else 1)

    run(ctx, "should-recall", json_, act)


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
    st = state(ctx)

    def act():
        sess, sc = st.names()
        m = st.memory()
        res = m.context(st.text(query, "query") if query else None, budget=budget, session=sess, scope=sc)
        return Out.of(res, lambda o: o.write(res["text"]))

    run(ctx, "context", json_, act)


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
    st = state(ctx)

    def act():
        sess, _ = st.names(scope=False)
        m = st.memory()
        res = m.session(sess).add(role, st.text(text, "text"))

        def human(o):
            o.talk(
                f"session {res['session']}: {r.plural(res['turns'], 'turn')}"
                + (f"; folded {res['folded']} into the summary ({res['episode']})" if res["folded"] else "")
            )

        return Out.of(res, human, warnings=m.config.warnings)

    run(ctx, "session add", json_, act)


@session_app.command("show")
def session_show(ctx: typer.Context, json_: Json = False):
    """Print the session: its summary and recent turns.

    Example: memcli --session deploy session show
    """

    def act():
        sess, _ = state(ctx).names(scope=False)
        data = memory(ctx).session(sess).show()

        def human(o):
            if data.get("summary"):
                o.out("## Summary\n\n" + data["summary"] + "\n")
            if data["turns"]:
                o.out("## Recent turns\n")
                for t in data["turns"]:
                    o.out(f"**{t['role']}**: {t['text']}")
            if not data.get("summary") and not data["turns"]:
                o.talk(f"session {sess} is empty")

        return Out.of(data, human)

    run(ctx, "session show", json_, act)


@session_app.command("clear")
def session_clear(ctx: typer.Context, json_: Json = False):
    """End the session; its turns and summary go to the episode log first.

    Example: memcli --session deploy session clear
    """

    def act():
        sess, _ = state(ctx).names(scope=False)
        res = memory(ctx).session(sess).clear()
        return Out.of(
            res, lambda o: o.talk(f"session {sess} cleared" + (f"; kept in {res['episode']}" if res["episode"] else ""))
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
        _, sc = state(ctx).names(session=False)
        res = memory(ctx).scope(sc).start(state(ctx).text(task, "task"))
        return Out.of(res, lambda o: o.talk(f"scope {sc} started: {res['task']}"))

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
    st = state(ctx)

    def act():
        _, sc = st.names(session=False)
        res = st.memory().scope(sc).set(key, st.text(value, "value"), agent or "", force)
        return Out.of(res, lambda o: o.talk(f"{key} set by {agent}"))

    run(ctx, "scope set", json_, act)


@scope_app.command("get")
def scope_get(ctx: typer.Context, key: Annotated[str, typer.Argument(help="The key.")], json_: Json = False):
    """Print one key's value (exit 1 when the key is not set).

    Example: memcli scope get editedArticle
    """

    def act():
        _, sc = state(ctx).names(session=False)
        res = memory(ctx).scope(sc).get(key)
        if res["value"] is None:
            return Out.of(res, lambda o: o.talk(f"{key} is not set in scope {sc}"), code=1)
        return Out.of(res, lambda o: o.out(str(res["value"])))

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
        _, sc = state(ctx).names(session=False)
        res = memory(ctx).scope(sc).read(agent, keys)

        def human(o):
            for k, v in res["keys"].items():
                o.out(f"## {k}\n\n{v}\n")
            if res["missing"]:
                o.talk(f"not set: {', '.join(res['missing'])}")

        return Out.of(res, human, code=1 if res["missing"] else 0)

    run(ctx, "scope read", json_, act)


@scope_app.command("show")
def scope_show(ctx: typer.Context, json_: Json = False):
    """Print the whole scope: task, keys, owners.

    Example: memcli --scope article scope show
    """
    from ..model import short

    def act():
        _, sc = state(ctx).names(session=False)
        data = memory(ctx).scope(sc).show()

        def human(o):
            if data is None:
                o.talk(f"scope {sc} is not started")
                return
            o.out(f"# Scope {sc}" + (f": {data['task']}" if data.get("task") else ""))
            for k, v in data["keys"].items():
                o.out(f"- {k} ({v['agent']}): {short(v['value'], 100)}")

        return Out(data.to_dict() if data is not None else None, human)

    run(ctx, "scope show", json_, act)


@scope_app.command("check")
def scope_check(ctx: typer.Context, json_: Json = False):
    """List collisions and keys written by several agents (exit 1 if any).

    Example: memcli scope check --json
    """

    def act():
        _, sc = state(ctx).names(session=False)
        res = memory(ctx).scope(sc).check()

        def human(o):
            for c in res["collisions"]:
                o.out(
                    f"collision: {c['key']} owned by {c['owner']}, written by {c['agent']}"
                    f" ({'forced' if c['forced'] else 'refused'}) at {c['time']}"
                )
            for s in res["shared_keys"]:
                o.out(f"shared key: {s['key']} written by {', '.join(s['writers'])}")
            if not res["collisions"] and not res["shared_keys"]:
                o.out("no collisions")

        return Out.of(res, human, code=1 if res["collisions"] or res["shared_keys"] else 0)

    run(ctx, "scope check", json_, act)


@scope_app.command("end")
def scope_end(ctx: typer.Context, json_: Json = False):
    """Clear the scope; its final state goes to the episode log.

    Example: memcli --scope article scope end
    """

    def act():
        _, sc = state(ctx).names(session=False)
        res = memory(ctx).scope(sc).end()
        return Out.of(
            res,
            lambda o: o.talk(
                f"scope {sc} ended"
                + (f"; kept in {res['episode']}" if res["episode"] else "" if res.warnings else " (it was not started)")
            ),
        )

    run(ctx, "scope end", json_, act)
