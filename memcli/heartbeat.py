"""Heartbeat: audit a memory root, plan the safe repairs, apply them.

``audit(mem)`` reads every file once and returns a ``Report``: findings, each with a stable
code, a severity, the file (and line) and a suggested fix. ``plan(report)`` lists the repairs
that need no person; ``apply(mem, actions)`` makes them under the root lock with atomic
writes and returns what it did. Deterministic and offline: no model, no network.

Nothing here deletes a memory: an expired one moves to ``memory/archive/``, a demoted one
loses only its index line. Duplicates, secrets and injection are reported, never changed.
The only files removed are temp files of a crashed writer, and only when no memcli writer
can own them: the root lock is held, and the file has not been touched for
``TEMP_MIN_AGE`` seconds (a writer that never takes the lock, such as ``init``, still
keeps writing within that time).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from .errors import FileError, MemcliError, UnsafePathError, UsageError
from .model import Detail, Entry
from .store import details as dfile
from .store.fs import STATE_DIR, TMP_PREFIX, check_id, decode
from .store.index import IndexDoc, render_line
from .store import markers as conflicts
from .gitmerge import index_actions as conflicted_index_actions, rebuild_conflicted_index
from .gitsync import check as git_findings

SEVERITIES = ("error", "warning", "info")
IMPORTANT = 0.7  # importance from which a memory is promoted into a free index line
TEMP_MIN_AGE = 120.0  # seconds a temp file must be untouched before it counts as left behind
SESSION_MAX_BYTES = 1_000_000
DUPLICATE_RATIO = 90.0  # rapidfuzz ratio of title + summary from which two memories are near-duplicates
_BLOCK_MAX = 30  # a word in more memories than this makes no duplicate block
_WINDOW = 4  # neighbours compared in sorted title order
_READ_LIMIT = 10 * 1_000_000
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WORDS = re.compile(r"[a-z0-9]{3,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_WS = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")
_LETTER = re.compile(r"(?<!\w)[^\W\d_](?!\w)")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a stable code, a severity, where it is and what to do about it."""

    code: str
    severity: str
    path: str
    line: int | None
    message: str
    fix: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message, "fix": self.fix}

    def __str__(self) -> str:
        return f"{self.severity} {self.code} {self.where} {self.message} (fix: {self.fix})"


@dataclass(frozen=True)
class Action:
    """One safe repair. ``message`` says what it will do; ``apply`` says what it did."""

    kind: str  # remove-temp | drop-line | archive | rerender | demote | promote
    path: str
    id: str | None
    message: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "id": self.id, "message": self.message}


class Memo(NamedTuple):
    """What the audit keeps of one memory: a Detail without its body, small enough for 100k of them."""

    id: str
    path: str
    title: str
    summary: str
    tags: tuple
    importance: float
    pinned: bool
    created: str | None
    updated: str | None
    expires: str | None

    @property
    def detail(self) -> Detail:
        return Detail(self.id, self.title, self.summary, self.tags, importance=self.importance, pinned=self.pinned,
                      created=self.created, updated=self.updated, expires=self.expires, path=self.path)


def _rank(m: Memo) -> tuple:
    return m.detail.rank_key()


@dataclass
class _State:
    """What ``plan`` needs from the audit, beyond the findings."""

    index: IndexDoc | None = None
    details: dict = field(default_factory=dict)  # id -> Memo of each readable memory/*.md
    broken: set = field(default_factory=set)  # ids of memory/*.md that cannot be read
    expired: dict = field(default_factory=dict)  # id -> expires
    temps: list = field(default_factory=list)  # (relative path, age in seconds)
    max_lines: int = 40


@dataclass
class Report:
    """What ``audit`` found: findings sorted by severity, then path and line."""

    root: str
    now: str
    findings: list
    files: int
    state: _State = field(default_factory=_State, repr=False)
    not_indexed: int = 0  # memories MEMORY.md does not list (reported one by one only when they belong there)

    def counts(self) -> dict:
        c = Counter(f.severity for f in self.findings)
        return {s: c.get(s, 0) for s in SEVERITIES}

    @property
    def needs_attention(self) -> bool:
        """A warning or an error remains (what `heartbeat --check` fails on)."""
        return any(f.severity != "info" for f in self.findings)

    def to_dict(self) -> dict:
        return {"root": self.root, "now": self.now, "findings": [f.to_dict() for f in self.findings],
                "summary": {**self.counts(), "files": self.files, "not_indexed": self.not_indexed}}


# ---------------------------------------------------------------- time

