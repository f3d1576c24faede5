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


def example_files() -> list[tuple[str, str]]:
    folder = _templates() / "example"
    return sorted((p.name, p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".md"))
