"""The read log, .memcli/trace.jsonl: one line per recall or context call (access counts come from it)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..dates import utcnow
from ..errors import FileError
from .fs import state_dir
from .layout import STATE_DIR, TRACE

MAX_TRACE = 10_000_000  # past this the log rolls over to trace.jsonl.1
ACCESS_BYTES = 4_000_000  # how much of the log the heartbeat reads for recent use


def append(root: Path, command: str, query: str, layer: str | None, ids: list, now: str | None = None) -> str | None:
    """Append one line (time, command, query, the first hit's layer, the ids returned); a warning
    when the log cannot be written."""
    record = {"time": now or utcnow(), "command": command, "query": query[:200], "layer": layer, "ids": ids}
    line = json.dumps(record, ensure_ascii=False) + "\n"
    try:
        path = state_dir(root) / TRACE
        fd = _open(path)
        try:
            st = os.fstat(fd)
            if st.st_size > MAX_TRACE:  # rolled over: one older log is kept as trace.jsonl.1
                with contextlib.suppress(FileNotFoundError):
                    if os.stat(path).st_ino == st.st_ino:  # not already moved by another recall
                        os.replace(path, path.with_name(TRACE + ".1"))
                os.close(fd)
                fd = _open(path)
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, FileError) as e:
        return f"could not append to {STATE_DIR}/{TRACE}: {getattr(e, 'strerror', None) or e}"
    return None


def _open(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)


def _tail_lines(path: Path, size: int) -> list[bytes]:
    """The whole lines among the last `size` bytes of a file (none when it is missing or came with git)."""
    from .fs import came_with_git

    if came_with_git(path):
        return []
    try:
        with open(path, "rb") as f:
            end = f.seek(0, os.SEEK_END)
            f.seek(max(0, end - size - 1))
            data = f.read(size + 1)
    except OSError:
        return []
    if end > size:  # the window starts inside a line unless the byte before it ends one
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
    return data.split(b"\n")


def access(root: Path, budget: int = ACCESS_BYTES) -> dict:
    """id -> {"count": n, "last": time} from the newest `budget` bytes of trace.jsonl(.1)."""
    state = root / STATE_DIR
    lines = _tail_lines(state / TRACE, budget)
    got = sum(len(x) + 1 for x in lines)
    if got < budget:
        lines = _tail_lines(state / (TRACE + ".1"), budget - got) + lines
    stats: dict = {}
    for ln in lines:
        try:
            rec = json.loads(ln.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        ids = rec.get("ids") if isinstance(rec, dict) else None
        for i in ids if isinstance(ids, list) else ():
            if not isinstance(i, str):
                continue
            s = stats.setdefault(i, {"count": 0, "last": None})
            s["count"] += 1
            s["last"] = rec.get("time")
    return stats
