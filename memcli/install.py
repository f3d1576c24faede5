"""The command that adds an extra to memcli as it was installed: pipx and `uv tool` keep it in an
environment of their own (marked by the file each leaves there), which `pip install` does not reach."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

DIST = "memcli-md"


def add_extra(extra: str) -> str:
    """pip install 'memcli-md[mcp]', pipx inject memcli-md 'mcp>=2', or uv tool install --with 'mcp>=2' SOURCE."""
    from importlib import metadata

    env, needs = Path(sys.prefix), []
    try:  # the extra's requirements, as installed
        needs = [r.split(";")[0].strip() for r in metadata.requires(DIST) or () if re.search(f"extra == .{extra}.", r)]
    except metadata.PackageNotFoundError:
        pass
    needs = [shlex.quote(r) for r in needs or [f"{DIST}[{extra}]"]]
    if (env / "pipx_metadata.json").is_file():
        return f"pipx inject {DIST} {' '.join(needs)}"
    if (env / "uv-receipt.toml").is_file():  # a tool installed from a wheel or a checkout is named by its path
        receipt = (env / "uv-receipt.toml").read_text(encoding="utf-8", errors="replace")
        found = re.search(rf'name = "{DIST}", (?:path|directory|editable) = "([^"]+)"', receipt)
        return f"uv tool install {' '.join('--with ' + r for r in needs)} {shlex.quote(found[1]) if found else DIST}"
    return f"pip install '{DIST}[{extra}]'"
