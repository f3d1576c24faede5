"""The read log, .memcli/trace.jsonl: one line per recall or context call (access counts come from it)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..errors import FileError
from ..store.fs import state_dir


def record(mem, command: str, query: str, result) -> None:
    """Append one line: time, command, query, the first hit's layer and the ids of the memories returned."""
    from .registry import get

    line = json.dumps({
        "time": datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "command": command, "query": query[:200],
        "layer": result.hits[0].layer if result.hits else None,
        "ids": [h.id for h in result.hits if getattr(get(h.layer), "memories", False)],
    }, ensure_ascii=False) + "\n"
    try:
        fd = os.open(state_dir(mem.root) / "trace.jsonl",
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, FileError) as e:
        result.warnings.append(f"could not append to .memcli/trace.jsonl: {getattr(e, 'strerror', None) or e}")


def access(root: Path) -> dict:
    """id -> {"count": n, "last": time}, from the trace log."""
    stats: dict = {}
    try:
        with open(root / ".memcli" / "trace.jsonl", encoding="utf-8", errors="replace") as f:
            for ln in f:
                try:
                    rec = json.loads(ln)
                except ValueError:
                    continue
                for i in rec.get("ids") or ():
                    s = stats.setdefault(i, {"count": 0, "last": None})
                    s["count"] += 1
                    s["last"] = rec.get("time")
    except OSError:
        pass
    return stats
