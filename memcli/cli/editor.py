"""The user's editor, for `memcli edit` and `memcli inbox edit`: $VISUAL, else $EDITOR, else vi
when there is a terminal for it; its command line split as a shell would, the file appended."""

from __future__ import annotations

import os
import sys

from .. import render as r
from ..errors import UsageError


def chosen(command: str) -> str:
    """The editor to run; UsageError naming ``command`` when none is set and vi has no terminal."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor and not (r.is_tty(sys.stdin) and r.is_tty(sys.stdout)):
        raise UsageError(
            f"{command.split()[0]} opens $VISUAL or $EDITOR, and neither is set (vi needs a terminal): "
            f"set one, e.g. EDITOR=nano memcli {command}"
        )
    return editor or "vi"


def run(editor: str, path, cleanup) -> int:
    """Open path in the editor and wait: its exit code; when it cannot start, cleanup() and UsageError."""
    import shlex
    import subprocess

    try:
        return subprocess.call([*shlex.split(editor), str(path)])
    except OSError as e:
        cleanup()
        raise UsageError(f"cannot start the editor {editor!r}: {e.strerror or e}")
