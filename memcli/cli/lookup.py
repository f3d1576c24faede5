"""Looking through a root: `stats` (how big and how healthy) and `search` (lines of the memory
files, like grep)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .boundary import Out
from .progress import reporting
from .typer_app import Json, app, memory, output, run, state


@app.command()
def stats(ctx: typer.Context, json_: Json = False):
    """How big and how healthy the memory is.

    Memories by type, index fullness (lines used of the limit), expired, stale, archived and
    duplicate counts, and the size of each file in .memcli/.

    Example: memcli stats --json
    """

    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            data = m.stats()

        def human(o):
            ix = data["index"]
            o.out(f"memories   {data['memories']}  (" + ", ".join(f"{k} {v}" for k, v in data["by_type"].items()) + ")")
            o.out(f"index      {ix['lines']}/{ix['max_lines']} lines, {ix['entries']} entries")
            for key in ("expired", "stale", "archived", "duplicates"):
                o.out(f"{key:<10} {data[key]}")
            if data["problems"]:
                o.out(f"unreadable {data['problems']}")
            o.out("state      " + (", ".join(f"{k} {_bytes(v)}" for k, v in data["state_bytes"].items()) or "-"))

        return Out.of(data, human)

    run(ctx, "stats", json_, act)


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@app.command()
def search(
    ctx: typer.Context,
    pattern: Annotated[str, typer.Argument(help="Text to find (a regular expression with --regex).")],
    regex: Annotated[bool, typer.Option("--regex", "-e", help="PATTERN is a Python regular expression.")] = False,
    ignore_case: Annotated[
        Optional[bool],
        typer.Option(
            "--ignore-case/--case-sensitive",
            "-i/-s",
            help="Default: smart case (ignored unless PATTERN has a capital).",
        ),
    ] = None,
    json_: Json = False,
):
    """Find lines in the memory files: file:line:text, like grep. Exit 1 when nothing matches.

    Example: memcli search --regex 'utf8(mb4)?'
    """

    def act():
        data = memory(ctx).search(pattern, regex=regex, ignore_case=ignore_case)

        def human(o):
            for m in data["matches"]:
                o.out(f"{m['path']}:{m['line']}:{m['text']}")
            for p in data["problems"]:
                o.warn(f"skipped {p}")

        return Out.of(data, human, code=0 if data["matches"] else 1)

    run(ctx, "search", json_, act)
