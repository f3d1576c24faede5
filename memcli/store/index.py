"""MEMORY.md <-> entries, parsed and rendered: every line that is not an entry survives byte for byte."""

from __future__ import annotations

import functools
import re

from ..model import Entry, Value
from .layout import MEMORY

_ENTRY = re.compile(r"^\s*[-*+]\s+\*\*(?P<title>(?:\\.|[^\\])+?)\*\*\s*[:：]\s?(?P<rest>.*)$")
_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")
_LINK = re.compile(r"^(?:详情\s*[:：]?\s*)?(?:→|->)\s*(?P<path>\S.*?)\s*$")
_TAGS = re.compile(r"^(?:#[^\s#|]+\s*)*$")
_UNESCAPE = re.compile(r"\\([\\|*])")


def _escape(text: str, star: bool) -> str:
    text = re.sub(r"\\(?=[\\|*]|$)", r"\\\\", text).replace("|", "\\|")
    return text.replace("*", "\\*") if star else text


def _unescape(text: str) -> str:
    return _UNESCAPE.sub(r"\1", text)


def _split_pipes(text: str) -> list[str]:
    parts, start = [], 0
    for m in _PIPE.finditer(text):
        end = m.end() - 1  # the pipe itself
        parts.append(text[start:end])
        start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts]


def normalise_link(path: str) -> str:
    """`x.md` (the seeds' form) means `memory/x.md`; './memory/x.md' means the same."""
    path = path.strip().strip("<>")
    if path.startswith("./"):
        path = path[2:]
    if "/" not in path and "\\" not in path:
        return f"{MEMORY}/{path}"
    return path


def parse_line(line: str) -> Entry | None:
    """An entry, or None when the line is not one (it is then kept as it is)."""
    text = line[:-1] if line.endswith("\r") else line
    m = _ENTRY.match(text)
    if not m:
        return None
    parts = _split_pipes(m.group("rest"))
    if len(parts) < 2:
        return None
    link = _LINK.match(parts[-1])
    if not link:
        return None
    tags: list[str] = []
    middle = parts[:-1]
    if len(middle) >= 2 and _TAGS.match(middle[-1]):
        tags = [t for t in middle[-1].split() if t]
        middle = middle[:-1]
    summary = " | ".join(_unescape(p) for p in middle)
    return Entry(_unescape(m.group("title")), summary, tuple(tags), normalise_link(link.group("path")), raw=text)


def render_line(entry: Entry) -> str:
    title = _escape(entry.title, star=True)
    summary = _escape(entry.summary, star=False)
    fields = [f"- **{title}**: {summary}".rstrip()]
    if entry.tags:
        fields.append(" ".join("#" + t for t in entry.tags))
    fields.append(f"→ {entry.path}")
    return " | ".join(fields)


@functools.lru_cache(maxsize=1)  # the same MEMORY.md again (a long-lived process)
def _parsed(text: str) -> tuple:
    """(lines, newline, final newline) of MEMORY.md's text."""
    text = text.lstrip("\ufeff")  # a BOM (or several, from editors that each added one)
    body = text[:-1] if text.endswith("\n") else text
    lines: list = []
    for ln in body.split("\n") if text else []:
        e = parse_line(ln)
        if e is not None and ln.endswith("\r"):
            e = Entry(e.title, e.summary, e.tags, e.path, raw=ln)  # the line end stays as it was
        lines.append(e if e is not None else ln)
    return tuple(lines), "\r\n" if "\r\n" in text else "\n", text.endswith("\n") or text == ""


class IndexDoc(Value):
    """MEMORY.md as a list of lines: a str is kept verbatim, an Entry is an entry slot."""

    FIELDS = ("lines", "newline", "final_newline")
    FROZEN = False
    __slots__ = FIELDS
    lines: list
    newline: str
    final_newline: bool

    def __init__(self, lines: list | None = None, newline: str = "\n", final_newline: bool = True):
        self.lines = [] if lines is None else lines
        self.newline, self.final_newline = newline, final_newline

    @classmethod
    def parse(cls, text: str) -> "IndexDoc":
        lines, newline, final = _parsed(text)
        return cls(list(lines), newline, final)

    @property
    def entries(self) -> list[Entry]:
        return [x for x in self.lines if isinstance(x, Entry)]

    def render(self) -> str:
        out = []
        last = len(self.lines) - 1
        for i, x in enumerate(self.lines):
            if isinstance(x, Entry):
                if x.raw is not None and parse_line(x.raw) == x:
                    out.append(x.raw)  # as written, with its own line end
                else:
                    crlf = self.newline == "\r\n" and (self.final_newline or i < last)
                    out.append(render_line(x) + ("\r" if crlf else ""))
            else:
                out.append(x)
        text = "\n".join(out)
        return text + "\n" if self.final_newline and out else text

    def line_count(self) -> int:
        return len(self.lines)

    def fixed_lines(self) -> int:
        """The lines that are not entries, as they will be once entries are put in: with no entry
        line yet, `with_entries` drops trailing blank lines and adds one blank separator."""
        other = [x for x in self.lines if not isinstance(x, Entry)]
        if len(other) < len(self.lines):
            return len(other)
        while other and other[-1].strip() == "":
            other.pop()
        return len(other) + 1 if other else 0

    def hand_written(self) -> list[int]:
        """Line numbers (from 1) of the lines that are neither entries nor blank."""
        return [n for n, x in enumerate(self.lines, 1) if not isinstance(x, Entry) and x.strip()]

    def with_entries(self, entries: list[Entry]) -> "IndexDoc":
        """Put entries, in the given order, into the entry slots; extra ones follow the last slot
        (or the end of the file), surplus slots disappear. Other lines do not move."""
        keep: dict[str | None, Entry] = {e.id: e for e in self.entries if e.id}
        ordered = []
        for e in entries:
            old = keep.get(e.id)
            ordered.append(Entry(e.title, e.summary, e.tags, e.path, raw=old.raw) if old is not None else e)
        lines: list = []
        it = iter(ordered)
        last_slot = None
        for x in self.lines:
            if isinstance(x, Entry):
                nxt = next(it, None)
                if nxt is not None:
                    lines.append(nxt)
                    last_slot = len(lines)
            else:
                lines.append(x)
        rest = list(it)
        if rest:
            if last_slot is None:
                while lines and lines[-1].strip() == "" and isinstance(lines[-1], str):
                    lines.pop()
                if lines:
                    lines.append("")
                last_slot = len(lines)
            lines[last_slot:last_slot] = rest
        return IndexDoc(lines, self.newline, self.final_newline)
