"""Moving memories in and out: `export` (JSON lines) and `import` (an export, Markdown, another
agent's memory file)."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import render as r
from ..model import LISTED_IDS
from .boundary import Out, read_input
from .progress import reporting
from .typer_app import Json, app, memory, output, run, state


@app.command()
def export(
    ctx: typer.Context,
    archived: Annotated[bool, typer.Option("--archived/--no-archived", help="Include memory/archive/.")] = True,
    json_: Json = False,
):
    """Print every memory as JSON lines, one memory a line (read back by `memcli import`).

    Example: memcli export > backup.jsonl
    """

    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            data = m.export(archived=archived)

        def human(o):
            o.write(r.jsonl(data["memories"]))
            for p in data["problems"]:
                o.warn(f"not exported: {p}")

        return Out.of(data, human)

    run(ctx, "export", json_, act)


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="A JSONL export, a folder of Markdown, a Markdown file, or an agent's "
            "MEMORY.md of bullet lines ('-' reads stdin)."
        ),
    ],
    json_: Json = False,
):
    """Add memories from an export, a Markdown folder or another agent's memory file.

    Existing ids are skipped, never overwritten.

    Example: memcli import ~/.claude/projects/x/memory/MEMORY.md
    """

    def act():
        st = state(ctx)
        text = read_input(st.call, source, None, "import", 100_000_000) if source == "-" else None
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            data = m.import_(source, text)

        def human(o):
            for i in data["imported"]:
                o.out(i)
            skipped = data["skipped"]
            o.talk(
                f"imported {r.plural(len(data['imported']), 'memory', 'memories')} ({data['kind']})"
                + (f"; skipped {len(skipped)}" if skipped else "")
            )
            for s in skipped if len(skipped) <= LISTED_IDS else skipped[:3]:
                o.warn(f"skipped {s['id']}: {s['reason']}")
            if len(skipped) > LISTED_IDS:
                o.warn(f"skipped {len(skipped) - 3} more (`memcli --json import` lists every one with its reason)")

        return Out.of(data, human)

    run(ctx, "import", json_, act)
