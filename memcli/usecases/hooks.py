"""What an agent hook may touch: the root it acts on (only one the user chose) and the session
its events are recorded in."""

from __future__ import annotations

import os
from pathlib import Path


def session_name(session_id) -> str:
    """The session an agent's turn belongs to: its session id (the hook event's `session_id`, else
    Claude Code's CLAUDE_CODE_SESSION_ID, which it also gives the MCP server), made a valid state-file
    name; else MEMCLI_SESSION; else 'default'. The hook and the MCP tools share it, so an MCP recall
    sees the turns the hook recorded."""
    from ..config import env
    from ..paths import slugify, valid_id

    sid = str(session_id or "").strip() or (env("CLAUDE_CODE_SESSION_ID") or "").strip()
    if not sid:
        return env("MEMCLI_SESSION") or "default"
    return sid if valid_id(sid) else slugify(sid)


def hook_root(explicit, cwd) -> tuple:
    """(root, note). --root or MEMCLI_ROOT (an error when not a root); else the nearest root above
    the prompt's cwd that the user allowed (`memcli hook allow PATH`), None when there is none.
    A root found on the way that was not allowed is never used: the note says so, in one line
    (a MEMORY.md in a shared or cloned folder must not receive the user's prompts)."""
    from ..config import env, find_root
    from ..store.layout import is_root

    if explicit or env("MEMCLI_ROOT"):
        return find_root(explicit), None
    start = Path(cwd) if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else Path.cwd()
    here = start.resolve()
    allowed = None
    note = None
    for d in (here, *here.parents):
        if not is_root(d):
            continue
        if allowed is None:
            from ..trust import hook_roots

            allowed = set(hook_roots())
        if os.path.realpath(d) in allowed:
            return d, note
        if note is None:
            from shlex import quote

            note = (
                f"memcli hook: ignored the memory root {d}: the hook uses only roots you allowed "
                f"(`memcli hook allow {quote(str(d))}`)"
            )
    return None, note
