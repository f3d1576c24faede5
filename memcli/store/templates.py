"""The templates a new root starts from (MEMORY.md, memcli.yaml, the example memories): package
data when installed, the checkout's templates/ when run from source."""

from __future__ import annotations

import re
from pathlib import Path

from ..dates import now_of, parse


def _templates():
    from importlib.resources import files

    try:
        return files("memcli.templates")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "templates"


def template_text(name: str) -> str:
    return (_templates() / name).read_text(encoding="utf-8")


def example_files(now: str | None = None) -> list[tuple[str, str]]:
    """The example memories as `init --example` writes them on the day ``now`` (default today)."""
    folder = _templates() / "example"
    texts = sorted((p.name, p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".md"))
    # their updates move on with the day they are made: a recall ranks them alike on any day
    when = {u: d for _, t in texts for u in re.findall(r"^updated: (\S+)$", t, re.M) if (d := parse(u)) is not None}
    ahead = now_of(now) - max(when.values())

    def moved(m) -> str:
        return "updated: " + (when[m.group(1)] + ahead).strftime("%Y-%m-%dT%H:%M:%SZ")

    if ahead.total_seconds() > 0:
        texts = [(n, re.sub(r"^updated: (\S+)$", moved, t, flags=re.M)) for n, t in texts]
    return [(n, _live(t, now)) for n, t in texts]


def _live(text: str, now: str | None) -> str:
    """An example whose ``expires`` has passed on the day ``now`` gets as long again from then."""
    m = re.search(r"^expires: (\S+)$", text, re.M)
    made = re.search(r"^created: (\S+)$", text, re.M)
    until, since = parse(m.group(1)) if m else None, parse(made.group(1)) if made else None
    today = now_of(now)
    if m is None or until is None or since is None or until.date() >= today.date():
        return text
    return text[: m.start(1)] + (today + (until - since)).date().isoformat() + text[m.end(1) :]
