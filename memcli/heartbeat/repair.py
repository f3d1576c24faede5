"""Repairs that need no person, planned from an audit (``usecases.maintain`` makes them).

Nothing here deletes a memory: an expired one moves to ``memory/archive/``, a demoted one
loses only its index line. The only files removed are temp files of a crashed writer, and
only when no memcli writer can own them (see ``usecases.maintain``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..model import Entry
from ..store import indexrules, layout
from .base import TEMP_MIN_AGE, Report, age


@dataclass(frozen=True)
class Action:
    """One safe repair. ``message`` says what it will do; ``apply`` says what it did."""

    kind: str  # remove-temp | archive | rebuild-index | drop-line | carry | rerender | demote | promote
    #            | swap-out | swap-in (index.rank: activity: the index follows recalls)
    path: str
    id: str | None
    message: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "id": self.id, "message": self.message}


def plan(report: Report) -> list[Action]:
    """The repairs that are safe without a person, in the order ``apply`` makes them. The index's
    are what ``indexrules.plan`` makes of MEMORY.md (``State.index_plan``), the plan every write follows."""
    st = report.state
    actions = [
        Action("remove-temp", rel, None, f"remove {rel} (left by a crashed writer, {age(seconds)} old)")
        for rel, seconds in st.temps
        if seconds >= TEMP_MIN_AGE
    ]
    for mid in sorted(st.expired):
        src, dst = layout.detail_rel(mid), layout.detail_rel(mid, archived=True)
        said = f"archive {mid} (expired {st.expired[mid]}): {src} -> {dst} and drop its index line"
        actions.append(Action("archive", src, mid, said))
    if any(f.code == "conflict-markers" and f.path == layout.INDEX for f in report.findings):
        # every other index repair would read the markers as lines: the rebuild does them all
        said = "rebuild MEMORY.md from both sides of its git conflict and the detail files"
        return [*actions, Action("rebuild-index", layout.INDEX, None, said)]
    if st.index is None:
        return actions
    p = st.index_plan()
    assert p is not None  # MEMORY.md was read
    by_line = []
    for n, mid, why in p.dropped:
        if why == indexrules.DUPLICATE:
            said = f"drop MEMORY.md line {n}: {mid} is listed twice"
        elif why == indexrules.MISSING:
            said = f"drop MEMORY.md line {n}: {layout.detail_rel(mid)} does not exist"
        else:
            continue
        by_line.append((n, Action("drop-line", layout.INDEX, mid, said)))
    seen: set = set()
    for n, x in enumerate(st.index.lines, 1):
        if not isinstance(x, Entry) or x.id is None or x.id not in st.details or x.id in seen or x.id in st.expired:
            continue
        seen.add(x.id)
        d = st.details[x.id]
        if d.detail.entry == x:
            continue
        if _line_is_newer(st, d.path):
            what = " and ".join(k for k in ("title", "summary", "tags") if getattr(x, k) != getattr(d.detail.entry, k))
            said = f"carry the hand edit of MEMORY.md line {n} ({what}) into {d.path} "
            said += "(the old text goes under its ## History)"
            by_line.append((n, Action("carry", d.path, x.id, said)))
        else:
            said = f"re-render the MEMORY.md line of {x.id} from {layout.detail_rel(x.id)}"
            by_line.append((n, Action("rerender", layout.INDEX, x.id, said)))
    actions += [a for _, a in sorted(by_line, key=lambda t: t[0])]
    act = st.root.activity() if st.root is not None else None
    if act is not None and p.room > 0:  # index.rank: activity: the index follows what is recalled
        for mid in p.demoted:
            said = f"demote {mid}: less in use than what replaces it ({layout.detail_rel(mid)} stays)"
            actions.append(Action("swap-out", layout.INDEX, mid, said))
        for mid in p.promoted:
            said = f"promote {mid} into MEMORY.md (recalled {(act.access.get(mid) or {}).get('count', 0)} times)"
            actions.append(Action("swap-in", layout.INDEX, mid, said))
        return actions
    for mid in p.demoted:
        said = f"demote {mid}: drop its MEMORY.md line to fit {st.max_lines} lines ({layout.detail_rel(mid)} stays)"
        actions.append(Action("demote", layout.INDEX, mid, said))
    for mid in p.promoted:
        # a free line belongs to a memory (as `remember` would list it): pinned and important ones
        # first, then by rank; a memory a merge brought back is listed again this way
        d = st.details[mid]
        why = "pinned" if d.pinned else f"importance {d.importance:g}"
        actions.append(Action("promote", layout.INDEX, mid, f"promote {mid} ({why}) into a free MEMORY.md line"))
    return actions


def _line_is_newer(st, rel: str) -> bool:
    """MEMORY.md was written after the detail file: a line that differs was edited by hand
    (memcli writes a line from its detail file in the same step as the file)."""
    try:
        index_time = os.stat(st.root.index_path).st_mtime_ns
        detail_time = int(st.fingerprints[rel].split(":")[0])
    except (OSError, KeyError, ValueError, AttributeError):
        return False
    return index_time > detail_time
