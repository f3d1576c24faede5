"""The command that adds an extra to memcli as it was installed: pipx and `uv tool` keep memcli in
an environment of their own (marked by pipx_metadata.json and uv-receipt.toml there), where `pip
install` does not reach; anything else is pip's."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

DIST = "memcli-md"


def add_extra(extra: str) -> str:
    """`pip install 'memcli-md[mcp]'`, `pipx inject memcli-md 'mcp>=2'` or `uv tool install --with
    'mcp>=2' memcli-md`, as fits the environment memcli runs in."""
    env = Path(sys.prefix)
    if (env / "pipx_metadata.json").is_file():
        return f"pipx inject {DIST} {' '.join(map(shlex.quote, _needs(extra)))}"
    if (env / "uv-receipt.toml").is_file():
        try:  # a tool installed from a wheel or a checkout is named by its path there
            receipt = (env / "uv-receipt.toml").read_text(encoding="utf-8")
            found = re.search(rf'name = "{DIST}", (?:path|directory|editable) = "([^"]+)"', receipt)
        except (OSError, UnicodeDecodeError):
            found = None
        withs = " ".join(f"--with {shlex.quote(r)}" for r in _needs(extra))
        return f"uv tool install {withs} {shlex.quote(found.group(1)) if found else DIST}"
    return f"pip install '{DIST}[{extra}]'"


def _needs(extra: str) -> list:
    """The requirements of an extra, from the installed metadata (the extra's name when unknown)."""
    from importlib import metadata

    try:
        reqs = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        reqs = []
    found = [r.split(";")[0].strip() for r in reqs if re.search(rf"""extra\s*==\s*["']{extra}["']""", r)]
    return found or [f"{DIST}[{extra}]"]
