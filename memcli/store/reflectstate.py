"""Reflection's local state in .memcli/: the watermark, the material last offered to an agent, the
one-reflection-at-a-time lock and the note that asks the running reflection to go round again."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import FileError, LockTimeout
from .fs import atomic_write, dump_state, lock_file, read_state, state_dir, unlock_file
from .layout import STATE_DIR

MARK = "reflect.json"
OFFER = "reflect-offer.json"
PENDING = "reflect-pending"
RUN_LOCK = "reflect.run"


def load_mark(root: Path) -> dict:
    """{"episodes": {rel: {"fp", "seen"}}, "sessions": {name: hash}}; empty when there is none or it
    is broken (proposal ids keep a second reading from repeating)."""

    def shape(d):
        if not isinstance(d, dict) or not isinstance(d.get("episodes", {}), dict):
            raise ValueError("not a watermark")

    try:
        data = read_state(state_dir(root) / MARK, "watermark", "delete it to reflect on everything again", shape)
    except FileError:
        data = None
    data = data or {}
    return {"episodes": data.get("episodes") or {}, "sessions": data.get("sessions") or {}}


def save_mark(root: Path, mark: dict, now: str) -> None:
    atomic_write(state_dir(root) / MARK, dump_state({"version": 1, "time": now, **mark}))


def save_offer(root: Path, token: str, mark: dict) -> None:
    atomic_write(state_dir(root) / OFFER, dump_state({"mark": token, "watermark": mark}))


def load_offer(root: Path) -> dict | None:
    def shape(d):
        if not isinstance(d, dict):
            raise ValueError("not an offer")

    try:
        return read_state(state_dir(root) / OFFER, "offer", "", shape)
    except FileError:
        return None


def drop_offer(root: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(state_dir(root) / OFFER)


def ask_again(root: Path) -> None:
    """Leave the note that another reflection was asked for while one ran."""
    with contextlib.suppress(OSError, FileError), open(state_dir(root) / PENDING, "a"):
        pass


def take_asked(root: Path) -> bool:
    """Whether a reflection was asked for meanwhile; the note is removed."""
    try:
        os.unlink(root / STATE_DIR / PENDING)
        return True
    except OSError:
        return False


class RunLock:
    """One reflection per root at a time: `with RunLock(root, wait, timeout) as got:` — got is False
    when another holds it and wait is False (the note to go round again is then left)."""

    def __init__(self, root: Path, wait: bool, timeout: float):
        self.root, self.wait, self.timeout = root, wait, timeout
        self.fd: int | None = None

    def __enter__(self) -> bool:
        try:
            path = state_dir(self.root) / RUN_LOCK
            self.fd = lock_file(path, self.timeout if self.wait else 0, "another reflection is running")
        except LockTimeout:
            if self.wait:
                raise
            ask_again(self.root)
            return False
        return True

    def __exit__(self, *exc):
        if self.fd is not None:
            unlock_file(self.fd)
        return False