def _now(now) -> datetime:
    if now is None:
        return datetime.now(timezone.utc).replace(microsecond=0)
    if isinstance(now, datetime):
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    return _when(now) or datetime.now(timezone.utc)


def _when(value) -> datetime | None:
    """An ISO date or date-time as an aware datetime; None when it is not one."""
    if value is None:
        return None
    text = str(value).strip()
    if not _DATE.match(text):
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        try:
            dt = datetime.fromisoformat(text[:10])
        except ValueError:
            return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"


def key_line(text: str, key: str) -> int | None:
    m = re.search(rf"^{re.escape(key)}\s*:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


# ---------------------------------------------------------------- one file

def scan_text(rel: str, text: str) -> list[Finding]:
    """Secrets and text that tries to instruct the agent, with their lines."""
    from .scan import find_injection, find_secrets

    out = [Finding("secret", "error", rel, s.line, f"{s.kind} at line {s.line}, column {s.column}",
                   "remove it from the file and rotate it (git history may still hold it)")
           for s in find_secrets(text)]
    for m in find_injection(text):
        fix = ("remove the invisible characters" if m.kind == "invisible unicode"
               else "rewrite it as a description, or delete it if you did not write it")
        out.append(Finding("injection", "warning", rel, m.line, f"{m.kind}: {m.excerpt}", fix))
    out += [Finding(*f) for f in conflicts.findings(rel, text)]
    return out


def check_detail(rel: str, text: str, memory_id: str) -> tuple[Detail | None, list[Finding]]:
    """Parse one detail file's text: the Detail (None when broken) and the findings that do not
    depend on the time (``expired_finding`` adds the one that does)."""
    findings: list[Finding] = []
    try:
        d = dfile.parse(text, memory_id, rel)
    except dfile.FrontmatterError as e:
        p = e.problem
        findings.append(Finding("frontmatter-broken", "error", rel, p.line, p.message,
                                "fix the frontmatter by hand (memcli never rewrites a broken file)"))
        d = None
    if d is not None:
        for key in ("created", "updated", "expires"):
            value = getattr(d, key)
            if value is not None and _when(value) is None:
                findings.append(Finding("frontmatter-invalid", "warning", rel, key_line(text, key),
                                        f"{key}: {value!r} is not a date",
                                        f"write {key} as a date like 2027-01-31" +
                                        (" or null" if key == "expires" else "")))
    findings += scan_text(rel, text)
    return d, findings


def expired_finding(d: Detail | Memo, line: int | None, now: datetime) -> Finding | None:
    exp = _when(d.expires)
    if exp is None or exp.date() >= now.date():
        return None
    return Finding("expired", "warning", d.path, line, f"{d.id} expired on {d.expires}",
                   "`memcli heartbeat --fix` moves it to memory/archive/ (kept, listed by `list --all`), "
                   "or set a later --expires")


def read_file(path: Path, rel: str) -> str:
    with open(path, "rb") as f:
        data = f.read(_READ_LIMIT + 1)
    return decode(data, rel, _READ_LIMIT)


# ---------------------------------------------------------------- the index

def check_index(doc: IndexDoc, lookup, max_lines: int) -> list[tuple[str | None, Finding]]:
    """(id, finding) for MEMORY.md. lookup(id) -> a Detail, "broken", "archived" or "missing"."""
    out: list[tuple[str | None, Finding]] = []
    n_lines = doc.line_count()
    if n_lines >= max_lines:
        fixed = doc.fixed_lines()
        fix = ("`memcli heartbeat --fix` demotes the lowest-ranked entries (their detail files stay)"
               if fixed < max_lines - 1 else
               f"shorten the {fixed} hand-written lines, or raise index.max_lines in memcli.yaml")
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
                                     "`memcli heartbeat --fix` re-renders the line from the detail file")))
    return out


# ---------------------------------------------------------------- reading every file once

# What one file says, independent of the time and of the other files, is kept per file in
# .memcli/heartbeat-cache.json under the file's fingerprint (mtime, size, inode): the next
# audit reads only the files that changed. The cache is disposable and is ignored when
# memcli's checks change (its signature hashes their source).
CACHE_NAME = "heartbeat-cache.json"
CACHE_FORMAT = "1"
PARALLEL_MIN = 2000  # files to read from which worker processes share the work
_CHUNK = 250
_UNREADABLE_FIX = "make it a UTF-8 text file under 10 MB, or move it out of memory/"
# a record: [detail fields or None, body hash or None, line of `expires:`, findings as lists]
_LITE = ("title", "summary", "tags", "importance", "pinned", "created", "updated", "expires")


