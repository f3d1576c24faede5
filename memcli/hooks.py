"""Agent hooks: `memcli hook claude-code` runs before every prompt Claude Code sends.

It reads the UserPromptSubmit JSON on stdin (prompt, session_id, cwd, hook_event_name,
transcript_path), asks should-recall about the prompt, prints the memory context on stdout when
memory is needed (Claude Code adds a hook's stdout to the prompt's context) and records the turn
in the session named after session_id. It never blocks a prompt: Claude Code blocks on exit 2,
so broken input exits 1 (shown to the person, the prompt goes on) and a memory that cannot be
read is a warning on stderr with exit 0. Imports stay light: this runs on every turn.
"""

from __future__ import annotations

import json
import os
import sys

BROKEN_INPUT = 1  # a non-blocking error for Claude Code; 2 would block the prompt
HOOK_EVENT = "UserPromptSubmit"


class HookResult:
    def __init__(self, stdout: str = "", stderr: list | None = None, code: int = 0):
        self.stdout, self.stderr, self.code = stdout, stderr or [], code


def session_name(session_id) -> str:
    """The session an agent's turn belongs to: its session id (the hook event's `session_id`, else
    Claude Code's CLAUDE_CODE_SESSION_ID, which it also gives the MCP server), made a valid state-file
    name; else MEMCLI_SESSION; else 'default'. The hook and the MCP tools share it, so an MCP recall
    sees the turns the hook recorded."""
    from .config import env
    from .store.fs import slugify, valid_id

    sid = str(session_id or "").strip() or (env("CLAUDE_CODE_SESSION_ID") or "").strip()
    if not sid:
        return env("MEMCLI_SESSION") or "default"
    return sid if valid_id(sid) else slugify(sid)


def _find_root(explicit, cwd) -> tuple:
    """(root, note). --root or MEMCLI_ROOT (an error when not a root); else the nearest root above
    the prompt's cwd that the user allowed (`memcli hook allow PATH`), None when there is none.
    A root found on the way that was not allowed is never used: the note says so, in one line
    (a MEMORY.md in a shared or cloned folder must not receive the user's prompts)."""
    from pathlib import Path

    from .config import env, find_root
    from .store.layout import is_root

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
            from .trust import hook_roots

            allowed = set(hook_roots())
        if os.path.realpath(d) in allowed:
            return d, note
        if note is None:
            from shlex import quote

            note = (f"memcli hook: ignored the memory root {d}: the hook uses only roots you allowed "
                    f"(`memcli hook allow {quote(str(d))}`)")
    return None, note


def claude_code(raw: bytes, root=None, budget: int | None = None, scope: str | None = None) -> HookResult:
    """What the hook prints for one UserPromptSubmit payload."""
    from .errors import MemcliError

    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        why = "not UTF-8" if isinstance(e, UnicodeDecodeError) else f"not JSON ({e.msg})" if hasattr(e, "msg") else "not JSON"
        return HookResult(stderr=[f"memcli hook: stdin is {why}; expected Claude Code's UserPromptSubmit JSON"],
                          code=BROKEN_INPUT)
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        return HookResult(stderr=["memcli hook: the input has no \"prompt\" text; expected Claude Code's "
                                  "UserPromptSubmit JSON"], code=BROKEN_INPUT)
    event = data.get("hook_event_name")
    if event not in (None, HOOK_EVENT):
        return HookResult(stderr=[f"memcli hook: ignored {event!r} (wire it to {HOOK_EVENT})"])
    prompt = data["prompt"]
    if not prompt.strip():
        return HookResult()
    warnings: list = []
    try:
        found, note = _find_root(root, data.get("cwd"))
        if note:
            warnings.append(note)
        if found is None:
            return HookResult(stderr=warnings)
        from .config import load_config
        from .core import Memory

        # a command named by the root's own files (a summarizer) never runs from the hook
        mem = Memory(found, config=load_config(found.resolve(), root_commands=False), door="hook")
    except MemcliError as e:
        return HookResult(stderr=warnings + [f"memcli hook: {e.message}"])
    session = session_name(data.get("session_id"))
    from .config import env

    scope = scope or env("MEMCLI_SCOPE") or "default"
    out = ""
    try:
        if mem.should_recall(prompt)["kind"] != "none":
            out = mem.context(prompt, budget=budget, session=session, scope=scope)["text"]
    except MemcliError as e:
        warnings.append(f"memcli hook: no memory context: {e.message}")
    try:
        res = mem.session(session).add("user", prompt, via="hook")
        if res.get("warning"):
            warnings.append(f"memcli hook: {res['warning']}")
    except MemcliError as e:
        warnings.append(f"memcli hook: the turn was not recorded: {e.message}")
    return HookResult(out, warnings)


USAGE = "usage: memcli hook claude-code [--budget N] [--json]"
OPTIONS = {"--budget": "budget", "-b": "budget"}  # the `hook claude-code` command's own options


def run(argv: list, root=None, scope=None, stdin=None, stdout=None, stderr=None, as_json: bool = False) -> int:
    """`memcli hook AGENT [--budget N] [--json]` (argv: what follows `hook`), run by the command line
    without its framework; a wrong name or option exits 1, never 2. Returns the exit code. With
    --json the outcome is one envelope on stdout (the context block in data.context)."""
    stdin = stdin or sys.stdin.buffer
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    args = [a for a in argv if a != "--json"]
    as_json = as_json or len(args) != len(argv)
    if as_json:
        return _run_json(args, root, scope, stdin, stdout)
    args = list(args)
    budget = None
    kind = None
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=")
        if (name == "--root" or name in OPTIONS) and (eq or i + 1 < len(args)):
            value = inline if eq else args[i + 1]
            i += 1 if eq else 2
            if name == "--root":
                root = value
                continue
            try:
                budget = int(value)
            except ValueError:
                stderr.write(f"memcli hook: --budget must be a number, got {value!r}\n")
                return BROKEN_INPUT
            continue
        if kind is None and not a.startswith("-"):
            kind = a
            i += 1
            continue
        stderr.write(f"memcli hook: unexpected argument {a!r}; {USAGE}\n")
        return BROKEN_INPUT
    if kind != "claude-code":
        what = f"unknown agent {kind!r}" if kind else "which agent?"
        stderr.write(f"memcli hook: {what}; known: claude-code ({USAGE})\n")
        return BROKEN_INPUT
    return emit(claude_code(stdin.read(), root, budget, scope), stdout, stderr)


def _run_json(args: list, root, scope, stdin, stdout) -> int:
    """run() with its outcome as one JSON envelope: data {"context": the block or ""}, the warnings,
    and for broken input or arguments an error (exit 1 still: Claude Code blocks on 2)."""
    import io

    from .render import envelope

    out, err = io.StringIO(), io.StringIO()
    code = run(args, root, scope, stdin, out, err)
    lines = [ln.removeprefix("memcli hook: ") for ln in err.getvalue().splitlines() if ln]
    error = None
    if code:
        error = {"code": "usage", "message": lines[0] if lines else "hook failed"}
        lines = lines[1:]
    stdout.write(envelope("hook", code == 0, {"context": out.getvalue()} if not code else None, lines, error) + "\n")
    stdout.flush()
    return code


def emit(res: HookResult, stdout=None, stderr=None) -> int:
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    if res.stdout:
        stdout.write(res.stdout)
        stdout.flush()
    for line in res.stderr:
        stderr.write(line + "\n")
    return res.code
