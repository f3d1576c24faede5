"""Everyday commands: stats, search, rename, export, import."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .. import render as r
from ..model import listed_ids
from .progress import reporting
from .shared import Json, app, memory, run, state
from .boundary import Out, stdin_bytes


@app.command()
def stats(ctx: typer.Context, json_: Json = False):
    """How big and how healthy the memory is.

    Memories by type, index fullness (lines used of the limit), expired, stale, archived and
    duplicate counts, and the size of each file in .memcli/.

    Example: memcli stats --json
    """
    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json):
            data = m.stats()

        def human():
            ix = data["index"]
            r.out(f"memories   {data['memories']}  (" + ", ".join(f"{k} {v}" for k, v in data["by_type"].items()) + ")")
            r.out(f"index      {ix['lines']}/{ix['max_lines']} lines, {ix['entries']} entries")
            r.out(f"expired    {data['expired']}")
            r.out(f"stale      {data['stale']}")
            r.out(f"archived   {data['archived']}")
            r.out(f"duplicates {data['duplicates']}")
            if data["problems"]:
                r.out(f"unreadable {data['problems']}")
            r.out("state      " + (", ".join(f"{k} {_bytes(v)}" for k, v in data["state_bytes"].items()) or "-"))
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
    ignore_case: Annotated[Optional[bool], typer.Option("--ignore-case/--case-sensitive", "-i/-s",
                                                        help="Default: smart case (ignored unless PATTERN has a capital).")] = None,
    json_: Json = False,
):
    """Find lines in the memory files: file:line:text, like grep. Exit 1 when nothing matches.

    Example: memcli search --regex 'utf8(mb4)?'
    """
    def act():
        data = memory(ctx).search(pattern, regex=regex, ignore_case=ignore_case)

        def human():
            for m in data["matches"]:
                r.out(f"{m['path']}:{m['line']}:{m['text']}")
            for p in data["problems"]:
                r.warn(f"skipped {p}")
        return Out.of(data, human, code=0 if data["matches"] else 1)
    run(ctx, "search", json_, act)


@app.command()
def rename(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="ID", help="The memory's id now (or its path).")],
    new: Annotated[str, typer.Argument(metavar="NEW_ID", help="Its new id.")],
    json_: Json = False,
):
    """Give a memory a new id; its index link and references (memory/ID.md, [[ID]]) follow.

    Example: memcli rename mysql-charset mysql-utf8mb4
    """
    def act():
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json):
            data = m.rename(old, new)

        def human():
            r.out(data["id"])
            refs = data["references"]
            refs = f"; references updated in {listed_ids(refs, '--json names them all')}" if refs else ""
            r.talk(f"renamed {old} to {new} ({data['path']}){refs}")
        return Out.of(data, human)
    run(ctx, "rename", json_, act)


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
        with reporting(m, json_ or state(ctx).json):
            data = m.export(archived=archived)

        def human():
            r.write(r.jsonl(data["memories"]))
            for p in data["problems"]:
                r.warn(f"not exported: {p}")
        return Out.of(data, human)
    run(ctx, "export", json_, act)


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A JSONL export, a folder of Markdown, a Markdown file, or an agent's "
                                               "MEMORY.md of bullet lines ('-' reads stdin).")],
    json_: Json = False,
):
    """Add memories from an export, a Markdown folder or another agent's memory file.

    Existing ids are skipped, never overwritten.

    Example: memcli import ~/.claude/projects/x/memory/MEMORY.md
    """
    def act():
        text = None
        if source == "-":
            from ..core import decode_input

            text = decode_input(stdin_bytes(), "stdin", 100_000_000)
        m = memory(ctx)
        with reporting(m, json_ or state(ctx).json):
            data = m.import_(source, text)

        def human():
            for i in data["imported"]:
                r.out(i)
            r.talk(f"imported {len(data['imported'])} memories ({data['kind']})"
                   + (f"; skipped {len(data['skipped'])}" if data["skipped"] else ""))
            for s in data["skipped"]:
                r.warn(f"skipped {s['id']}: {s['reason']}")
        return Out.of(data, human)
    run(ctx, "import", json_, act)