def _body_hash(body: str) -> str | None:
    body = _norm(body)
    return hashlib.blake2b(body.encode("utf-8"), digest_size=12).hexdigest() if len(body) >= 40 else None


def check_file(job: tuple) -> list:
    """The record of one file: job is (relative path, absolute path, kind)."""
    rel, path, kind = job
    try:
        text = read_file(Path(path), rel)
    except (MemcliError, OSError) as e:
        msg = getattr(e, "message", None) or f"cannot read it ({e.strerror or e})"
        return [None, None, None, [["file-unreadable", "error", None, msg.removeprefix(rel + ": "), _UNREADABLE_FIX]]]
    if kind == "episode":
        found, d = scan_text(rel, text), None
    else:
        d, found = check_detail(rel, text, Path(rel).stem)
    lite = None if d is None else [list(v) if k == "tags" else v for k, v in ((k, getattr(d, k)) for k in _LITE)]
    return [lite, None if d is None else _body_hash(d.body), None if d is None else key_line(text, "expires"),
            [[f.code, f.severity, f.line, f.message, f.fix] for f in found]]


def _inspect_many(jobs: list) -> list:
    return [check_file(j) for j in jobs]


def _workers(n: int) -> int:
    if n < PARALLEL_MIN:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8, n // (PARALLEL_MIN // 2)))


def _inspect_all(jobs: list) -> list:
    """Records for the jobs, in order; in worker processes when there are many."""
    workers = _workers(len(jobs))
    if workers > 1:
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor

        # fork is cheap, but only safe while this process has a single thread (watch has two)
        method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
            else "spawn"
        chunks = [jobs[i:i + _CHUNK] for i in range(0, len(jobs), _CHUNK)]
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
                return [r for part in pool.map(_inspect_many, chunks) for r in part]
        except (OSError, RuntimeError, ImportError):
            pass  # no processes to be had (a sandbox, a broken pool): read them here
    return _inspect_many(jobs)


