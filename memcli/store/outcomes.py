"""Outcomes of a memory (a procedure that worked or failed): counters in the frontmatter
(``uses``, ``successes``, ``last_outcome``), notes in a dated `## Outcomes` section of the body:

```
## Outcomes

- 1 earlier outcome: 1 success, 0 failures
- 2026-11-03T10:22:05Z failure: charset not set on the replica
```

The section keeps the newest ``KEEP`` outcomes; older ones fold into its first line, derived from
the counters, which are the truth. A git merge (``merge``) sums both sides' increments of each
counter (a grow-only counter), keeps the later date and the union of the notes.
"""

from __future__ import annotations

import re

from ..model import Detail
from .details import history_start

HEADING = "## Outcomes"
KEEP = 10  # outcome lines kept in the section; older ones fold into the count line
USES, SUCCESSES, LAST = "uses", "successes", "last_outcome"
COUNTERS = (USES, SUCCESSES)
RESULTS = ("success", "failure")
PRIOR = 1.0  # Laplace smoothing: (successes + 1) / (uses + 2); one outcome moves the rate to 2/3 or 1/3
MAX_NOTE = 500

_LINE = re.compile(r"^- (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?Z) (success|failure)(?:: (.*))?$")
_FOLD = re.compile(r"^- \d+ earlier outcomes?: ")
_HEADING = re.compile(r"^##\s+(?:outcomes|结果记录)\s*$", re.I)


def count(d: Detail, key: str) -> int:
    """A counter from the frontmatter: a whole number of at least 0 (anything else counts as 0)."""
    v = d.extra.get(key)
    if isinstance(v, bool):
        return 0
    if isinstance(v, int):
        return max(v, 0)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return 0


def rate(uses: int, successes: int) -> float:
    """The smoothed success rate: (successes + PRIOR) / (uses + 2 * PRIOR); 0.5 with no outcome."""
    successes = min(max(successes, 0), max(uses, 0))
    return (successes + PRIOR) / (max(uses, 0) + 2 * PRIOR)


def success_rate(d: Detail) -> float | None:
    """The smoothed success rate of a memory, None when no outcome was ever recorded."""
    uses = count(d, USES)
    return rate(uses, count(d, SUCCESSES)) if uses else None


