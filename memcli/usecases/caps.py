"""Caps on what may be proposed (an agent's `propose`, a write the gate turns into a proposal): per
call, per hour (.memcli/propose-rate.json), the inbox's size."""

from __future__ import annotations

import json
import os
from contextlib import suppress

from ..dates import parse
from ..errors import LimitError
from ..safety.writecheck import proposals
from ..store import layout
from ..store.fs import atomic_write, came_with_git, state_dir

RATE_LOG = "propose-rate.json"  # in .memcli/: [[time, proposals written], ...] of the last hour


def _recent(root, now: str) -> list:
    path = state_dir(root.path) / RATE_LOG
    if came_with_git(path):
        return []
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    start = _seconds(now) - 3600
    rows = rows if isinstance(rows, list) else []
    return [r for r in rows if isinstance(r, list) and len(r) == 2 and isinstance(r[1], int) and _seconds(r[0]) > start]


def _seconds(stamp) -> float:
    """A stamp as seconds since 1970 (0 for one that is no stamp)."""
    when = parse(stamp)
    return when.timestamp() if when is not None else 0.0


def count(root, n: int, now: str) -> None:
    if not n:
        return
    with root.lock():
        atomic_write(state_dir(root.path) / RATE_LOG, json.dumps(_recent(root, now) + [[now, n]]) + "\n")


def within(root, objects: list, now: str) -> None:
    """An agent's proposals within the write check's sizes and inbox.propose_per_call, propose_per_hour,
    max_pending and max_bytes: else one clear error, nothing written."""
    proposals(objects)
    cfg = root.config
    per_call, per_hour = int(cfg["inbox.propose_per_call"]), int(cfg["inbox.propose_per_hour"])
    if len(objects) > per_call:
        raise LimitError(
            f"{len(objects)} proposals in one call; at most {per_call} (inbox.propose_per_call): send the best ones",
            data={"limit": "inbox.propose_per_call", "max": per_call},
        )
    done = sum(r[1] for r in _recent(root, now))
    if done + len(objects) > per_hour:
        raise LimitError(
            f"{done} proposals in the last hour; at most {per_hour} an hour (inbox.propose_per_hour): try again later",
            data={"limit": "inbox.propose_per_hour", "max": per_hour},
        )
    folder = root.path / layout.INBOX
    sizes = []
    with suppress(OSError), os.scandir(folder) as it:
        sizes = [e.stat().st_size for e in it if e.name.endswith(".md") and e.is_file()]
    new_bytes = len(json.dumps(objects, ensure_ascii=False).encode("utf-8"))
    most, room = int(cfg["inbox.max_pending"]), int(cfg["inbox.max_bytes"])
    if len(sizes) + len(objects) > most or sum(sizes) + new_bytes > room:
        raise LimitError(
            f"the inbox holds {len(sizes)} proposals ({sum(sizes)} bytes); at most {most} "
            f"(inbox.max_pending) and {room} bytes (inbox.max_bytes): review them (`memcli inbox`) "
            "before proposing more",
            data={"limit": "inbox.max_pending", "max": most},
        )
