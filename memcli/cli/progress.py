"""Progress bars for long work, on a terminal only (not with --json, nor on a pipe): transient,
for work of MIN_ITEMS items or more, redrawn at most REDRAW times a second from the calling thread
(no refresh thread: the heartbeat forks its readers, safe only while the process has one thread).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

from .. import render as r

MIN_ITEMS = 200
REDRAW = 12


class Bars:
    """The callback: one bar per kind of work, started on its first report of enough items."""

    def __init__(self, o: r.Output):
        self.o = o
        self._progress: Any = None
        self._tasks: dict = {}
        self._last = 0.0

    def __call__(self, what: str, done: int, total: int | None) -> None:
        task = self._tasks.get(what)
        if task is None:
            if total is not None and total < MIN_ITEMS:
                return
            if self._progress is None:
                self._progress = self._start(self.o)
            for other in self._tasks.values():  # one kind of work at a time: the last one shows
                self._progress.update(other, visible=False)
            task = self._tasks[what] = self._progress.add_task(what, total=total)
        now = time.monotonic()  # the bar is told only when it is redrawn: a report costs this much
        if self._progress is not None and (
            now - self._last >= 1 / REDRAW or done == 0 or (total is not None and done >= total)
        ):
            self._last = now
            self._progress.update(task, completed=done, total=total)
            self._progress.refresh()

    @staticmethod
    def _start(o: r.Output):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        p = Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=o.console(stderr=True),
            transient=True,
            auto_refresh=False,
        )
        p.start()
        return p

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


@contextmanager
def reporting(m, as_json: bool, o: r.Output):
    """Long work of the Memory m inside the block draws its bars on o's terminal."""
    if as_json or not o.tty(err=True):
        yield
        return
    bars = Bars(o)
    try:
        with m.reporting(bars):
            yield
    finally:
        bars.close()