def _span(lines: list) -> tuple[int, int] | None:
    """(first, end) line numbers of the Outcomes section's heading and outcome lines, or None."""
    start = next((i for i, ln in enumerate(lines) if _HEADING.match(ln.strip())), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (
        not lines[end].strip() or _LINE.match(lines[end].strip()) or _FOLD.match(lines[end].strip())
    ):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def entries(body: str) -> list[tuple[str, str, str]]:
    """(time, result, note) of each outcome line in the section, oldest first."""
    lines = body.split("\n")
    span = _span(lines)
    if span is None:
        return []
    out = []
    for ln in lines[span[0] + 1 : span[1]]:
        m = _LINE.match(ln.strip())
        if m:
            out.append((m.group(1), m.group(2), (m.group(3) or "").strip()))
    return sorted(out)


def _line(e: tuple) -> str:
    return f"- {e[0]} {e[1]}" + (f": {e[2]}" if e[2] else "")


def _section(items: list, uses: int, successes: int) -> list[str]:
    items = sorted(set(items))[-KEEP:]
    folded = uses - len(items)
    lines = [HEADING, ""]
    if folded > 0:
        won = max(successes - sum(1 for e in items if e[1] == "success"), 0)
        lost = max(folded - won, 0)
        lines.append(
            f"- {folded} earlier outcome{'' if folded == 1 else 's'}: {won} success"
            f"{'' if won == 1 else 'es'}, {lost} failure{'' if lost == 1 else 's'}"
        )
    return lines + [_line(e) for e in items]


def with_section(body: str, items: list, uses: int, successes: int) -> str:
    """The body with its Outcomes section rendered (in place, else before `## History`, else last)."""
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    new = _section(items, uses, successes)
    span = _span(lines)
    if span is not None:
        start, end = span
        tail = [""] if end < len(lines) and lines[end].strip() else []
        lines[start:end] = new + tail
    else:
        at = history_start(lines)
        at = len(lines) if at is None else at
        block = ([""] if at and lines[at - 1].strip() else []) + new + ([""] if at < len(lines) else [])
        lines[at:at] = block
    return "\n".join(lines) + "\n"


def recorded(d: Detail, result: str, note: str, now: str) -> Detail:
    """The memory with one more outcome: counters, last date, the note in the section."""
    uses, successes = count(d, USES) + 1, count(d, SUCCESSES) + (result == "success")
    extra = dict(d.extra)
    extra[USES], extra[SUCCESSES], extra[LAST] = uses, successes, now[:10]
    items = entries(d.body) + [(now, result, note)]
    return d.replace(extra=extra, body=with_section(d.body, items, uses, successes))


def without_section(body: str) -> str:
    """The body without its Outcomes section (what `context` shows beside the one-line record)."""
    lines = body.split("\n")
    span = _span(lines)
    if span is None:
        return body
    return "\n".join(lines[: span[0]] + lines[span[1] :]).strip("\n") + "\n"


def record_line(d: Detail) -> str | None:
    """'worked 4 of 5 times, last failed 2026-11-03: <note>' (None without outcomes)."""
    uses = count(d, USES)
    if not uses:
        return None
    successes = min(count(d, SUCCESSES), uses)
    text = f"worked {successes} of {uses} time{'' if uses == 1 else 's'}"
    failed = [e for e in entries(d.body) if e[1] == "failure"]
    if failed:
        when, _, note = failed[-1]
        text += f", last failed {when[:10]}" + (f": {note}" if note else "")
    return text


def recent_failures(d: Detail, window: int) -> tuple[int, int, list]:
    """(outcomes looked at, failures among them, notes of those failures) over the last `window`."""
    last = entries(d.body)[-window:]
    failed = [e for e in last if e[1] == "failure"]
    return len(last), len(failed), [f"{e[0][:10]}: {e[2]}" if e[2] else e[0][:10] for e in failed]


# ---------------------------------------------------------------- the git merge rule

_NONE = Detail("", "")


def merge(o: Detail | None, a: Detail, b: Detail):
    """The merge driver's rule for outcomes: (base, ours, theirs) with the section emptied to its
    heading (the body merge never conflicts on it), and ``finish(merged)``, which puts back the
    summed counters, the later date and the merged section."""
    base = o if o is not None else _NONE
    if not any(count(x, USES) or entries(x.body) for x in (base, a, b)):
        return o, a, b, lambda merged: merged
    counters = {k: count(base, k) + (count(a, k) - count(base, k)) + (count(b, k) - count(base, k)) for k in COUNTERS}
    dates = [str(x.extra.get(LAST)) for x in (a, b) if x.extra.get(LAST)]
    eo, ea, eb = set(entries(base.body)), set(entries(a.body)), set(entries(b.body))
    items = sorted((ea | eb) - (eo - ea) - (eo - eb))

    def hollow(d):
        if d is None:
            return None
        lines = d.body.split("\n")
        span = _span(lines)
        if span is None:
            return d
        return d.replace(body="\n".join(lines[: span[0] + 1] + lines[span[1] :]))

    def finish(merged: Detail) -> Detail:
        extra = dict(merged.extra)
        extra[USES], extra[SUCCESSES] = max(counters[USES], 0), max(counters[SUCCESSES], 0)
        if dates:
            extra[LAST] = max(dates)
        lines = merged.body.split("\n")
        heads = [i for i, ln in enumerate(lines) if _HEADING.match(ln.strip())]
        for i in reversed(heads[1:]):  # both sides added the section: one is kept
            del lines[i]
        body = "\n".join(lines)
        return merged.replace(extra=extra, body=with_section(body, items, extra[USES], extra[SUCCESSES]))

    return hollow(o), hollow(a), hollow(b), finish
