"""Heartbeat checks: one interface, one registry.

A check is a class with stable finding codes that overrides what applies to it:

- ``file(f)``: findings for one file's text (``kinds`` says which files: detail, archive, episode,
  other, index). Time-independent, so the audit caches them per file fingerprint; the cache
  signature covers the source of every registered check's module.
- ``memo(m, line, now)``: findings for one readable memory at a given time (not cached).
- ``root(st)``: findings over the whole root, from the audit's ``State``.

A new check is one class here (or in any module) plus ``@register``. The audit and
``memcli watch`` run every registered check; nothing dispatches on file names by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import islice
from datetime import datetime, timezone

from ..dates import parse as when_
from ..errors import MemcliError
from ..model import Detail, Finding, short
from ..store import details as dfile
from ..store import indexrules, layout
from ..paths import STATE_DIR
from ..store.frontmatter import key_line
from ..store.fs import MAX_READ
from .base import TEMP_MIN_AGE, Memo, State, age, rank, read_file

SESSION_MAX_BYTES = 1_000_000
TEXT_KINDS = (layout.DETAIL, layout.ARCHIVED, layout.EPISODE, layout.PROPOSAL, layout.OTHER, "index")
MEMORY_KINDS = (layout.DETAIL, layout.ARCHIVED)


@dataclass
class FileFacts:
    """One file as the file checks see it: its text and, for a memory, its parsed Detail
    (None with the parse error when the frontmatter is broken)."""

    rel: str
    kind: str
    text: str
    detail: Detail | None = None
    error: object = None  # a FrontmatterError
    marker_size: int = 7  # the conflict-marker-size .gitattributes sets for the file


class Check:
    """The interface: override file, memo or root (see the module's doc)."""

    codes: tuple = ()
    kinds: tuple = ()  # the file kinds `file` reads
    sources: tuple = ()  # other modules whose code decides its file findings (for the cache)

    def file(self, f: FileFacts) -> list[Finding]:
        return []

    def memo(self, m: Memo, line: int | None, now: datetime) -> list[Finding]:
        return []

    def root(self, st: State) -> list[Finding]:
        return []


CHECKS: list[Check] = []
_plugins_asked = False


def register(cls):
    """Class decorator: add one instance of the check to the registry (a plugin's
    ``register_checks`` hook gets this function)."""
    CHECKS.append(cls())
    return cls


def _with_plugins() -> list[Check]:
    """The checks, the plugins' registered on first use (``memcli.plugins``)."""
    global _plugins_asked
    if not _plugins_asked:
        _plugins_asked = True
        from .. import plugins

        plugins.call("register_checks", register)
    return CHECKS


def overriding(name: str) -> list[Check]:
    """The registered checks that implement `name` (file, memo or root)."""
    return [c for c in _with_plugins() if getattr(type(c), name) is not getattr(Check, name)]


def facts(rel: str, kind: str, text: str, marker_size: int = 7) -> FileFacts:
    """Parse a memory's frontmatter once for every file check."""
    f = FileFacts(rel, kind, text, marker_size=marker_size)
    if kind in MEMORY_KINDS:
        try:
            f.detail = dfile.parse(text, rel.rsplit("/", 1)[-1][:-3], rel)
        except dfile.FrontmatterError as e:
            f.error = e
    return f


def file_findings(f: FileFacts) -> list[Finding]:
    return [x for c in overriding("file") if f.kind in c.kinds for x in c.file(f)]


def memo_findings(m: Memo, line: int | None, now: datetime, checks: list | None = None) -> list[Finding]:
    return [x for c in (checks if checks is not None else overriding("memo")) for x in c.memo(m, line, now)]


def root_findings(st: State) -> list[Finding]:
    return [x for c in overriding("root") for x in c.root(st)]


def check_text(rel: str, kind: str, text: str, now: datetime | None = None, marker_size: int = 7) -> list[Finding]:
    """Every check of one file, now: its file findings and, for a memory in memory/, its memo findings."""
    f = facts(rel, kind, text, marker_size)
    found = file_findings(f)
    if kind == layout.DETAIL and f.detail is not None and now is not None:
        found += memo_findings(Memo.of(f.detail), key_line(text, "expires"), now)
    return found


def modules() -> list[str]:
    """The module of every registered check and the modules it names in ``sources`` (what the
    heartbeat cache's signature covers)."""
    checks = _with_plugins()
    return sorted({type(c).__module__ for c in checks} | {m for c in checks for m in c.sources})


# ---------------------------------------------------------------- one file


@register
class Frontmatter(Check):
    codes = ("frontmatter-broken", "frontmatter-missing")
    kinds = MEMORY_KINDS

    def file(self, f):
        from ..store.frontmatter import split

        if f.error is None and split(f.text)[0] is None:
            mid = f.rel.rsplit("/", 1)[1][:-3]
            said = "no frontmatter: read with its first heading as the title, no summary, the defaults"
            fix = f"`memcli update {mid} --summary TEXT` adds it"
            return [Finding("frontmatter-missing", "warning", f.rel, 1, said, fix)]
        if f.error is None:
            return []
        p = f.error.problem
        return [Finding("frontmatter-broken", "error", f.rel, p.line, p.message, indexrules.FIX_BROKEN_FILE)]


@register
class ControlCharacters(Check):
    """Control characters (ESC, BEL, C1...) in a file edited by hand: raw in its text, or written
    as YAML escapes in a memory's title, summary, tags or aliases. A terminal acts on them."""

    codes = ("control-character",)
    kinds = TEXT_KINDS

    def file(self, f):
        from ..safety.text_limits import CONTROL, controls

        out = []
        for line, column, ch in islice(controls(f.text), 20):  # one a line, the first twenty lines
            said = f"control character U+{ord(ch):04X} at line {line}, column {column}: a terminal may act on it"
            fix = "delete it (memcli prints it escaped, other tools may not)"
            out.append(Finding("control-character", "warning", f.rel, line, said, fix))
        d = f.detail
        for key in ("title", "summary", "tags", "aliases") if d is not None else ():
            value = getattr(d, key)
            text = "\n".join(value) if isinstance(value, (tuple, list)) else (value or "")
            m = CONTROL.search(text)
            if m:
                said = f"the {key} holds the control character U+{ord(m.group()):04X}: a terminal may act on it"
                fix = f"delete it from the {key} (memcli prints it escaped, other tools may not)"
                out.append(Finding("control-character", "warning", f.rel, key_line(f.text, key) or 1, said, fix))
        return out


@register
class FrontmatterValues(Check):
    """Values memcli would read as something else: a date that is not one, an importance that is
    not a number from 0 to 1, an unknown type, an id that is not the file name, a blank title."""

    codes = ("frontmatter-invalid",)
    kinds = MEMORY_KINDS
    sources = ("memcli.safety.frontmatter_values",)

    def file(self, f):
        from ..safety.frontmatter_values import invalid_values

        if f.detail is None:
            return []
        return [
            Finding("frontmatter-invalid", "warning", f.rel, x.line, x.message, x.fix)
            for x in invalid_values(f.text, f.detail)
        ]


@register
class Secrets(Check):
    codes = ("secret",)
    kinds = TEXT_KINDS

    def file(self, f):
        from ..safety.scanner import find_secrets

        fix = "remove it from the file and rotate it (git history may still hold it)"
        return [
            Finding("secret", "error", f.rel, s.line, f"{s.kind} at line {s.line}, column {s.column}", fix)
            for s in find_secrets(f.text)
        ]


@register
class Injection(Check):
    codes = ("injection",)
    kinds = TEXT_KINDS

    def file(self, f):
        from ..safety.scanner import find_injection

        out = []
        for m in find_injection(f.text):
            fix = (
                "remove the invisible characters"
                if m.kind == "invisible unicode"
                else "rewrite it as a description, or delete it if you did not write it"
            )
            out.append(Finding("injection", "warning", f.rel, m.line, f"{m.kind}: {m.excerpt}", fix))
        return out


# ---------------------------------------------------------------- one memory, now


@register
class Expired(Check):
    codes = ("expired",)

    def memo(self, m, line, now):
        if not m.expires:
            return []
        exp = when_(m.expires)
        if exp is None or exp.date() >= now.date():
            return []
        fix = "`memcli heartbeat --fix` moves it to memory/archive/ (kept, listed by `list --all`), "
        fix += "or set a later --expires"
        return [Finding("expired", "warning", m.path, line, f"{m.id} expired on {m.expires}", fix)]


# ---------------------------------------------------------------- the whole root


@register
class Index(Check):
    codes = (
        "index-missing",
        "index-unreadable",
        "index-over-limit",
        "index-bad-link",
        "index-duplicate-line",
        "index-missing-file",
        "index-drift",
    )

    def root(self, st):
        if st.index_error is not None:
            return [
                Finding("index-unreadable", "error", "MEMORY.md", None, st.index_error, indexrules.FIX_UNREADABLE_INDEX)
            ]
        if st.index is None:
            return [indexrules.missing_index()]

        def lookup(mid: str):
            if mid in st.details:
                return st.details[mid].detail
            if mid in st.broken:
                return "broken"
            return "archived" if mid in st.archived else "missing"

        return [f for _, f in indexrules.check(st.index, lookup, st.max_lines)]


@register
class NotIndexed(Check):
    """A memory missing from MEMORY.md is worth a word when it would belong there: the index has
    a free line, or the memory ranks above a listed one. (With 40 lines and thousands of memories,
    the rest are simply not the most important; the report counts them.)"""

    codes = ("detail-not-indexed",)

    def root(self, st):
        if st.index is None:
            return []
        details = st.details
        listed = st.listed()
        room = st.index_plan().room > len(listed)  # the room a repair leaves: the plan every write follows
        worst = max(map(rank, listed.values())) if listed else None
        out = []
        for mid, d in details.items():
            if mid in listed or mid in st.expired:
                continue
            if room:
                why = "the index has a free line"
                fix = (
                    f"`memcli heartbeat --fix` promotes it ({'pinned' if d.pinned else f'importance {d.importance:g}'})"
                )
            elif worst is not None and (not d.pinned, -d.importance) <= worst[:2] and rank(d) < worst:
                why = f"it ranks above {worst[-1]}, which is listed"
                fix = "`memcli index rebuild` lists the highest-ranked memories; or leave it: recall still finds it"
            else:
                continue
            said = f"{mid} is not in MEMORY.md, though {why}"
            out.append(Finding("detail-not-indexed", "info", d.path, None, said, fix))
        return out


@register
class Stale(Check):
    codes = ("stale",)

    def root(self, st):
        root, details, expired, fps, now = st.root, st.details, st.expired, st.fingerprints, st.when
        from ..store.trace import access

        limit = root.config.seconds("heartbeat.stale_after")
        try:
            seen = access(root.path)
        except (RecursionError, AttributeError, TypeError):
            seen = {}  # a trace log damaged by hand: judge by the update times alone
        out = []
        for mid, d in details.items():
            if mid in expired or d.pinned:
                continue
            stamps = [when_(d.updated) or when_(d.created)]
            rec = seen.get(mid)
            last_recall = when_(rec.get("last")) if isinstance(rec, dict) else None
            if last_recall is not None:
                stamps.append(last_recall)
            known = [s for s in stamps if s is not None]
            last = max(known) if known else datetime.fromtimestamp(int(fps[d.path].split(":")[0]) / 1e9, timezone.utc)
            idle = (now - last).total_seconds()
            if idle > limit:
                recalled = f", last recalled {last_recall.date()}" if last_recall else ", never recalled"
                said = f"{mid}: not updated for {age(idle)}{recalled}"
                fix = f"review it: `memcli update {mid}` if it still holds, "
                fix += f"`memcli update {mid} --expires 0d` to retire it"
                out.append(Finding("stale", "info", d.path, None, said, fix))
        return out


@register
class Duplicates(Check):
    codes = ("duplicate",)

    def root(self, st):
        from .duplicates import find

        return find([st.details[k] for k in sorted(st.details)], st.hashes)


@register
class StateFiles(Check):
    """Scopes left open and oversized sessions in .memcli/."""

    codes = ("state-broken", "scope-open", "session-oversized")

    def root(self, st):
        now = st.when
        out = []
        cfg = st.root.config
        state = st.root.path / STATE_DIR
        for sub, what in ((layout.SCOPES, "scope"), (layout.SESSIONS, "session")):
            for label in layout.state_names(st.root.path, sub):
                path = state / sub / f"{label}.json"
                rel = layout.state_rel(sub, f"{label}.json")
                clear = f"`memcli --{what} {label} {what} {'end' if what == 'scope' else 'clear'}`"
                try:
                    size = path.stat().st_size
                    data = json.loads(read_file(path, rel)) if size <= MAX_READ else None
                    if data is not None and not isinstance(data, dict):
                        raise ValueError("not a JSON object")
                    if what == "session" and data is not None and not isinstance(data.get("turns", []), list):
                        raise ValueError("its turns are not a list")
                except (OSError, ValueError, MemcliError, RecursionError) as e:
                    why = "nested too deeply" if isinstance(e, RecursionError) else getattr(e, "message", None) or e
                    said = f"unreadable {what} file ({why})"
                    out.append(Finding("state-broken", "warning", rel, None, said, f"move it away, or {clear}"))
                    continue
                if what == "scope":
                    data = data or {}
                    started = when_(data.get("started"))
                    limit = cfg.seconds("heartbeat.scope_max_age")
                    if started is not None and (now - started).total_seconds() > limit:
                        task = short(data.get("task"))
                        said = f"scope {label!r}" + (f" (task {task!r})" if task else "")
                        said += f" has been open for {age((now - started).total_seconds())}"
                        fix = f"{clear} when the task is done (its state goes to the episode log)"
                        out.append(Finding("scope-open", "warning", rel, None, said, fix))
                else:
                    turns = len(data.get("turns") or []) if data is not None else None
                    limit = int(cfg["heartbeat.session_max_turns"])
                    if size > SESSION_MAX_BYTES or (turns is not None and turns > limit):
                        said = (
                            f"session {label!r} holds {turns if turns is not None else '?'} turns in {size // 1000} kB "
                            f"(limits: {limit} turns, {SESSION_MAX_BYTES // 1000} kB)"
                        )
                        fix = f"{clear} (its turns go to the episode log)"
                        out.append(Finding("session-oversized", "warning", rel, None, said, fix))
        return out


@register
class TempFiles(Check):
    codes = ("temp-file",)

    def root(self, st):
        out = []
        for rel, seconds in st.temps:
            left = seconds >= TEMP_MIN_AGE
            if left:
                said = f"a temp file left by a crashed writer ({age(seconds)} old)"
                fix = "`memcli heartbeat --fix` removes it"
            else:
                said = f"a temp file written {age(seconds)} ago, probably by a running writer"
                fix = "nothing: it is renamed or removed when the write ends"
            out.append(Finding("temp-file", "warning" if left else "info", rel, None, said, fix))
        return out


@register
class RenamePending(Check):
    """A rename that was killed before it finished (its journal is still in .memcli/): both ids
    may be listed and some references still name the old one. Running it again finishes it."""

    codes = ("rename-pending",)

    def root(self, st):
        from ..store.journal import pending

        j = pending(st.root.path)
        if j is None:
            return []
        said = f"the rename of {j['old']} to {j['new']} did not finish"
        fix = f"`memcli rename {j['old']} {j['new']}` finishes it"
        return [Finding("rename-pending", "warning", layout.state_rel(layout.RENAME_JOURNAL), None, said, fix)]