def _signature() -> str:
    h = hashlib.blake2b(CACHE_FORMAT.encode(), digest_size=12)
    here = Path(__file__).resolve().parent
    for name in ("heartbeat.py", "scan.py", "model.py", "store/details.py", "store/markers.py"):
        try:
            h.update((here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()


def _load_cache(root: Path, signature: str) -> dict:
    try:
        with open(root / STATE_DIR / CACHE_NAME, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("signature") == signature and isinstance(data.get("files"), dict):
            return {k: v for k, v in data["files"].items() if _valid(v)}
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    return {}


def _valid(entry) -> bool:
    """A cache entry of the expected shape: [fingerprint, record] (anything else is re-read)."""
    try:
        fp, (lite, body_hash, line, found) = entry
        return (isinstance(fp, str) and (lite is None or (isinstance(lite, list) and len(lite) == len(_LITE)))
                and all(isinstance(f, list) and len(f) == 5 for f in found))
    except (TypeError, ValueError):
        return False


def _save_cache(root: Path, signature: str, files: dict) -> None:
    from .store.fs import atomic_write, state_dir

    try:
        atomic_write(state_dir(root) / CACHE_NAME,
                     json.dumps({"signature": signature, "files": files}, ensure_ascii=False, separators=(",", ":")))
    except (MemcliError, OSError):
        pass  # a cache that cannot be written costs time on the next run, nothing else


def _read_files(mem, write_cache: bool) -> tuple[list, dict]:
    """[(relative path, kind, fingerprint, record)] for every file of memory/, archive/ and episodes/."""
    root = mem.root
    mdir = mem.memory_dir()
    jobs, fps, out = [], {}, []
    for sub, prefix, kind in ((mdir, "memory/", "detail"), (mdir / "archive", "memory/archive/", "archive"),
                              (mdir / "episodes", "memory/episodes/", "episode")):
        for de in _scan(sub):
            rel = prefix + de.name
            try:
                if de.is_symlink() and not _inside(root, Path(de.path)):
                    out.append((rel, kind, None, [None, None, None, [[
                        "file-unreadable", "error", None, "leads outside the memory root (a symlink?); not read",
                        "replace the link with the file itself"]]]))
                    continue
                if not de.is_file():
                    continue
                st = de.stat()
            except OSError:
                continue
            fps[rel] = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
            jobs.append((rel, de.path, kind))
    signature = _signature()
    cache = _load_cache(root, signature)
    todo = [j for j in jobs if (cache.get(j[0]) or [None])[0] != fps[j[0]]]
    fresh = dict(zip((j[0] for j in todo), _inspect_all(todo)))
    files = {}
    for rel, _, kind in jobs:
        record = fresh.get(rel) or cache[rel][1]
        out.append((rel, kind, fps[rel], record))
        if not any(f[0] == "file-unreadable" for f in record[3]):
            files[rel] = [fps[rel], record]
    if write_cache and (todo or len(files) != len(cache)):
        _save_cache(root, signature, files)
    return out, fps


# ---------------------------------------------------------------- the audit

def _scan(folder: Path):
    try:
        it = os.scandir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with it:
        return sorted((de for de in it if de.name.endswith(".md") and not de.name.startswith(".")),
                      key=lambda de: de.name)


def audit(mem, now=None, *, write_cache: bool = True) -> Report:
    """Every check, over every file, reading each changed file once (see CACHE_NAME)."""
    when = _now(now)
    root = mem.root
    cfg = mem.config
    st = _State(max_lines=int(cfg["index.max_lines"]))
    findings: list[Finding] = []
    files = 0

    # detail files: memory/*.md are memories; archive/ is checked too; episodes are only scanned
    details: dict[str, Memo] = {}
    broken: set = set()
    hashes: dict[str, str | None] = {}
    archived: set = set()
    records, fps = _read_files(mem, write_cache)
    for rel, kind, fp, (lite, body_hash, expires_line, found) in records:
        files += 1
        findings += [Finding(c, sev, rel, line, msg, fix) for c, sev, line, msg, fix in found]
        mid = rel.rsplit("/", 1)[1][:-3]
        if kind == "archive":
            archived.add(mid)
        if kind != "detail":
            continue
        if lite is None:
            broken.add(mid)
            continue
        title, summary, tags, importance, pinned, created, updated, expires = lite
        d = Memo(mid, rel, title, summary, tuple(tags), importance, pinned, created, updated, expires)
        details[mid] = d
        hashes[mid] = body_hash
        exp = expired_finding(d, expires_line, when) if expires else None
        if exp is not None:
            findings.append(exp)
            st.expired[mid] = d.expires
    del records  # the memos share their strings; the rest can go
    st.details, st.broken = details, broken

    # the index
    index_path = mem.index_path
    try:
        if index_path.is_symlink() and not _inside(root, index_path):
            raise UnsafePathError("MEMORY.md leads outside the memory root (a symlink?); not read")
        if index_path.exists():
            text = read_file(index_path, "MEMORY.md")
            files += 1
            st.index = IndexDoc.parse(text)
            findings += scan_text("MEMORY.md", text)
        else:
            findings.append(Finding("index-missing", "error", "MEMORY.md", None, "MEMORY.md does not exist",
                                    "run `memcli index rebuild`"))
    except (MemcliError, OSError) as e:
        findings.append(Finding("index-unreadable", "error", "MEMORY.md", None, getattr(e, "message", str(e)),
                                "make MEMORY.md UTF-8 text again (git checkout MEMORY.md), "
                                "or move it away and run `memcli index rebuild`"))

    def lookup(mid: str):
        if mid in details:
            return details[mid].detail
        if mid in broken:
            return "broken"
        return "archived" if mid in archived else "missing"

    unlisted = 0
    if st.index is not None:
        findings += [f for _, f in check_index(st.index, lookup, st.max_lines)]
        findings += _not_indexed(st, details)
        unlisted = sum(1 for mid in details if mid not in st.expired) - len(_listed(st, details))

    findings += _stale(mem, details, st.expired, fps, when)
    findings += _duplicates([details[k] for k in sorted(details)], hashes)
    findings += _state_files(mem, when)
    findings += [Finding(*f) for f in git_findings(root)]
    st.temps = _temp_files(root)
    for rel, age in st.temps:
        if age >= TEMP_MIN_AGE:
            findings.append(Finding("temp-file", "warning", rel, None,
                                    f"a temp file left by a crashed writer ({_age(age)} old)",
                                    "`memcli heartbeat --fix` removes it"))
        else:
            findings.append(Finding("temp-file", "info", rel, None,
                                    f"a temp file written {_age(age)} ago, probably by a running writer",
                                    "nothing: it is renamed or removed when the write ends"))
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.path, f.line or 0, f.code))
    iso = when.isoformat().replace("+00:00", "Z")
    return Report(str(root), iso, findings, files, st, unlisted)


def _inside(root: Path, path: Path) -> bool:
    from .store.fs import inside

    return inside(root, path)


def _listed(st: _State, details: dict) -> dict:
    """The memories MEMORY.md lists (readable, not expired), in index order."""
    return {e.id: details[e.id] for e in st.index.entries if e.id in details and e.id not in st.expired}


def _not_indexed(st: _State, details: dict) -> list[Finding]:
    """A memory missing from MEMORY.md is worth a word when it would belong there: the index has
    a free line, or the memory ranks above a listed one. (With 40 lines and thousands of memories,
    the rest are simply not the most important; the report counts them.)"""
    listed = _listed(st, details)
    fixed = st.index.line_count() - sum(1 for e in st.index.entries if e.id in listed)
    room = st.max_lines - 1 - fixed > len(listed)
    worst = max(map(_rank, listed.values())) if listed else None
    out = []
    for mid, d in details.items():
        if mid in listed or mid in st.expired:
            continue
        if room:
            why = "the index has a free line"
        elif worst is not None and (not d.pinned, -d.importance) <= worst[:2] and _rank(d) < worst:
            why = f"it ranks above {worst[-1]}, which is listed"
        else:
            continue
        if room and _promotable(d):
            why_important = "pinned" if d.pinned else f"importance {d.importance:g}"
            fix = f"`memcli heartbeat --fix` promotes it ({why_important})"
        else:
            fix = "`memcli index rebuild` lists the highest-ranked memories; or leave it: recall still finds it"
        out.append(Finding("detail-not-indexed", "info", d.path, None, f"{mid} is not in MEMORY.md, though {why}", fix))
    return out


def _promotable(d: Detail | Memo) -> bool:
    return d.pinned or d.importance >= IMPORTANT


def _stale(mem, details: dict, expired: dict, fps: dict, when: datetime) -> list[Finding]:
    from .recall import access

    limit = mem.config.seconds("heartbeat.stale_after")
    try:
        seen = access(mem.root)
    except (RecursionError, AttributeError, TypeError):
        seen = {}  # a trace log damaged by hand: judge by the update times alone
    out = []
    for mid, d in details.items():
        if mid in expired or d.pinned:
            continue
        stamps = [_when(d.updated) or _when(d.created)]
        rec = seen.get(mid)
        last_recall = _when(rec.get("last")) if isinstance(rec, dict) else None
        if last_recall is not None:
            stamps.append(last_recall)
        stamps = [s for s in stamps if s is not None]
        last = max(stamps) if stamps else datetime.fromtimestamp(int(fps[d.path].split(":")[0]) / 1e9, timezone.utc)
        idle = (when - last).total_seconds()
        if idle > limit:
            recalled = f", last recalled {last_recall.date()}" if last_recall else ", never recalled"
            out.append(Finding("stale", "info", d.path, None,
                               f"{mid}: not updated for {_age(idle)}{recalled}",
                               f"review it: `memcli update {mid}` if it still holds, "
                               f"`memcli update {mid} --expires 0d` to retire it"))
    return out


def _short(value, n: int = 60) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _norm(text: str) -> str:
    return _WS.sub(" ", text.lower()).strip()


def _identifiers(text: str) -> tuple | None:
    """The numbers and one-letter words of a text: what near-duplicates must share exactly."""
    numbers = _NUMBER.findall(text)
    letters = _LETTER.findall(text)
    return (tuple(numbers), tuple(sorted(letters))) if numbers or letters else None


def _tokens(text: str, intern=sys.intern) -> tuple:
    """Words of three letters or more, CJK bigrams; interned, so equal words share one string."""
    out = set()
    for w in _WORDS.findall(text):
        if w.isascii():
            out.add(w)
        elif len(w) == 1:
            out.add(w)
        else:
            out.update(w[i:i + 2] for i in range(len(w) - 1))
    return tuple(intern(t) for t in out)


def _duplicates(details: list, body_hashes: dict) -> list[Finding]:
    """Near-duplicates without comparing every pair: exact keys first, then rapidfuzz inside
    blocks of memories that share a rare token, plus neighbours in sorted-title order."""
    n = len(details)
    if n < 2:
        return []
    from rapidfuzz import fuzz

    texts = [_norm(f"{d.title} {d.summary}") for d in details]
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    hashes = [body_hashes.get(d.id) for d in details]
    first: dict = {}
    for i in range(n):
        if hashes[i] is not None:
            union(first.setdefault(("b", hashes[i]), i), i)
        if len(texts[i]) >= 8:
            union(first.setdefault(("t", texts[i]), i), i)

    numbers = [_identifiers(t) for t in texts]
    sizes = [len(t) for t in texts]

    def compare(a: int, b: int) -> None:
        # numbers and one-letter names tell things apart: "release 2026-12" and "release 2027-01", or
        # "plan a" and "plan b", are two memories; a ratio of 90 needs lengths within about 80% of each other
        la, lb = sizes[a], sizes[b]
        if min(la, lb) < 12 or min(la, lb) * 5 < max(la, lb) * 4 or numbers[a] != numbers[b] or find(a) == find(b):
            return
        if fuzz.ratio(texts[a], texts[b], score_cutoff=DUPLICATE_RATIO):
            union(a, b)

    # blocks: memories sharing one of their two rarest words (or CJK bigrams) are compared pairwise;
    # a word shared by many memories says nothing about any two of them and makes no block.
    toks = [_tokens(t) for t in texts]
    df = Counter(t for ts in toks for t in ts)
    blocks = defaultdict(list)
    for i, ts in enumerate(toks):
        rare = [(df[t], t) for t in ts if 1 < df[t] <= _BLOCK_MAX]
        if len(rare) > 2:
            rare.sort()
        for _, t in rare[:2]:
            blocks[t].append(i)
    del df, toks
    for members in blocks.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                compare(members[x], members[y])
    del blocks
    # and neighbours in sorted order catch the ones whose words are all common
    order = sorted(range(n), key=texts.__getitem__)
    for x in range(n - 1):
        for y in range(x + 1, min(x + 1 + _WINDOW, n)):
            compare(order[x], order[y])

    groups = defaultdict(list)
    for i in range(n):
        groups[find(i)].append(i)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: _rank(details[i]))
        keep = members[0]
        k = details[keep]
        for i in members[1:]:
            d = details[i]
            if hashes[i] is not None and hashes[i] == hashes[keep]:
                why = "the same body"
            elif texts[i] == texts[keep]:
                why = "the same title and summary"
            else:
                why = f"title and summary {fuzz.ratio(texts[i], texts[keep]):.0f}% alike"
            out.append(Finding("duplicate", "warning", d.path, None, f"{d.id} looks like a duplicate of {k.path} "
                               f"({why})", f"merge it into {k.id} (`memcli update {k.id} --append ...`) and "
                               f"`memcli forget {d.id}`, or make the two clearly different"))
    return out


