"""The few errors memcli raises, each with the exit code the CLI maps it to (docs/exit-codes.md):
2 bad usage, 3 error, 4 refused to protect data."""

from __future__ import annotations


class MemcliError(Exception):
    """A known failure: one line for the user, an exit code, a stable code name."""

    exit_code = 3
    code = "error"

    def __init__(self, message: str, *, hint: str | None = None, data: object = None):
        super().__init__(message)
        self.message, self.hint, self.data = message, hint, data

    def __str__(self) -> str:
        return self.message


class UsageError(MemcliError):
    """Bad arguments or input values (exit 2)."""

    exit_code = 2
    code = "usage"


class NotARootError(MemcliError):
    code = "not_a_root"


class NotFoundError(MemcliError):
    """An unknown id; `data` may hold close candidates."""

    code = "not_found"


class FileError(MemcliError):
    """A file that cannot be read, parsed or written."""

    code = "file"


class ConfigError(MemcliError):
    code = "config"


class LockTimeout(MemcliError):
    code = "lock_timeout"


class UnsafePathError(MemcliError):
    """An id or path that would read or write outside the root (exit 3)."""

    code = "unsafe_path"


class Refused(MemcliError):
    """Refused to protect data (exit 4)."""

    exit_code = 4
    code = "refused"


class SecretError(Refused):
    code = "secret"


class CollisionError(Refused):
    code = "collision"


class ExistsError(Refused):
    code = "exists"


class IndexFullError(Refused):
    code = "index_full"


class LimitError(Refused):
    """Past a cap on what may be added (MCP propose: per call, per hour, the inbox's size)."""

    code = "limit"


DIST = "memcli-md"


def add_extra(extra: str) -> str:
    """The command that adds an extra to memcli as installed: pip's, pipx's or uv tool's."""
    import re
    import shlex
    import sys
    from importlib import metadata
    from pathlib import Path

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
