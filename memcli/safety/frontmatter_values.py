"""The values a detail file's frontmatter must hold for memcli to read it as written.

A date that is not one, an importance that is not a number from 0 to 1, an unknown type, an id
that is not the file name, a blank title: heartbeat reports each (``frontmatter-invalid``) and
the write check refuses an edit that introduces one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dates import is_date
from ..model import TYPES, short
from ..store.frontmatter import data as frontmatter_data
from ..store.frontmatter import key_line


@dataclass(frozen=True)
class Invalid:
    key: str
    line: int | None
    message: str
    fix: str


def invalid_values(text: str, detail) -> list[Invalid]:
    """What in a readable detail file's frontmatter memcli would read as something else."""
    out = []

    def bad(key, message, fix):
        out.append(Invalid(key, key_line(text, key), message, fix))

    for key in ("created", "updated", "expires"):
        value = getattr(detail, key)
        if value is not None and not is_date(value):
            bad(
                key,
                f"{key}: {value!r} is not a date",
                f"write {key} as a date like 2027-01-31" + (" or null" if key == "expires" else ""),
            )
    raw = frontmatter_data(text)
    if "importance" in raw and raw["importance"] is not None:
        v = raw["importance"]
        try:
            n = float(v) if not isinstance(v, bool) else None
        except (TypeError, ValueError, OverflowError):
            n = None
        if n is None or not 0 <= n <= 1:
            bad(
                "importance",
                f"importance: {short(v)!r} is not a number from 0 to 1 (read as {detail.importance:g})",
                "write importance as a number from 0 to 1, such as 0.7",
            )
    if "type" in raw and raw["type"] is not None and str(raw["type"]).strip() not in TYPES:
        bad(
            "type",
            f"type: {short(raw['type'])!r} is not a memory type (one of {', '.join(TYPES)})",
            f"write one of {', '.join(TYPES)}",
        )
    if "id" in raw and raw["id"] is not None and str(raw["id"]).strip() != detail.id:
        bad(
            "id",
            f"id: {short(raw['id'])!r} is not the file name; memcli knows this memory as {detail.id!r}",
            f"write id: {detail.id}, or rename the file (and its index line) to change the id",
        )
    if "title" in raw and not str(raw["title"] or "").strip():
        bad("title", f"title is blank (shown as {detail.title!r})", "write a one-line title")
    return out
