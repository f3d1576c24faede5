"""Keeping a root healthy: the heartbeat's audit and the repairs it plans (made here, under the
root lock), `index rebuild` and `index check`. Nothing here deletes a memory: an expired one moves
to memory/archive/, a demoted one loses only its index line. The only files removed are a crashed
writer's temp files, under the lock and untouched for ``TEMP_MIN_AGE`` seconds (a writer that never
takes the lock, such as ``init``, still writes within that time)."""

from __future__ import annotations

import os
import stat
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

from .. import progress
from ..dates import expired, now_of, parse, stamp, utcnow
from ..errors import FileError, MemcliError, UnsafePathError, UsageError
from ..heartbeat.base import TEMP_MIN_AGE, Report, age
from ..model import Detail, Listing, Problem, Result
from ..safety.writecheck import WriteCheck
from ..store import details as dfile
from ..store import indexrules, layout, markers
from ..store.fs import atomic_write, read_text
from ..store.index import IndexDoc
from .write import replaced


@dataclass
class Repair:
    """What a repair found and did: the report after the repairs, the plan, what was applied."""

    report: Report
    actions: list
    applied: list
    dry_run: bool = False
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            **self.report.to_dict(),
            "actions": [a.to_dict() for a in self.actions],
            "applied": self.applied,
            "dry_run": self.dry_run,
        }


def audit(root, now=None, *, write_cache: bool = True):
    """Every heartbeat check over every file: a heartbeat Report of findings."""
    from ..heartbeat import audit as run

    return run(root, now, write_cache=write_cache)


def repair(root, dry_run: bool = False, now=None, *, write_cache: bool | None = None) -> Repair:
    """Audit, plan the safe repairs and (unless dry_run) make them under the root lock."""
    from ..heartbeat import plan

    report = audit(root, now, write_cache=not dry_run if write_cache is None else write_cache)
    actions = plan(report)
    applied: list = []
    if not dry_run and actions:
        applied = apply(root, actions, now)
        if applied:
            report = audit(root, now)
    return Repair(report, actions, applied, dry_run)


def apply(root, actions: list, now=None) -> list[str]:
    """Make the planned repairs under the root lock, each checked again first: one line each."""
    if not actions:
        return []
    from .git import reconcile_index

    when = now_of(now)
    done: list[str] = []
    by_kind = defaultdict(list)
    for a in actions:
        by_kind[a.kind].append(a)
    with root.lock():
        done += [_remove_temp(root.path, a.path) for a in by_kind["remove-temp"]]
        archived = []
        for a in progress.each(by_kind["archive"], "archiving expired memories"):
            msg, ok = _archive(root, a.id, when)
            done.append(msg)
            if ok:
                archived.append(a.id)
        if by_kind["rebuild-index"]:  # MEMORY.md left with git conflict markers: reconciled as after a merge
            if markers.file_conflict(root.index_path) is None:
                return [*done, "skipped rebuilding MEMORY.md: its conflict is already settled"]
            reconcile_index(root)
            return [*done, "rebuilt MEMORY.md from both sides of its git conflict"]
        done += [_carry(root, a.id, when) for a in progress.each(by_kind["carry"], "carrying hand edits")]
        index_kinds = ("drop-line", "rerender", "carry", "demote", "promote", "swap-out", "swap-in")
        if archived or any(by_kind[k] for k in index_kinds):
            done += _rewrite_index(root, by_kind, set(archived), when)
    return done


def _carry(root, mid: str, when: datetime) -> str:
    """Write a hand-edited index line's title, summary and tags into the detail file, as `update` does."""
    rel = layout.detail_rel(mid)
    try:
        x = next((e for e in root.read_index().entries if e.id == mid), None)
        path = root.detail_path(mid)
        raw = read_text(path, root.rel(path))
        d = dfile.parse(raw, mid, root.rel(path))
    except MemcliError as e:
        return f"skipped carrying the MEMORY.md line of {mid} into {rel}: {e.message}"
    if x is None or x == d.entry:
        return f"skipped carrying the MEMORY.md line of {mid}: it no longer differs from {rel}"
    try:  # the line's text goes through the write check like an update's
        check = WriteCheck.of(root, root.rel(path))
        fields = check.fields({"title": x.title, "summary": x.summary, "tags": tuple(x.tags)}).fields
    except MemcliError as e:
        return f"skipped carrying the MEMORY.md line of {mid} into {rel}: {e.message}"
    x = x.__class__(fields["title"], fields["summary"], fields["tags"], x.path)
    notes, new = replaced(d, x.title or None, x.summary)
    if x.tags != d.tags:
        notes.append(f"tags were: {', '.join(d.tags) or 'none'}")
        new["tags"] = x.tags
    now = stamp(when)
    body = dfile.add_history(d.body, now[:10], notes) if notes else d.body
    atomic_write(path, dfile.render(d.replace(updated=now, body=body, **new)), newline=dfile.newline_of(raw))
    return f"carried the hand edit of {mid}'s MEMORY.md line into {rel} (the old text is under its ## History)"


