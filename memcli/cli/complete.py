"""Shell completion of the values a command takes: memory ids, tags and recall layers.

Called by the shell on every Tab, so each reads as little as it can: ids are the names of the
detail files (one directory scan), tags come from MEMORY.md's lines and the index cache
(.memcli/index-cache.json), layers from the recall registry. A root that cannot be found completes
nothing, and nothing here writes or raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer


def _root(ctx: typer.Context) -> Path | None:
    from ..config import find_root

    root = (ctx.find_root().params or {}).get("root")
    try:
        return find_root(root)
    except Exception:  # completion never fails loudly: no root, nothing to offer
        return None


def ids(ctx: typer.Context, incomplete: str) -> list:
    """The ids of the memories (memory/<id>.md), archived ones after the others."""
    from ..store import layout
    from ..store.fs import valid_id

    root = _root(ctx)
    if root is None:
        return []
    out = []
    for sub in (layout.MEMORY, layout.ARCHIVE):
        for de in layout.md_entries(root / sub):
            mid = de.name[:-3]
            if mid.startswith(incomplete) and valid_id(mid) and mid not in out:
                out.append(mid)
    return out


def tags(ctx: typer.Context, incomplete: str) -> list:
    """The tags of the indexed memories: their MEMORY.md lines and the index cache."""
    from ..store.index import parse_line
    from ..store.layout import INDEX, STATE

    root = _root(ctx)
    if root is None:
        return []
    found: set = set()
    try:
        with open(root / INDEX, encoding="utf-8", errors="replace") as f:
            for line in f.read(1_000_000).splitlines():
                entry = parse_line(line)
                found.update(entry.tags if entry is not None else ())
    except OSError:
        pass
    try:
        with open(root / STATE / "index-cache.json", encoding="utf-8") as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    for hit in cache.values() if isinstance(cache, dict) else ():
        found.update(t for t in (hit.get("tags", ()) if isinstance(hit, dict) else ()) if isinstance(t, str))
    want = incomplete.lstrip("#")
    return sorted(t for t in found if t.startswith(want))


def layers(incomplete: str) -> list:
    """The recall layers, in cascade order, each with its place as the help."""
    from ..recall.registry import layer_names

    return [(n, f"layer {i} of the cascade") for i, n in enumerate(layer_names(), 1) if n.startswith(incomplete)]


def layer_help() -> str:
    from ..recall.registry import help_text

    return f"Search only this layer: {help_text()}."
