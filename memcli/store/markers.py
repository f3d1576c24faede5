"""Git conflict markers: a file that holds them is conflicted, a first-class state: reported,
skipped by recall, never written over (`guard`). A conflict is a `<<<<<<<` line, then `=======`,
then `>>>>>>>` (an optional `|||||||` opens diff3's base part); the markers are 7 characters long
unless `.gitattributes` sets `conflict-marker-size` (`size_for`). Text on its way into a memory
holds no line git would read as a marker (`marker_lines`); captured text has them indented (`escape`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
from pathlib import Path
from typing import NamedTuple

from ..errors import FileError
from . import layout

OPEN, BASE, CLOSE = "<<<<<<<", "|||||||", ">>>>>>>"
SIZE = 7  # git's default conflict-marker-size
_ALLOW: contextvars.ContextVar[bool] = contextvars.ContextVar("memcli_overwrite_markers", default=False)


class ConflictError(FileError):
    """A write that would land on a file with unresolved conflict markers (exit 3)."""

    code = "conflict"


def _is(line: str, mark: str, size: int = SIZE) -> bool:
    line = line.rstrip("\r")
    mark = mark[0] * size
    return line == mark or line.startswith(mark + " ")


@functools.cache
def _quick(size: int) -> re.Pattern:
    return re.compile(rf"^<{{{size}}}(?: |\r?$)", re.M)


class Conflict(NamedTuple):
    """One conflicted region: its first line (1-based) and both sides' lines (a diff3 base is left out)."""

    start: int
    ours: tuple
    theirs: tuple


def parse(text: str, size: int = SIZE) -> list:
    """Plain line lists and Conflicts, in order: a `<<<<<<<` never followed by `=======` and
    `>>>>>>>` is plain text. size: the marker length."""
    lines = text.split("\n")
    pieces: list = [[]]
    i = 0
    while i < len(lines):
        found = _region(lines, i, size) if _is(lines[i], OPEN, size) else None
        if found is None:
            pieces[-1].append(lines[i])
            i += 1
        else:
            pieces += [found[0], []]
            i = found[1]
    return [p for p in pieces if p]


def _region(lines: list, i: int, size: int):
    """(the Conflict opened at line i, the line after it), or None when it is not one."""
    sides: dict = {"ours": [], "base": [], "theirs": []}
    part = "ours"
    for j in range(i + 1, len(lines)):
        ln = lines[j]
        if _is(ln, OPEN, size):
            return None
        if part == "ours" and _is(ln, BASE, size):
            part = "base"
        elif part in ("ours", "base") and ln.rstrip("\r") == "=" * size:
            part = "theirs"
        elif part == "theirs" and _is(ln, CLOSE, size):
            return Conflict(i + 1, tuple(sides["ours"]), tuple(sides["theirs"])), j + 1
        else:
            sides[part].append(ln)
    return None


def _conflicts(text: str, size: int) -> list:
    return [p for p in parse(text, size) if isinstance(p, Conflict)]


def first_conflict(text: str, size: int = SIZE) -> int | None:
    """The line of the first conflict, or None: cheap when the text holds no `<<<<<<<` line."""
    if not _quick(size).search(text):
        return None
    conflicts = _conflicts(text, size)
    return conflicts[0].start if conflicts else None


def way_out(rel: str) -> str:
    """What a person runs to settle a conflicted file."""
    if rel == layout.INDEX or rel.endswith("/" + layout.INDEX):
        return "`memcli heartbeat --fix` rebuilds MEMORY.md from both sides"
    memory_id = layout.id_of(rel)
    if memory_id is not None:
        return (
            f"`memcli resolve {memory_id} --ours|--theirs|--both` (the other side goes to ## History), "
            "or edit the file and delete the marker lines"
        )
    return "edit the file: keep what both sides wrote and delete the marker lines"


def findings(rel: str, text: str, size: int = SIZE) -> list:
    """The `conflict-markers` finding (code, file, line of the first conflict) for a file's text."""
    from ..model import Finding

    line = first_conflict(text, size)
    if line is None:
        return []
    n = len(_conflicts(text, size))
    said = f"unresolved git conflict markers ({n} conflict{'s' if n > 1 else ''}); memcli will not write it"
    return [Finding("conflict-markers", "error", rel, line, f"{said} and recall skips it", way_out(rel))]


def scan_root(root: Path) -> list[tuple[str, int]]:
    """(relative path, line) of every conflicted MEMORY.md, memory/*.md, memory/archive/*.md and episode."""
    rels = [layout.INDEX] + [rel for rel, _, _ in layout.memory_files(root)]
    return [(rel, line) for rel in rels if (line := file_conflict(root / rel)) is not None]