def _remove_temp(root: Path, rel: str) -> str:
    path = root / rel
    if not layout.is_temp(Path(rel).name) or ".." in Path(rel).parts:
        return f"skipped {rel}: not a memcli temp file"
    try:
        s = os.lstat(path)
    except FileNotFoundError:
        return f"skipped {rel}: already gone"
    seconds = time.time() - s.st_mtime
    if not stat.S_ISREG(s.st_mode) or seconds < TEMP_MIN_AGE:
        return f"skipped {rel}: it changed since the audit"
    try:
        os.unlink(path)
    except OSError as e:
        return f"skipped {rel}: {e.strerror or e}"
    return f"removed {rel} (left by a crashed writer, {age(seconds)} old)"


def _archive(root, mid: str, when: datetime) -> tuple[str, bool]:
    src, dst = root.detail_path(mid), root.detail_path(mid, archived=True)
    dst_rel = layout.detail_rel(mid, archived=True)
    try:
        d = root.load(src)
    except (FileError, UsageError, UnsafePathError) as e:
        return f"skipped archiving {mid}: {e.message}", False
    exp = parse(d.expires)
    if exp is None or exp.date() >= when.date():
        return f"skipped archiving {mid}: it no longer expires before today", False
    if dst.exists() or dst.is_symlink():
        return f"skipped archiving {mid}: {dst_rel} already exists (merge or rename one of them by hand)", False
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
    except OSError as e:
        return f"skipped archiving {mid}: {e.strerror or e}", False
    return f"archived {mid} (expired {d.expires}): {layout.detail_rel(mid)} -> {dst_rel}", True


def _rewrite_index(root, by_kind: dict, archived: set, when: datetime) -> list[str]:
    """The index repairs on a fresh read of MEMORY.md and the files it names: the audit's plan,
    offered only the planned promotions. One atomic write."""
    if not root.index_path.exists():
        return []  # nothing lists them; `memcli index rebuild` writes a new index
    try:
        doc = root.read_index()
    except MemcliError as e:
        return [f"skipped the MEMORY.md repairs: {e.message}"]
    today = when.date().isoformat()

    def load(mid: str):
        try:
            p = root.detail_path(mid)
            return root.load(p) if p.is_file() else indexrules.MISSING
        except (FileError, UsageError, UnsafePathError):
            return indexrules.UNREADABLE

    memories: dict = {}
    for entry in doc.entries:
        if entry.id and indexrules.is_safe_id(entry.id) and entry.id not in memories:
            memories[entry.id] = indexrules.EXPIRED if entry.id in archived else load(entry.id)
    promote = [
        d
        for d in (load(a.id) for a in by_kind["promote"] + by_kind["swap-in"])
        if isinstance(d, Detail) and not expired(d.expires, today)
    ]
    p = root.plan_index(doc, memories=memories, tidy=True, fit=True, promote=promote)
    done = []
    for _, mid, why in p.dropped:
        if why == indexrules.DUPLICATE:
            done.append(f"dropped a second MEMORY.md line of {mid}")
        elif why == indexrules.MISSING:
            done.append(f"dropped the MEMORY.md line of {mid}: {layout.detail_rel(mid)} does not exist")
    done += [f"demoted {mid}: dropped its MEMORY.md line ({layout.detail_rel(mid)} stays)" for mid in p.demoted]
    in_use = " (in use)" if by_kind["swap-in"] else ""
    done += [f"promoted {mid} into MEMORY.md{in_use}" for mid in p.promoted]
    listed = {d.id: d for d in p.listed}
    old = {e.id: e for e in reversed(doc.entries)}
    for a in by_kind["rerender"]:
        if a.id in listed and a.id in old and listed[a.id].entry != old[a.id]:
            done.append(f"re-rendered the MEMORY.md line of {a.id} from {layout.detail_rel(a.id)}")
    root.write(p)
    return done


def listing(root, tag: str | None = None, type: str | None = None, all: bool = False) -> Listing:
    """The memories (memory/archive/ too with all), in index order, filtered by tag and type."""
    from ..model import TYPES, clean_tags

    if type is not None and type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
    found, problems = root.listing(archived=all)
    want = clean_tags([tag]) if tag else ()
    if tag:
        found = [d for d in found if want and want[0] in d.tags]
    if type:
        found = [d for d in found if d.type == type]
    indexed = {e.id for e in root.read_index().entries if e.id}
    return Listing(found, problems, indexed)


