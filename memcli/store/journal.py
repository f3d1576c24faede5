"""The rename journal, .memcli/rename.json: written before a rename touches a file and removed
after its last step, so a rename that was killed is found (heartbeat) and finished (run again)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .fs import atomic_write, state_dir
from .layout import RENAME_JOURNAL, STATE_DIR


def pending(root: Path) -> dict | None:
    """The journal of a rename that did not finish, or None."""
    path = root / STATE_DIR / RENAME_JOURNAL
    from .fs import came_with_git

    if came_with_git(path):  # a journal that came with the repository renames nothing
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not (isinstance(data, dict) and isinstance(data.get("old"), str) and isinstance(data.get("new"), str)):
        return None
    return data


def start(root: Path, journal: dict) -> None:
    atomic_write(state_dir(root) / RENAME_JOURNAL, json.dumps(journal) + "\n")


def finish(root: Path) -> None:
    try:
        os.unlink(root / STATE_DIR / RENAME_JOURNAL)
    except FileNotFoundError:
        pass
