"""Progress of long work: while ``Memory.reporting(callback)`` runs, every long loop below the
facade reports ``callback(what, done, total)`` (``for path in progress.each(paths, "reading
memories")``). The callback travels in a context variable, so the layers between take no
parameter; with none, a report costs one lookup."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Callback = Callable[[str, int, "int | None"], None]

_current: ContextVar[Callback | None] = ContextVar("memcli_progress", default=None)


@contextmanager
def using(callback: Callback | None) -> Iterator[None]:
    """Report the long work done inside the block to callback (None: to no one)."""
    token = _current.set(callback)
    try:
        yield
    finally:
        _current.reset(token)


def report(what: str, done: int, total: int | None = None) -> None:
    """Say how far a piece of long work is."""
    cb = _current.get()
    if cb is not None:
        cb(what, done, total)


def active() -> bool:
    """Whether anyone listens (a loop can skip counting when no one does)."""
    return _current.get() is not None


def each(items: Iterable, what: str, total: int | None = None) -> Iterable:
    """The items, reporting each one done; the items themselves when no one listens."""
    cb = _current.get()
    if cb is None:
        return items
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    return _counted(items, what, total, cb)


def _counted(items: Iterable, what: str, total: int | None, cb: Callback) -> Iterator:
    cb(what, 0, total)
    n = 0
    for item in items:
        yield item
        n += 1
        cb(what, n, total)