def _relisted(root, listing: Listing, before: dict, after: dict) -> Listing:
    """`listing` brought up to date for the detail files whose fingerprint changed since ``before``."""
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    changed |= {d.id for d in listing.details if d.id not in after}
    rels = {layout.detail_rel(k) for k in changed}
    found = [d for d in listing.details if d.id not in changed]
    problems = [p for p in listing.problems if p.path not in rels]
    for mid in sorted(changed & after.keys()):
        path = root.detail_path(mid)
        try:
            found.append(root.load(path))
        except (FileError, UnsafePathError, UsageError) as e:
            problems.append(getattr(e, "problem", None) or Problem(root.rel(path), None, e.message))
    found.sort(key=Detail.rank_key)
    return Listing(found, problems, listing.indexed)


def rebuild_index(root) -> Result:
    """Regenerate MEMORY.md from the detail files: same files, same bytes; other lines kept. The
    files are parsed without the lock (the slow part); under it only those changed meanwhile are read
    again. Lines whose file is gone go; a memory that cannot be read keeps its line as written."""
    from ..store.templates import template_text

    before = root.fingerprints()
    found = listing(root)
    with root.lock():
        after = root.fingerprints()
        if after != before or any(d.id not in after for d in found.details):
            found = _relisted(root, found, before, after)
        doc = root.read_index()
        if not doc.lines:
            doc = IndexDoc.parse(template_text(layout.INDEX))
        today = utcnow()[:10]
        memories: dict = {}
        for p in found.problems:
            mid = layout.id_of(p.path)
            if mid is not None:
                memories[mid] = indexrules.UNREADABLE
        memories.update((d.id, indexrules.EXPIRED if expired(d.expires, today) else d) for d in found.details)
        pool = [d for d in found.details if not expired(d.expires, today)]
        plan = root.plan_index(doc, pool=pool, memories=memories, tidy=True)
        root.write(plan)
    return Result(
        {"entries": len(plan.listed), "left_out": plan.demoted, "problems": [str(p) for p in found.problems]},
        plan.warnings,
    )


def check_index(root) -> list[Problem]:
    """What is wrong with MEMORY.md and the detail files, in the heartbeat's words: [] when all is well."""
    try:
        doc = root.read_index()
    except (FileError, UsageError, UnsafePathError) as e:
        return [
            Problem(layout.INDEX, None, f"{e.message.removeprefix('MEMORY.md: ')} ({indexrules.FIX_UNREADABLE_INDEX})")
        ]
    problems: list[Problem] = []
    if not root.index_path.exists():
        f = indexrules.missing_index()
        problems.append(Problem(f.path, None, f"{f.message} ({f.fix})"))
    broken: dict[str, Problem] = {}
    found = indexrules.check(doc, partial(line_target, root, broken=broken), int(root.config["index.max_lines"]))
    problems += [Problem(f.path, f.line, f"{f.message} ({f.fix})") for _, f in found]
    problems += broken.values()
    problems += [Problem(f.path, f.line, f"{f.message} ({f.fix})") for f in indexrules.conflicts(root.path)]
    listed = {e.id for e in doc.entries if e.id}
    problems += root.misnamed_files()
    for p in root.detail_files():
        if p.stem in listed:
            continue
        try:
            root.load(p)
        except (FileError, UsageError, UnsafePathError) as e:
            problems.append(_problem_with_fix(e, root.rel(p)))
    return problems


def line_target(root, mid: str, broken: dict | None = None):
    """What `indexrules.check` is told of the memory an index line names: its Detail, "archived",
    "missing" or "broken" (with its problem in ``broken``)."""
    try:
        path = root.detail_path(mid)
        if not path.is_file():
            return "archived" if root.detail_path(mid, archived=True).is_file() else "missing"
        return root.load(path)
    except (FileError, UsageError, UnsafePathError) as e:
        if broken is not None:
            broken[mid] = _problem_with_fix(e, layout.detail_rel(mid))
        return "broken"


def _problem_with_fix(e: MemcliError, rel: str) -> Problem:
    """A file `check_index` cannot use, with the fix the heartbeat gives for the same fault."""
    p = getattr(e, "problem", None)
    if p is not None:
        return Problem(p.path, p.line, f"{p.message} ({indexrules.FIX_BROKEN_FILE})")
    if isinstance(e, FileError):
        return Problem(rel, None, f"{e.message.removeprefix(rel + ': ')} ({indexrules.FIX_UNREADABLE_FILE})")
    return Problem(rel, None, e.message)
