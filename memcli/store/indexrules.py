"""The rules of MEMORY.md: which memories it lists, in what order, what falls out when it is
full, and what is wrong with it. ``plan`` is the one planner every write, rebuild, repair, merge
and import calls.

- order: pinned, importance, newest update, id (`Detail.rank_key`);
- room: entries get ``max_lines - 1 - fixed`` lines, fixed being the lines that are not entries;
- demotion: the lowest-ranked unpinned memories lose their line first, then pinned ones; their
  detail files stay;
- a line that is not a memory's, or whose memory cannot be read, is kept as written; a tidy plan
  drops a second line of a memory and the lines of missing or expired memories;
- `index.rank: activity` changes only who keeps a line (pinned, then ``retention``: importance,
  recency and recalls from `.memcli/trace.jsonl`), never the lines' order; its clock is the data's
  newest stamp, and a merged index leaves the trace out, so every clone plans the same file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from ..dates import days as _days

from ..errors import UnsafePathError, UsageError
from ..model import Detail, Entry, Finding, listed_ids
from .index import IndexDoc, render_line
from .layout import check_id, valid_id

FIX_REBUILD = "run `memcli index rebuild`"
# The fixes `index check` and the heartbeat both give for a file they cannot use.
FIX_UNREADABLE_INDEX = (
    "make MEMORY.md UTF-8 text again (git checkout MEMORY.md), or move it away and run `memcli index rebuild`"
)
FIX_BROKEN_FILE = "fix the frontmatter by hand (memcli never rewrites a broken file)"
FIX_UNREADABLE_FILE = "make it a UTF-8 text file under 10 MB, or move it out of memory/"


def free_room(max_lines: int, fixed: int) -> int:
    """How many entry lines fit in an index of fewer than max_lines lines with `fixed` other lines."""
    return max_lines - 1 - fixed


# index.rank: activity. Weights chosen on the simulated month (benchmarks/index_month.py, dev seed):
# importance still leads, recency keeps new memories a while, recalls keep what is in use.
W_IMPORTANCE, W_RECENCY, W_ACCESS = 0.2, 0.4, 0.4
ACCESS_CAP = 16  # recalls at which the access term is full (it grows with log(1 + recalls))


class Activity:
    """What `index.rank: activity` ranks by: id -> {"count", "last"} of recalls and the half-life
    of recency in days."""

    __slots__ = ("access", "half_life")

    def __init__(self, access: Mapping[str, dict] | None = None, half_life: float = 7.0):
        self.access = access if access is not None else {}
        self.half_life = half_life


def _memory(d):
    return d.detail if hasattr(d, "detail") and not hasattr(d, "rank_key") else d


def retention(d, act: Activity, now_days: float) -> float:
    """W_IMPORTANCE * importance + W_RECENCY * recency (halving every half_life days since the last
    update or recall) + W_ACCESS * min(1, log(1 + recalls) / log(1 + ACCESS_CAP))."""
    m = _memory(d)
    seen = act.access.get(m.id) or {}
    stamps = [x for x in (_days(m.updated or m.created), _days(seen.get("last"))) if x is not None]
    recency = 0.5 ** (max(now_days - max(stamps), 0.0) / act.half_life) if stamps else 0.0
    count = seen.get("count") or 0
    used = min(1.0, math.log1p(count) / math.log1p(ACCESS_CAP)) if count > 0 else 0.0
    return W_IMPORTANCE * m.importance + W_RECENCY * recency + W_ACCESS * used


def rank(details, activity: Activity | None = None) -> list:
    """Index order (anything with `rank_key()`, or a `detail` giving a Detail); with `activity`,
    the order of who keeps a line: pinned, then retention, then index order."""
    if activity is None:
        return sorted(details, key=_key)
    details = list(details)
    stamps = [_days(_memory(d).updated or _memory(d).created) for d in details]
    stamps += [_days(v.get("last")) for v in activity.access.values() if isinstance(v, dict)]
    now_days = max((x for x in stamps if x is not None), default=0.0)
    return sorted(details, key=lambda d: (not _memory(d).pinned, -round(retention(d, activity, now_days), 9), _key(d)))


def _key(d) -> tuple:
    return d.rank_key() if hasattr(d, "rank_key") else d.detail.rank_key()


def _entry(d) -> Entry:
    return d.entry if hasattr(d, "entry") else d.detail.entry


def demote(ranked: list, room: int, fresh: set | None = None) -> tuple[list, list]:
    """(kept, demoted) for memories in index order and the room the index has: unpinned ones go
    first, lowest-ranked first, then pinned ones from the bottom. fresh (activity): ids that had no
    line and were never recalled; a memory that had a line goes only after every fresh one less
    important than it, so a burst of new notes does not push out what matters more."""
    excess = len(ranked) - max(room, 0)
    if excess <= 0:
        return list(ranked), []
    import heapq

    dropped: set = set()
    demoted = []

    def drop(i: int) -> None:
        dropped.add(i)
        demoted.append(ranked[i])

    light = [(_weight(d), -i, i) for i, d in enumerate(ranked) if fresh and d.id in fresh and not d.pinned]
    heapq.heapify(light)
    waiting: list = []  # (weight, place) of memories that had a line, held back for a lighter fresh one

    def lightest():
        while light and light[0][2] in dropped:
            heapq.heappop(light)
        return light[0][0] if light else None

    for i in range(len(ranked) - 1, -1, -1):
        if len(demoted) == excess:
            break
        d = ranked[i]
        if d.pinned:
            continue
        w = lightest() if light else None
        if w is not None and fresh is not None and d.id not in fresh and _weight(d) > w:
            heapq.heappush(waiting, (_weight(d), -i))
            continue
        drop(i)
        if (
            waiting and fresh is not None and d.id in fresh
        ):  # a fresh one went: those it held back may follow, lowest first
            w = lightest()
            free = []
            while waiting and (w is None or waiting[0][0] <= w):
                free.append(-heapq.heappop(waiting)[1])
            for j in sorted(free, reverse=True):
                if len(demoted) < excess:
                    drop(j)
    for _, j in sorted(waiting, key=lambda x: x[1]):  # still over: the held back ones, lowest first
        if len(demoted) < excess:
            drop(-j)
    kept = [d for i, d in enumerate(ranked) if i not in dropped] if dropped else list(ranked)
    while len(demoted) < excess:
        demoted.append(kept.pop())
    return kept, demoted


def _weight(d) -> tuple:
    m = _memory(d)
    return bool(m.pinned), m.importance


def fresh_ids(candidates, listed: set, activity: Activity | None) -> set | None:
    """The memories among candidates that had no line and were never recalled (activity only)."""
    if activity is None:
        return None
    return {d.id for d in candidates if d.id not in listed and not (activity.access.get(d.id) or {}).get("count")}


def describe_hand_written(doc: IndexDoc) -> str:
    """'the N hand-written lines of MEMORY.md (lines a-b)': what a person must shorten."""
    nums = doc.hand_written()
    where = f" (line {nums[0]})" if len(nums) == 1 else f" (lines {nums[0]}-{nums[-1]})" if nums else ""
    return f"the {len(nums)} hand-written line{'' if len(nums) == 1 else 's'} of MEMORY.md{where}"


def crowded(doc: IndexDoc, max_lines: int, listed: int, left_out: list) -> str:
    """The warning when hand-written lines take the room of entries already listed."""
    room = max(free_room(max_lines, doc.fixed_lines()), 0)
    out = f"; not listed (detail file kept): {listed_ids(left_out)}" if left_out else ""
    return (
        f"MEMORY.md is over its {max_lines} lines: {describe_hand_written(doc)} leave room for {room} "
        f"entries and {listed} are listed, so no listed entry was moved out{out}. Shorten the "
        "hand-written lines, or raise index.max_lines in memcli.yaml"
    )


is_safe_id = valid_id  # whether a line's id may name a file


def check(doc: IndexDoc, lookup: Callable[[str], object], max_lines: int) -> list[tuple[str | None, Finding]]:
    """(id, finding) for each fault of MEMORY.md, one message per fault; lookup(id) gives the
    memory's Detail, or "broken", "archived" or "missing"."""
    out: list[tuple[str | None, Finding]] = []

    def fault(mid: str | None, code: str, severity: str, line: int, message: str, fix: str) -> None:
        out.append((mid, Finding(code, severity, "MEMORY.md", line, message, fix)))

    n_lines = doc.line_count()
    if n_lines >= max_lines:
        fix = (
            "`memcli heartbeat --fix` demotes the lowest-ranked entries (their detail files stay)"
            if free_room(max_lines, doc.fixed_lines()) > 0
            else f"{describe_hand_written(doc)} leave no room for entries: shorten them, "
            "or raise index.max_lines in memcli.yaml"
        )
        message = f"{n_lines} lines; the index must stay under {max_lines}"
        fault(None, "index-over-limit", "error", max_lines, message, fix)
    seen: set = set()
    for n, x in enumerate(doc.lines, 1):
        if not isinstance(x, Entry):
            continue
        mid = x.id
        try:
            if mid is None:
                raise UsageError(f"the link {x.path!r} is not memory/<id>.md")
            check_id(mid)
        except (UsageError, UnsafePathError) as e:
            fault(None, "index-bad-link", "warning", n, e.message, "point it at memory/<id>.md, or remove the line")
            continue
        if mid in seen:
            fix = "`memcli heartbeat --fix` keeps the first line"
            fault(mid, "index-duplicate-line", "warning", n, f"{mid} is listed twice", fix)
            continue
        seen.add(mid)
        d = lookup(mid)
        if d == "missing" or d == "archived":
            where = " (it is archived in memory/archive/)" if d == "archived" else ""
            message = f"points at {x.path}, which does not exist{where}"
            fault(mid, "index-missing-file", "error", n, message, "`memcli heartbeat --fix` drops the line")
        elif isinstance(d, Detail) and d.entry != x:
            what = [k for k in ("title", "summary", "tags") if getattr(d.entry, k) != getattr(x, k)]
            verb = "differs" if len(what) == 1 else "differ"
            message = f"{mid}: the line's {' and '.join(what)} {verb} from {x.path}"
            fix = (
                "`memcli heartbeat --fix` keeps the newer side: a line edited by hand is carried into the "
                "detail file (the old text under ## History), else the line is re-rendered from it"
            )
            fault(mid, "index-drift", "warning", n, message, fix)
    return out