def _state_files(mem, when: datetime) -> list[Finding]:
    """Scopes left open and oversized sessions in .memcli/."""
    out = []
    cfg = mem.config
    state = mem.root / STATE_DIR
    for sub, what in (("scopes", "scope"), ("sessions", "session")):
        folder = state / sub
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            path = folder / name
            rel = f"{STATE_DIR}/{sub}/{name}"
            label = name[:-5]
            clear = f"`memcli --{what} {label} {what} {'end' if what == 'scope' else 'clear'}`"
            try:
                size = path.stat().st_size
                data = json.loads(read_file(path, rel)) if size <= _READ_LIMIT else None
                if data is not None and not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                if what == "session" and data is not None and not isinstance(data.get("turns", []), list):
                    raise ValueError("its turns are not a list")
            except RecursionError:
                out.append(Finding("state-broken", "warning", rel, None, f"unreadable {what} file (nested too deeply)",
                                   f"move it away, or {clear}"))
                continue
            except (OSError, ValueError, MemcliError) as e:
                out.append(Finding("state-broken", "warning", rel, None,
                                   f"unreadable {what} file ({getattr(e, 'message', None) or e})",
                                   f"move it away, or {clear}"))
                continue
            if what == "scope":
                started = _when((data or {}).get("started"))
                limit = cfg.seconds("heartbeat.scope_max_age")
                if started is not None and (when - started).total_seconds() > limit:
                    task = _short((data or {}).get("task"))
                    out.append(Finding("scope-open", "warning", rel, None,
                                       f"scope {label!r}" + (f" (task {task!r})" if task else "") +
                                       f" has been open for {_age((when - started).total_seconds())}",
                                       f"{clear} when the task is done (its state goes to the episode log)"))
            else:
                turns = len((data or {}).get("turns") or []) if data is not None else None
                limit = int(cfg["heartbeat.session_max_turns"])
                if size > SESSION_MAX_BYTES or (turns is not None and turns > limit):
                    out.append(Finding("session-oversized", "warning", rel, None,
                                       f"session {label!r} holds {turns if turns is not None else '?'} turns "
                                       f"in {size // 1000} kB (limits: {limit} turns, "
                                       f"{SESSION_MAX_BYTES // 1000} kB)",
                                       f"{clear} (its turns go to the episode log)"))
    return out