def file_conflict(path, size: int | None = None) -> int | None:
    """The line of the first conflict in a file, or None (also when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"<" * min(size or 3, SIZE) not in data:
        return None
    size = size_for(path) if size is None else size
    return first_conflict(data.decode("utf-8", "replace"), size)


def text_conflict(text: str, path) -> int | None:
    """`file_conflict` for text already read from path."""
    if "<<<" not in text:
        return None
    return first_conflict(text, size_for(path))


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
        raise ConflictError(
            f"{rel}:{line}: unresolved git conflict markers; nothing was written. Settle it first: {way_out(rel)}"
        )


def _rel(path: Path) -> str:
    parts = path.parts
    if path.name == layout.INDEX:
        return layout.INDEX
    if layout.MEMORY in parts:
        i = len(parts) - 1 - parts[::-1].index(layout.MEMORY)
        return "/".join(parts[i:])
    return path.name


def settle(text: str, side: str, size: int = SIZE) -> tuple[str, list]:
    """(the text with every conflict settled to side: ours, theirs or both (a line both hold kept
    once), the discarded sides' texts)."""
    if side not in ("ours", "theirs", "both"):
        raise ValueError(side)
    pieces = parse(text, size)
    out: list = []
    dropped: list = []
    for p in pieces:
        if not isinstance(p, Conflict):
            out += p
            continue
        if side == "both":
            out += list(p.ours) + [ln for ln in p.theirs if ln not in p.ours]
            continue
        kept, other = (p.ours, p.theirs) if side == "ours" else (p.theirs, p.ours)
        out += kept
        if list(other) != list(kept) and "".join(other).strip():
            dropped.append("\n".join(other))
    return "\n".join(out), dropped


def union(text: str, size: int = SIZE) -> str:
    """Both sides of every conflict, ours first, lines that both hold kept once: MEMORY.md's way out."""
    return settle(text, "both", size)[0]


# ---------------------------------------------------------------- lines that look like markers


@functools.cache
def _lookalike(sizes: tuple) -> re.Pattern:
    """A line git reads as a marker: exactly `size` of `<`, `=`, `>` or `|` at the start, then
    white space or the line's end (git's own test)."""
    runs = "|".join(rf"{re.escape(c)}{{{n}}}" for n in sizes for c in "<=>|")
    return re.compile(rf"^(?:{runs})(?![<=>|])(?=[ \t\r\f\v]|$)", re.M)


def _sizes(size: int) -> tuple:
    return tuple(sorted({SIZE, size}))


def marker_lines(text: str, size: int = SIZE) -> list[tuple[int, str]]:
    """(line number, line) of every line git would read as a conflict marker, at the default size
    and at `size` (code fences too: git does not know Markdown)."""
    if not any(c * min(SIZE, size) in text for c in "<=>|"):
        return []
    rx = _lookalike(_sizes(size))
    out = []
    for m in rx.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        out.append((line, text[m.start() : end if end != -1 else len(text)]))
    return out


def escape(text: str, size: int = SIZE) -> str:
    """The text with every line git would read as a marker indented by one space."""
    if not marker_lines(text, size):
        return text
    return _lookalike(_sizes(size)).sub(lambda m: " " + m.group(0), text)


# ---------------------------------------------------------------- conflict-marker-size


def size_for(path) -> int:
    """The conflict-marker-size git uses for the file at path: the repository's `.gitattributes`
    files from the top down to the file's folder, then `info/attributes`; the last line whose
    pattern matches wins. SIZE when none sets it (or outside a repository)."""
    path = Path(os.path.abspath(path))
    found = layout.work_tree(path.parent)
    if found is None:
        return SIZE  # not in a repository: git never merges it
    top, git_dir = found
    with contextlib.suppress(OSError):  # a linked worktree's info/ is the main repository's
        git_dir = git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
    files = [(d, d / ".gitattributes") for d in reversed(path.parents) if d == top or top in d.parents]
    size = SIZE
    for base, attributes in [*files, (top, git_dir / "info" / "attributes")]:
        for pattern, value in _rules(attributes):
            if pattern(path, base):
                size = value
    return size


def _rules(path: Path) -> list:
    """(matcher, size) for each line of an attributes file that sets conflict-marker-size."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    return _read_rules(str(path), layout.fingerprint(st)) if st.st_size < 1_000_000 else []


@functools.lru_cache(maxsize=256)
def _read_rules(path: str, _fingerprint: str) -> list:
    """``_rules`` of the file as it was when it had this fingerprint."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rules = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith(("#", "[attr]")):
            continue
        value = None
        for w in words[1:]:
            name, eq, v = w.partition("=")
            if name.lstrip("-!") != "conflict-marker-size":
                continue
            value = int(v) if eq and not name.startswith(("-", "!")) and v.isdigit() and 0 < int(v) < 100 else SIZE
        if value is not None:
            rules.append((_matcher(words[0]), value))
    return rules


def _matcher(pattern: str):
    """A gitattributes pattern as a test of (path, folder of the attributes file)."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    rx = re.compile(_glob(pattern) + r"\Z", re.S)

    def match(path: Path, base: Path) -> bool:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            return False
        return bool(rx.match(rel if anchored else rel.rsplit("/", 1)[-1]))

    return match


def _glob(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
                i += 1
            else:
                inner = pattern[i + 1 : j].replace("\\", "\\\\")
                out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)
