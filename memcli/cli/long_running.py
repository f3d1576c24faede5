"""What the commands that run until they are stopped (`watch`, `serve`) share: a duration option
read as seconds, and stopping cleanly on Ctrl-C or SIGTERM."""

from __future__ import annotations

from contextlib import contextmanager

from ..errors import ConfigError, UsageError


def seconds(value: str, option: str, *, positive: bool = True) -> float:
    """A duration given to option, in seconds; UsageError for anything else (and for 0 when positive)."""
    from ..dates import parse_duration

    try:
        got = parse_duration(value, option)
    except ConfigError as e:
        raise UsageError(e.message) from None
    if positive and got <= 0:
        raise UsageError(f"{option} must be longer than 0, got {value!r}")
    return got


@contextmanager
def until_signal(stop):
    """While the block runs, SIGINT and SIGTERM call stop(); yields the list of the signals' names."""
    import signal

    why: list = []

    def on_signal(signum, frame):
        why.append(signal.Signals(signum).name)
        stop()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield why
    finally:
        for s, h in old.items():
            signal.signal(s, h)
