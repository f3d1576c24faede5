"""What a recall leaves in the read log (.memcli/trace.jsonl, see store.trace): the ids of the
memories it returned, which access counts, stale checks and the activity-ranked index read."""

from __future__ import annotations

from ..store import trace


def record(root, command: str, query: str, result, now: str | None = None) -> None:
    """One line for a recall or context call (its time the call's `now` when it was given one); a
    log that cannot be written is a warning of the result."""
    from .registry import get

    warning = trace.append(
        root.path,
        command,
        query,
        result.hits[0].layer if result.hits else None,
        [h.id for h in result.hits if getattr(get(h.layer), "memories", False)],
        now,
    )
    if warning:
        result.warnings.append(warning)
