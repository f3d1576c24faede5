"""Shell completion of memory ids, tags and recall layers: asked on every Tab, each reads as little
as it can, and never writes or raises (no root: nothing to offer)."""

from __future__ import annotations

from typing import Annotated

import typer


def _memory(ctx: typer.Context):
    from ..core import Memory

    root = (ctx.find_root().params or {}).get("root")
    try:
        return Memory.find(root)
    except Exception:  # completion never fails loudly: no root, nothing to offer
        return None


def ids(ctx: typer.Context, incomplete: str) -> list:
    """The ids of the memories (memory/<id>.md), archived ones after the others."""
    m = _memory(ctx)
    return [] if m is None else m.ids(incomplete)


def tags(ctx: typer.Context, incomplete: str) -> list:
    """The tags of the indexed memories: their MEMORY.md lines and the index cache."""
    m = _memory(ctx)
    return [] if m is None else m.tags(incomplete)


def layers(incomplete: str) -> list:
    """The recall layers, in cascade order, each with its place as the help."""
    from ..recall.registry import layer_names

    return [(n, f"layer {i} of the cascade") for i, n in enumerate(layer_names(), 1) if n.startswith(incomplete)]


COMPLETIONS = {"ids": ids, "tags": tags, "layers": layers}
MemoryId = Annotated[
    str, typer.Argument(metavar="ID", help="The exact id or its file (memory/ID.md).", autocompletion=ids)
]
