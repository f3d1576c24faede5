"""The rules of MEMORY.md: which memories it lists, in what order, what falls out when it is
full, and what is wrong with it. Writes (`Memory`) and the heartbeat use these same functions.

- order: pinned first, then importance, then the newest update, then the id (`Detail.rank_key`);
- room: the index stays under `index.max_lines` lines, so the entries get
  ``max_lines - 1 - fixed`` lines, fixed being the lines that are not entries;
- demotion: when there are more memories than room, the lowest-ranked unpinned ones lose
  their line first, then the lowest-ranked pinned ones. Their detail files stay.
- `index.rank: activity` changes only which memories keep a line: pinned first, then the
  retention score (``retention``: importance, recency and recalls from `.memcli/trace.jsonl`).
  The lines stay in the order above (``file_order``), so reading never reorders the file, and the
  score reads its clock from the data (the newest update or recall), so a given set of files and
  trace always plans the same index. After a git merge the trace is left out (``Activity`` with no
  accesses): two clones with different traces then plan the same MEMORY.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Mapping

from ..errors import UnsafePathError, UsageError
from ..model import Detail, Entry, Finding
from .fs import check_id
from .index import IndexDoc

FIX_REBUILD = "run `memcli index rebuild`"
# The fixes `index check` and the heartbeat both give for a file they cannot use.
FIX_UNREADABLE_INDEX = ("make MEMORY.md UTF-8 text again (git checkout MEMORY.md), "
                        "or move it away and run `memcli index rebuild`")
FIX_BROKEN_FILE = "fix the frontmatter by hand (memcli never rewrites a broken file)"
FIX_UNREADABLE_FILE = "make it a UTF-8 text file under 10 MB, or move it out of memory/"


def free_room(max_lines: int, fixed: int) -> int:
    """How many entry lines fit in an index of fewer than max_lines lines with `fixed` other lines."""
    return max_lines - 1 - fixed


# index.rank: activity. Weights chosen on the simulated month (benchmarks/index_month.py, dev seed):
# importance still leads, recency keeps new memories a while, recalls keep what is in use.
W_IMPORTANCE, W_RECENCY, W_ACCESS = 0.2, 0.4, 0.4
ACCESS_CAP = 16  # recalls at which the access term is full (it grows with log(1 + recalls))


@dataclass(frozen=True)
class Activity:
    """What `index.rank: activity` ranks by: id -> {"count", "last"} of recalls (from the trace; empty
    when planning a merged index) and the half-life of recency in days (`recall.half_life`)."""

    access: Mapping[str, dict] = field(default_factory=dict)
    half_life: float = 7.0


def _days(stamp) -> float | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(str(stamp).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp() / 86400.0


def _memory(d):
    return d.detail if hasattr(d, "detail") and not hasattr(d, "rank_key") else d


def retention(d, act: Activity, now_days: float) -> float:
    """W_IMPORTANCE * importance + W_RECENCY * recency + W_ACCESS * recalls, each in 0..1: recency
    halves every half_life days since the last update or recall; recalls count as
    log(1 + n) / log(1 + ACCESS_CAP), at most 1."""
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


def file_order(kept) -> list:
    """The order of the lines in MEMORY.md: pinned, importance, newest update, id, whatever chose them."""
    return sorted(kept, key=_key)


def _key(d) -> tuple:
    return d.rank_key() if hasattr(d, "rank_key") else d.detail.rank_key()


def demote(ranked: list, room: int) -> tuple[list, list]:
    """(kept, demoted) for memories in index order and the room the index has. Unpinned ones go
    first, lowest-ranked first; then pinned ones from the bottom. Linear in the count."""
    excess = len(ranked) - max(room, 0)
    if excess <= 0:
        return list(ranked), []
    dropped: set = set()
    demoted = []
    for i in range(len(ranked) - 1, -1, -1):
        if len(demoted) == excess:
            break
        if not ranked[i].pinned:
            dropped.add(i)
            demoted.append(ranked[i])
    kept = [d for i, d in enumerate(ranked) if i not in dropped] if dropped else list(ranked)
    while len(demoted) < excess:
        demoted.append(kept.pop())
    return kept, demoted


def describe_hand_written(doc: IndexDoc) -> str:
    """'the N hand-written lines of MEMORY.md (lines a-b)': what a person must shorten."""
    nums = doc.hand_written()
    where = f" (line {nums[0]})" if len(nums) == 1 else f" (lines {nums[0]}-{nums[-1]})" if nums else ""
    return f"the {len(nums)} hand-written line{'' if len(nums) == 1 else 's'} of MEMORY.md{where}"


def crowded(doc: IndexDoc, max_lines: int, listed: int, left_out: list) -> str:
    """The warning when hand-written lines take the room of entries already listed."""
    room = max(free_room(max_lines, doc.fixed_lines()), 0)
    out = (f"; not listed (detail file kept): {', '.join(left_out)}" if left_out else "")
    return (f"MEMORY.md is over its {max_lines} lines: {describe_hand_written(doc)} leave room for {room} "
            f"entries and {listed} are listed, so no listed entry was moved out{out}. Shorten the "
            "hand-written lines, or raise index.max_lines in memcli.yaml")


def is_safe_id(memory_id: str | None) -> bool:
    if memory_id is None:
        return False
    try:
        check_id(memory_id)
        return True
    except (UsageError, UnsafePathError):
        return False


def check(doc: IndexDoc, lookup: Callable[[str], object], max_lines: int) -> list[tuple[str | None, Finding]]:
    """(id, finding) for each fault of MEMORY.md, one message per fault.

    lookup(id) gives the memory's Detail, or "broken", "archived" or "missing"."""
    out: list[tuple[str | None, Finding]] = []
    n_lines = doc.line_count()
    if n_lines >= max_lines:
        fixed = doc.fixed_lines()
        fix = ("`memcli heartbeat --fix` demotes the lowest-ranked entries (their detail files stay)"
               if free_room(max_lines, fixed) > 0 else
               f"{describe_hand_written(doc)} leave no room for entries: shorten them, "
               "or raise index.max_lines in memcli.yaml")
        out.append((None, Finding("index-over-limit", "error", "MEMORY.md", max_lines,
                                  f"{n_lines} lines; the index must stay under {max_lines}", fix)))
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
            out.append((None, Finding("index-bad-link", "warning", "MEMORY.md", n, e.message,
                                      "point it at memory/<id>.md, or remove the line")))
            continue
        if mid in seen:
            out.append((mid, Finding("index-duplicate-line", "warning", "MEMORY.md", n, f"{mid} is listed twice",
                                     "`memcli heartbeat --fix` keeps the first line")))
            continue
        seen.add(mid)
        d = lookup(mid)
        if d == "missing" or d == "archived":
            where = " (it is archived in memory/archive/)" if d == "archived" else ""
            out.append((mid, Finding("index-missing-file", "error", "MEMORY.md", n,
                                     f"points at {x.path}, which does not exist{where}",
                                     "`memcli heartbeat --fix` drops the line")))
        elif isinstance(d, Detail) and d.entry != x:
            e = d.entry
            what = [k for k in ("title", "summary", "tags") if getattr(e, k) != getattr(x, k)]
            out.append((mid, Finding("index-drift", "warning", "MEMORY.md", n,
                                     f"{mid}: the line's {' and '.join(what)} "
                                     f"{'differs' if len(what) == 1 else 'differ'} from {x.path}",
                                     "`memcli heartbeat --fix` keeps the newer side: a line edited by hand is carried "
                                     "into the detail file (the old text under ## History), "
                                     "else the line is re-rendered from it")))
    return out


def missing_index() -> Finding:
    return Finding("index-missing", "error", "MEMORY.md", None, "MEMORY.md does not exist", FIX_REBUILD)


def conflicts(root) -> list[Finding]:
    """A `conflict-markers` finding for each Markdown file of the root (MEMORY.md, memories,
    archive, episodes) left with unresolved git conflict markers."""
    from . import markers

    return [Finding("conflict-markers", "error", rel, line, "unresolved git conflict markers", markers.way_out(rel))
            for rel, line in markers.scan_root(root)]