def _temp_dirs(root: Path) -> list[Path]:
    state = root / STATE_DIR
    return [root, root / "memory", root / "memory" / "archive", root / "memory" / "episodes", state,
            state / "sessions", state / "scopes", state / "search"]


def _temp_files(root: Path) -> list[tuple[str, float]]:
    out = []
    wall = time.time()
    for folder in _temp_dirs(root):
        try:
            it = os.scandir(folder)
        except OSError:
            continue
        with it:
            for de in it:
                if not de.name.startswith(TMP_PREFIX):
                    continue
                try:
                    s = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(s.st_mode):
                    out.append((Path(de.path).relative_to(root).as_posix(), wall - s.st_mtime))
    return sorted(out)


# ---------------------------------------------------------------- plan

def plan(report: Report) -> list[Action]:
    """The repairs that are safe without a person, in the order ``apply`` makes them."""
    st = report.state
    actions = [Action("remove-temp", rel, None, f"remove {rel} (left by a crashed writer, {_age(age)} old)")
               for rel, age in st.temps if age >= TEMP_MIN_AGE]
    actions += conflicted_index_actions(report.findings, Action)
    for mid in sorted(st.expired):
        actions.append(Action("archive", f"memory/{mid}.md", mid,
                              f"archive {mid} (expired {st.expired[mid]}): memory/{mid}.md -> memory/archive/{mid}.md"
                              + " and drop its index line"))
    doc = st.index
    if doc is None:
        return actions
    live: dict[str, Memo] = {}
    fixed = 0
    for n, x in enumerate(doc.lines, 1):
        if not isinstance(x, Entry):
            fixed += 1
            continue
        mid = x.id
        if mid is None or not _safe_id(mid):
            fixed += 1
        elif mid in live:
            actions.append(Action("drop-line", "MEMORY.md", mid, f"drop MEMORY.md line {n}: {mid} is listed twice"))
        elif mid in st.expired:
            continue
        elif mid in st.details:
            d = st.details[mid]
            live[mid] = d
            if d.detail.entry != x:
                actions.append(Action("rerender", "MEMORY.md", mid,
                                      f"re-render the MEMORY.md line of {mid} from memory/{mid}.md"))
        elif mid in st.broken:
            fixed += 1  # a broken detail file: its line stays as written
        else:
            actions.append(Action("drop-line", "MEMORY.md", mid,
                                  f"drop MEMORY.md line {n}: memory/{mid}.md does not exist"))
    room = st.max_lines - 1 - fixed
    if len(live) > room > 0:
        ranked = sorted(live.values(), key=_rank)
        drop = [d for d in reversed(ranked) if not d.pinned] + [d for d in reversed(ranked) if d.pinned]
        for d in drop[:len(live) - room]:
            actions.append(Action("demote", "MEMORY.md", d.id,
                                  f"demote {d.id}: drop its MEMORY.md line to fit {st.max_lines} lines "
                                  f"(memory/{d.id}.md stays)"))
    elif len(live) < room:
        candidates = sorted((d for mid, d in st.details.items()
                             if mid not in live and mid not in st.expired and _promotable(d)), key=_rank)
        for d in candidates[:room - len(live)]:
            why = "pinned" if d.pinned else f"importance {d.importance:g}"
            actions.append(Action("promote", "MEMORY.md", d.id, f"promote {d.id} ({why}) into a free MEMORY.md line"))
    return actions