def missing_index() -> Finding:
    return Finding("index-missing", "error", "MEMORY.md", None, "MEMORY.md does not exist", FIX_REBUILD)


def conflicts(root) -> list[Finding]:
    """A `conflict-markers` finding for each Markdown file of the root left conflicted."""
    from . import markers

    return [
        Finding("conflict-markers", "error", rel, line, "unresolved git conflict markers", markers.way_out(rel))
        for rel, line in markers.scan_root(root)
    ]


# ---------------------------------------------------------------- the one planner

# What a line's memory is, besides a readable memory (a Detail, or anything with ``detail``):
UNREADABLE = "unreadable"  # its file cannot be read: the line stays as written
MISSING = "missing"  # no file: a tidy plan drops the line
EXPIRED = "expired"  # readable but past its expiry: a tidy plan drops the line (heartbeat archives it)
DUPLICATE, NOT_A_MEMORY = "duplicate", "not a memory"  # reasons in ``Plan.kept`` / ``Plan.dropped``


class Plan(NamedTuple):
    """What MEMORY.md will hold: ``doc`` (the index with the entries in their slots), the
    memories it lists in file order, and what the plan changed and why."""

    doc: IndexDoc
    listed: list
    demoted: list  # ids that lost a line
    promoted: list  # ids that got one
    dropped: list  # (line number, id, reason) of each line removed
    kept: list  # (line number, id, reason) of each entry line kept as written
    warnings: list
    refused: bool
    room: int

    @property
    def ids(self) -> set:
        return {d.id for d in self.listed}

    def line_for(self, memory_id: str) -> str | None:
        """The index line a memory gets, or None when it is not listed."""
        for d in self.listed:
            if d.id == memory_id:
                return render_line(_entry(d))
        return None


