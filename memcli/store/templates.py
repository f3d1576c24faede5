"""The templates a new root starts from (MEMORY.md, memcli.yaml, the example memories): package
data when installed, the checkout's templates/ when run from source."""

from __future__ import annotations

from pathlib import Path


def _templates():
    """The templates: package data when installed; the checkout's templates/ when run from source."""
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
    return sorted(
        (p.name, _live(p.read_text(encoding="utf-8"), now)) for p in folder.iterdir() if p.name.endswith(".md")
    )


def _live(text: str, now: str | None) -> str:
    """An example whose ``expires`` has passed on the day ``now`` gets as long again from that day
    as it was given (``expires`` minus ``created``): the example is live whenever it is made."""
    import re

    from ..dates import now_of, parse

    m = re.search(r"^expires: (\S+)$", text, re.M)
    made = re.search(r"^created: (\S+)$", text, re.M)
    until, since = parse(m.group(1)) if m else None, parse(made.group(1)) if made else None
    today = now_of(now)
    if m is None or until is None or since is None or until.date() >= today.date():
        return text
    return text[: m.start(1)] + (today + (until - since)).date().isoformat() + text[m.end(1) :]
