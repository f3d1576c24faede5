"""What an agent hook may touch: the root it acts on, only one the user chose (the session its
events are recorded in is ``config.agent_session``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def hook_root(explicit, cwd, env: Mapping[str, str] | None = None, here: str | None = None) -> tuple:
    """(root, note). --root or MEMCLI_ROOT (an error when not a root); else the nearest root above
    the prompt's cwd (else ``here``, the working folder) that the user allowed (`memcli hook allow
    PATH`), None when there is none. A root found on the way that was not allowed is never used:
    the note says so, in one line (a MEMORY.md in a shared or cloned folder must not receive the
    user's prompts)."""
    from ..config import find_root
    from ..roots import above

    env = os.environ if env is None else env
    if explicit or env.get("MEMCLI_ROOT"):
        return find_root(explicit, env, here), None
    start = cwd if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else here or os.getcwd()
    allowed = None
    note = None
    for d in above(start):
        if allowed is None:
            from ..trust import hook_roots

            allowed = set(hook_roots())
        if d in allowed:
            return Path(d), note
        if note is None:
            from shlex import quote

            note = (
                f"memcli hook: ignored the memory root {d}: the hook uses only roots you allowed "
                f"(`memcli hook allow {quote(d)}`)"
            )
    return None, note
