"""The few errors memcli raises, each with the exit code the CLI maps it to.

Exit codes (SPEC §7): 0 done, 1 nothing found / findings remain, 2 bad usage,
3 error (not a root, unknown id, unreadable file, lock timeout), 4 refused to
protect data (collision, existing id, secret, full index with on_full=refuse).
"""

from __future__ import annotations


class MemcliError(Exception):
    """A known failure: one line for the user, an exit code, a stable code name."""

    exit_code = 3
    code = "error"

    def __init__(self, message: str, *, hint: str | None = None, data: object = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.data = data

    def __str__(self) -> str:
        return self.message


class UsageError(MemcliError):
    """Bad arguments or input values (exit 2)."""

    exit_code = 2
    code = "usage"


class NotARootError(MemcliError):
    exit_code = 3
    code = "not_a_root"


class NotFoundError(MemcliError):
    """An unknown id; `data` may hold close candidates."""

    exit_code = 3
    code = "not_found"


class FileError(MemcliError):
    """A file that cannot be read, parsed or written."""

    exit_code = 3
    code = "file"


class ConfigError(MemcliError):
    exit_code = 3
    code = "config"


class LockTimeout(MemcliError):
    exit_code = 3
    code = "lock_timeout"


class UnsafePathError(MemcliError):
    """An id or path that would read or write outside the root (exit 3)."""

    exit_code = 3
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
