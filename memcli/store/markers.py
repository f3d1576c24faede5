"""Git conflict markers: a file that holds them is conflicted, a first-class state.

A conflict is a line starting with `<<<<<<< ` (or exactly `<<<<<<<`), then a line `=======`, then
a line starting with `>>>>>>> `, in that order (an optional `|||||||` line opens the base part
that git's diff3 style writes). Such a file is reported (index check, heartbeat), skipped by
recall, and never written over: `guard` refuses the write with the way out.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileError

OPEN, BASE, SEP, CLOSE = "<<<<<<<", "|||||||", "=======", ">>>>>>>"
_QUICK = re.compile(r"^<<<<<<<(?: |$)", re.M)
_ALLOW: contextvars.ContextVar[bool] = contextvars.ContextVar("memcli_overwrite_markers", default=False)


class ConflictError(FileError):
    """A write that would land on a file with unresolved conflict markers (exit 3)."""

    code = "conflict"


def _is(line: str, mark: str) -> bool:
    line = line.rstrip("\r")
    return line == mark or line.startswith(mark + " ")


@dataclass(frozen=True)
class Conflict:
    """One conflicted region: its first and last line numbers (1-based) and both sides' lines."""

    start: int
    end: int
    ours: tuple
    base: tuple | None
    theirs: tuple
    ours_label: str
    theirs_label: str


def parse(text: str) -> tuple[list, list]:
    """(pieces, conflicts): pieces alternate plain line lists and Conflict objects, in order.
    A `<<<<<<<` never followed by `=======` and `>>>>>>>` is plain text."""
    lines = text.split("\n")
    pieces: list = []
    conflicts: list = []
    plain: list = []
    i = 0
    while i < len(lines):
        if _is(lines[i], OPEN):
            found = _region(lines, i)
            if found is not None:
                c, i = found
                if plain:
                    pieces.append(plain)
                    plain = []
                pieces.append(c)
                conflicts.append(c)
                continue
        plain.append(lines[i])
        i += 1
    if plain:
        pieces.append(plain)
    return pieces, conflicts


def _region(lines: list, i: int):
    ours, base, theirs = [], None, []
    part = "ours"
    for j in range(i + 1, len(lines)):
        ln = lines[j]
        if _is(ln, OPEN):
            return None
        if part == "ours" and _is(ln, BASE):
            part, base = "base", []
        elif part in ("ours", "base") and ln.rstrip("\r") == SEP:
            part = "theirs"
        elif part == "theirs" and _is(ln, CLOSE):
            return (Conflict(i + 1, j + 1, tuple(ours), None if base is None else tuple(base), tuple(theirs),
                             lines[i][8:].strip(), ln[8:].strip()), j + 1)
        else:
            {"ours": ours, "base": base, "theirs": theirs}[part].append(ln)
    return None


def first_conflict(text: str) -> int | None:
    """The line of the first conflict, or None: cheap when the text holds no `<<<<<<<` line."""
    if not _QUICK.search(text):
        return None
    _, conflicts = parse(text)
    return conflicts[0].start if conflicts else None


def way_out(rel: str) -> str:
    """What a person runs to settle a conflicted file."""
    if rel == "MEMORY.md" or rel.endswith("/MEMORY.md"):
        return "`memcli heartbeat --fix` rebuilds MEMORY.md from both sides"
    m = re.fullmatch(r"memory/(?:archive/)?([^/]+)\.md", rel)
    if m and not rel.startswith("memory/episodes/"):
        return (f"`memcli resolve {m.group(1)} --ours|--theirs|--both` (the other side goes to ## History), "
                "or edit the file and delete the marker lines")
    return "edit the file: keep what both sides wrote and delete the marker lines"


def findings(rel: str, text: str) -> list:
    """The `conflict-markers` finding (code, file, line of the first conflict) for a file's text."""
    from ..model import Finding

    line = first_conflict(text)
    if line is None:
        return []
    n = len(parse(text)[1])
    return [Finding("conflict-markers", "error", rel, line,
                    f"unresolved git conflict markers ({n} conflict{'s' if n > 1 else ''}); memcli will not write it "
                    "and recall skips it", way_out(rel))]


def scan_root(root: Path) -> list[tuple[str, int]]:
    """(relative path, line) of every conflicted MEMORY.md, memory/*.md, memory/archive/*.md and episode."""
    out = []
    for rel in _md_files(root):
        line = file_conflict(root / rel)
        if line is not None:
            out.append((rel, line))
    return out


def file_conflict(path) -> int | None:
    """The line of the first conflict in a file, or None (also when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return first_conflict(data.decode("utf-8", "replace")) if b"<<<<<<<" in data else None


def _md_files(root: Path) -> list[str]:
    from . import layout

    return [layout.INDEX] + [rel for rel, _, _ in layout.memory_files(root)]


@contextlib.contextmanager
def overwriting():
    """Let the writes inside replace a conflicted file (resolving it is the point)."""
    token = _ALLOW.set(True)
    try:
        yield
    finally:
        _ALLOW.reset(token)


def guard(paths, root: Path | None = None) -> None:
    """Refuse (ConflictError, exit 3) to replace a Markdown file that holds conflict markers."""
    if _ALLOW.get():
        return
    for path in paths:
        path = Path(path)
        line = file_conflict(path) if path.suffix == ".md" else None
        if line is None:
            continue
        rel = _rel(path)
        raise ConflictError(f"{rel}:{line}: unresolved git conflict markers; nothing was written. "
                            f"Settle it first: {way_out(rel)}")


def _rel(path: Path) -> str:
    parts = path.parts
    if path.name == "MEMORY.md":
        return "MEMORY.md"
    if "memory" in parts:
        i = len(parts) - 1 - parts[::-1].index("memory")
        return "/".join(parts[i:])
    return path.name


def settle(text: str, side: str) -> tuple[str, list]:
    """The text with every conflict settled: side is ours, theirs or both (ours, then theirs, a line
    that both hold kept once). Returns (text, the discarded sides' texts, one per conflict)."""
    if side not in ("ours", "theirs", "both"):
        raise ValueError(side)
    pieces, _ = parse(text)
    out: list = []
    dropped: list = []
    for p in pieces:
        if not isinstance(p, Conflict):
            out += p
            continue
        if side == "ours":
            out += p.ours
            if list(p.theirs) != list(p.ours) and "".join(p.theirs).strip():
                dropped.append("\n".join(p.theirs))
        elif side == "theirs":
            out += p.theirs
            if list(p.theirs) != list(p.ours) and "".join(p.ours).strip():
                dropped.append("\n".join(p.ours))
        else:
            out += list(p.ours) + [ln for ln in p.theirs if ln not in p.ours]
    return "\n".join(out), dropped


def union(text: str) -> str:
    """Both sides of every conflict, ours first, lines that both hold kept once: MEMORY.md's way out."""
    return settle(text, "both")[0]
