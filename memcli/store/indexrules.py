"""The rules of MEMORY.md: which memories it lists, in what order, what falls out when it is
full, and what is wrong with it. Writes (`Memory`) and the heartbeat use these same functions.

- order: pinned first, then importance, then the newest update, then the id (`Detail.rank_key`);
- room: the index stays under `index.max_lines` lines, so the entries get
  ``max_lines - 1 - fixed`` lines, fixed being the lines that are not entries;
- demotion: when there are more memories than room, the lowest-ranked unpinned ones lose
  their line first, then the lowest-ranked pinned ones. Their detail files stay.
"""

from __future__ import annotations

from typing import Callable

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


def rank(details) -> list:
    """Index order (anything with `rank_key()`, or a `detail` giving a Detail)."""
    return sorted(details, key=_key)


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