def _safe_id(mid: str) -> bool:
    try:
        check_id(mid)
        return True
    except (UsageError, UnsafePathError):
        return False


# ---------------------------------------------------------------- apply

def apply(mem, actions: list[Action], now=None) -> list[str]:
    """Make the planned repairs under the root lock; each is checked again first.
    Returns one line per repair made (or skipped, with the reason)."""
    if not actions:
        return []
    when = _now(now)
    done: list[str] = []
    by_kind = defaultdict(list)
    for a in actions:
        by_kind[a.kind].append(a)
    with mem.lock():
        done += rebuild_conflicted_index(mem, by_kind["rebuild-index"])
        for a in by_kind["remove-temp"]:
            done.append(_remove_temp(mem.root, a.path))
        archived = []
        for a in by_kind["archive"]:
            msg, ok = _archive(mem, a.id, when)
            done.append(msg)
            if ok:
                archived.append(a.id)
        index_kinds = ("drop-line", "rerender", "demote", "promote")
        if archived or any(by_kind[k] for k in index_kinds):
            done += _rewrite_index(mem, by_kind, set(archived), when)
    return done


def _remove_temp(root: Path, rel: str) -> str:
    path = root / rel
    if not Path(rel).name.startswith(TMP_PREFIX) or ".." in Path(rel).parts:
        return f"skipped {rel}: not a memcli temp file"
    try:
        s = os.lstat(path)
    except FileNotFoundError:
        return f"skipped {rel}: already gone"
    age = time.time() - s.st_mtime
    if not stat.S_ISREG(s.st_mode) or age < TEMP_MIN_AGE:
        return f"skipped {rel}: it changed since the audit"
    try:
        os.unlink(path)
    except OSError as e:
        return f"skipped {rel}: {e.strerror or e}"
    return f"removed {rel} (left by a crashed writer, {_age(age)} old)"