def plan(
    doc: IndexDoc,
    memories: Mapping[str, object],
    *,
    max_lines: int,
    on_full: str = "demote",
    add=None,
    changed=None,
    pool: Iterable | None = None,
    promote: Iterable | None = None,
    tidy: bool = False,
    fit: bool = False,
    activity=None,
) -> Plan:
    """Which memories MEMORY.md lists, in what order, and what happens to every entry line.

    memories: id -> a Detail (or heartbeat Memo), UNREADABLE, MISSING (also when absent) or EXPIRED;
    add: a new memory to list (refused when full under ``on_full: refuse``); changed: a memory
    about to be written; pool: list these instead of the lines' memories (`index rebuild`);
    promote: memories that may take a free line (under activity: compete for every line); tidy:
    drop second, missing and expired lines; fit: demote listed memories even when hand-written
    lines took the room (else a write only warns); activity: see ``rank``."""
    lines: list = []
    chosen: dict = {}
    dropped: list = []
    kept: list = []
    for n, x in enumerate(doc.lines, 1):
        if not isinstance(x, Entry):
            lines.append(x)
            continue
        mid = x.id
        status = None
        reason: str | None
        if mid is None or not is_safe_id(mid):
            reason = NOT_A_MEMORY
        elif mid in chosen:
            reason = DUPLICATE
        else:
            status = changed if changed is not None and mid == changed.id else memories.get(mid, MISSING)
            reason = status if isinstance(status, str) else None
        if reason is None:
            chosen[mid] = status
            lines.append(x)
        elif tidy and reason in (DUPLICATE, MISSING, EXPIRED):
            dropped.append((n, mid, reason))
        else:
            kept.append((n, mid, reason))
            lines.append(x.raw if x.raw is not None else render_line(x))  # kept as written
    base = IndexDoc(lines, doc.newline, doc.final_newline)
    listed = set(chosen)
    if pool is not None:
        chosen = {d.id: d for d in pool}
    if add is not None:
        chosen[add.id] = add
    room = free_room(max_lines, base.fixed_lines())
    warnings: list = []
    ranked = rank(chosen.values(), activity)
    demoted: list = []
    promoted: list = []
    if len(ranked) > room and add is not None and on_full == "refuse":
        return Plan(base, [], [], [], dropped, kept, warnings, True, room)
    still = [d for d in ranked if d.id in listed]
    if promote is not None and activity is not None and room > 0:
        # index.rank: activity: the memories offered compete with the listed ones for the room by
        # retention; the losers leave (``demoted``), the winners come in (``promoted``)
        have = set(chosen)
        rivals = [d for d in promote if d.id not in have]
        keep, _ = demote(rank([*ranked, *rivals], activity), room, fresh_ids(rivals, listed, activity))
        won = {d.id for d in keep}
        demoted = [d.id for d in rank(ranked) if d.id not in won]
        promoted = [d.id for d in rank(d for d in rivals if d.id in won)]
        ranked = keep
    elif len(ranked) > room and len(still) > room and not (fit and room > 0):
        # Hand-written lines took the room of entries already listed: none is moved out for them.
        demoted = [d.id for d in ranked if d.id not in listed]
        if not fit:
            warnings.append(crowded(base, max_lines, len(still), demoted))
        ranked = still
    elif len(ranked) > room:
        ranked, out = demote(ranked, room, fresh_ids(ranked, listed, activity))
        demoted = [d.id for d in out]
        if any(d.pinned for d in out):
            warnings.append("the index is full of pinned entries; some pinned memories are not listed")
        others = [mid for mid in demoted if add is None or mid != add.id]
        if others and add is not None:
            warnings.append("the index is full: moved out of MEMORY.md (detail files kept): " + listed_ids(others))
        if add is not None and add.id in demoted:
            why = (
                "every line holds a pinned memory; raise index.max_lines in memcli.yaml"
                if add.pinned
                else "the listed memories are pinned, more important or more in use; "
                f"`memcli update {add.id} --pin` or a higher --importance lists it"
            )
            warnings.append(f"the index is full: {add.id} is not listed in MEMORY.md (its detail file is kept): {why}")
    elif promote is not None and len(ranked) < room:
        # a free line belongs to a memory, the best ranked first
        import heapq

        have = set(chosen)
        best = heapq.nsmallest(room - len(ranked), (d for d in promote if d.id not in have), key=_key)
        promoted = [d.id for d in best]
        ranked = rank([*ranked, *best], activity)
    if activity is not None:
        ranked = rank(ranked)  # the lines' order: that of `importance`, whatever chose them
    return Plan(
        base.with_entries([_entry(d) for d in ranked]), ranked, demoted, promoted, dropped, kept, warnings, False, room
    )
