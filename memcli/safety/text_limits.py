"""Checks of text on its way into a memory: control characters and sizes.

A value memcli writes must be one it can read back: the limits here match the read-time limits
of the store (frontmatter 64 kB, a detail file 10 MB). Everything raises UsageError (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..errors import UsageError
from ..store.frontmatter import MAX_FRONTMATTER, span  # the reader's limit of a frontmatter block
from ..store.fs import MAX_READ as MAX_FILE  # the reader refuses a larger file

# C0 controls other than tab and newline, DEL and C1 controls: what a terminal acts on.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f]")
MAX_TITLE = 200
LIMITS = {"title": MAX_TITLE, "summary": 2_000, "source": 500}  # characters
ITEM_LIMITS = {"tags": (100, 64, "tag"), "aliases": (100, 200, "alias")}  # how many, characters each


def check_text_field(value: str | None, what: str, *, name: bool = False) -> str | None:
    """The value unchanged, or UsageError when it holds a control character.

    Free text (titles, summaries, bodies, turns) may hold tabs and line breaks (CRLF included);
    a name (an id, a tag, a scope key, an agent, a session or scope name: name=True) none at all."""
    if value is None:
        return None
    text = str(value)
    pattern = _CONTROL_IN_NAME if name else CONTROL
    for m in pattern.finditer(text):
        i = m.start()
        if not name and text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            continue
        raise UsageError(
            f"the {what} holds a control character (U+{ord(text[i]):04X}) at character {i + 1}; "
            "control characters are not allowed"
        )
    return value


def check_sizes(fields: dict) -> None:
    """Refuse a memory the reader would refuse: per-field limits, then the frontmatter as a whole.

    fields: title, summary, source (text); tags, aliases (lists); extra (a dict of other
    frontmatter keys); body (text). Missing keys are skipped."""
    for key, limit in LIMITS.items():
        value = fields.get(key)
        if value is not None and len(str(value)) > limit:
            raise UsageError(
                f"the {key} has {len(str(value))} characters; the limit is {limit}"
                + ("; put the rest in the body" if key in ("title", "summary") else "")
            )
    for key, (count, size, one) in ITEM_LIMITS.items():
        items = list(fields.get(key) or ())
        if len(items) > count:
            raise UsageError(f"{len(items)} {key}; the limit is {count}")
        for item in items:
            if len(str(item)) > size:
                raise UsageError(f"the {one} {str(item)[:40]!r}… has {len(str(item))} characters; the limit is {size}")
    extra = fields.get("extra") or {}
    estimate = sum(len(str(fields.get(k) or "")) for k in ("title", "summary", "source"))
    estimate += sum(len(str(x)) + 2 for k in ITEM_LIMITS for x in fields.get(k) or ())
    estimate += sum(len(str(k)) + len(repr(v)) for k, v in extra.items())
    if estimate > MAX_FRONTMATTER - 1_000:  # room for the fixed keys and quoting
        raise UsageError(
            f"the frontmatter would hold about {estimate // 1000} kB; the limit is "
            f"{MAX_FRONTMATTER // 1000} kB: move long text into the body"
        )
    body = fields.get("body")
    if body is not None and len(str(body).encode("utf-8")) > MAX_FILE - MAX_FRONTMATTER:
        raise UsageError(
            f"the body is larger than {(MAX_FILE - MAX_FRONTMATTER) // 1_000_000} MB; memcli keeps text memories"
        )


def check_rendered(text: str) -> None:
    """A detail file's full text as it is about to be written: refuse what the reader would refuse."""
    if len(text.encode("utf-8")) > MAX_FILE:
        raise UsageError(f"the detail file would pass {MAX_FILE // 1_000_000} MB; memcli keeps text memories")
    block = span(text)
    if block is not None:
        size = block[1] - block[0]
        if size > MAX_FRONTMATTER:
            raise UsageError(
                f"the frontmatter would hold {size // 1000} kB; the limit is "
                f"{MAX_FRONTMATTER // 1000} kB: move long text into the body"
            )


def controls(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, character) of the first control character of each line of a whole file; a
    carriage return that ends a line is not one."""
    line_no, line_start, last = 1, 0, 0
    for m in CONTROL.finditer(text):
        i = m.start()
        if text[i] == "\r" and text[i + 1 : i + 2] in ("\n", ""):
            continue
        line_no += text.count("\n", line_start, i)
        line_start = text.rfind("\n", 0, i) + 1
        if line_no != last:
            last = line_no
            yield line_no, i - line_start + 1, text[i]
