"""The rename journal, .memcli/rename.json: written before a rename touches a file and removed
after its last step, so a rename that was killed is found (heartbeat) and finished (run again)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import FileError
from .fs import atomic_write, read_state, state_dir
from .layout import RENAME_JOURNAL, STATE_DIR


def pending(root: Path) -> dict | None:
    """The journal of a rename that did not finish, or None (also one that came with the repository)."""

    def shape(d):
        if not (isinstance(d, dict) and isinstance(d.get("old"), str) and isinstance(d.get("new"), str)):
            raise ValueError("not a rename journal")

    try:
        return read_state(root / STATE_DIR / RENAME_JOURNAL, "rename journal", "", shape)
    except FileError:
        return None


def start(root: Path, journal: dict) -> None:
    atomic_write(state_dir(root) / RENAME_JOURNAL, json.dumps(journal) + "\n")


def finish(root: Path) -> None:
    (root / STATE_DIR / RENAME_JOURNAL).unlink(missing_ok=True)