def _archive(mem, mid: str, when: datetime) -> tuple[str, bool]:
    src = mem.detail_path(mid)
    dst = mem.detail_path(mid, archived=True)
    try:
        d = mem.load(src)
    except (FileError, UsageError, UnsafePathError) as e:
        return f"skipped archiving {mid}: {e.message}", False
    exp = _when(d.expires)
    if exp is None or exp.date() >= when.date():
        return f"skipped archiving {mid}: it no longer expires before today", False
    if dst.exists() or dst.is_symlink():
        return (f"skipped archiving {mid}: memory/archive/{mid}.md already exists (merge or rename one "
                "of them by hand)"), False
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
    except OSError as e:
        return f"skipped archiving {mid}: {e.strerror or e}", False
    return f"archived {mid} (expired {d.expires}): memory/{mid}.md -> memory/archive/{mid}.md", True


def _rewrite_index(mem, by_kind: dict, archived: set, when: datetime) -> list[str]:
    """Apply the index repairs to a fresh read of MEMORY.md; one atomic write."""
    from .store.fs import atomic_write

    done: list[str] = []
    if not mem.index_path.exists():
        return done  # nothing lists them; `memcli index rebuild` writes a new index
    try:
        doc = mem.read_index()
    except MemcliError as e:
        return [f"skipped the MEMORY.md repairs: {e.message}"]
    drops = {a.id for a in by_kind["drop-line"]}

    def load(mid: str) -> Detail | str:
        try:
            p = mem.detail_path(mid)
            return mem.load(p) if p.is_file() else "missing"
        except (FileError, UsageError, UnsafePathError):
            return "broken"

    lines: list = []
    live: dict[str, Detail] = {}
    old: dict[str, Entry] = {}
    for x in doc.lines:
        if not isinstance(x, Entry):
            lines.append(x)
            continue
        mid = x.id
        if mid is not None and _safe_id(mid):
            if mid in archived:
                continue
            if mid in live:
                if mid in drops:
                    done.append(f"dropped a second MEMORY.md line of {mid}")
                    continue
                lines.append(x)
                continue
            d = load(mid)
            if isinstance(d, Detail):
                live[mid] = d
                old[mid] = x
                lines.append(x)
                continue
            if d == "missing" and mid in drops:
                done.append(f"dropped the MEMORY.md line of {mid}: memory/{mid}.md does not exist")
                continue
        lines.append(x.raw if x.raw is not None else render_line(x))  # kept as written
    fixed = sum(1 for x in lines if not isinstance(x, Entry))
    room = mem.config["index.max_lines"] - 1 - fixed
    for a in by_kind["demote"]:
        if len(live) > room and a.id in live:
            del live[a.id]
            done.append(f"demoted {a.id}: dropped its MEMORY.md line (memory/{a.id}.md stays)")
    for a in by_kind["promote"]:
        if len(live) >= room or a.id in live:
            continue
        d = load(a.id)
        exp = _when(d.expires) if isinstance(d, Detail) else None
        if isinstance(d, Detail) and _promotable(d) and not (exp and exp.date() < when.date()):
            live[a.id] = d
            done.append(f"promoted {a.id} into MEMORY.md")
    for a in by_kind["rerender"]:
        if a.id in live and a.id in old and live[a.id].entry != old[a.id]:
            done.append(f"re-rendered the MEMORY.md line of {a.id} from memory/{a.id}.md")
    ranked = sorted(live.values(), key=Detail.rank_key)
    new = IndexDoc(lines, doc.newline, doc.final_newline).with_entries([d.entry for d in ranked])
    text = new.render()
    try:
        current = mem.index_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if text != current:
        atomic_write(mem.index_path, text)
    return done
