"""Agent hooks: `memcli hook claude-code` runs before every prompt Claude Code sends.

It reads the UserPromptSubmit JSON on stdin (prompt, session_id, cwd, hook_event_name,
transcript_path), prints the memory context on stdout when a memory reaches the gate of
injection or should-recall says the prompt asks for memory (Claude Code adds a hook's stdout to
the prompt's context) and records the turn
in the session named after session_id. A running `memcli serve` for the root answers it (see
``memcli.resident``); when this process answered instead, it starts one in the background for
the next prompts (MEMCLI_SERVE=off or manual: none), which exits after ten idle minutes. It never
blocks a prompt: Claude Code blocks on exit 2, so broken input exits 1 (shown to the person, the
prompt goes on) and a memory that cannot be read is a warning on stderr with exit 0. Imports stay
light: this runs on every turn.
"""

from __future__ import annotations

import json
import sys

BROKEN_INPUT = 1  # a non-blocking error for Claude Code; 2 would block the prompt
HOOK_EVENT = "UserPromptSubmit"


class HookResult:
    """What the hook prints, its exit code, and the root it used (None when it used none)."""

    def __init__(self, stdout: str = "", stderr: list | None = None, code: int = 0, root=None):
        self.stdout, self.stderr, self.code, self.root = stdout, stderr or [], code, root


def session_name(session_id) -> str:
    """The session an agent's turn belongs to, shared by the hook and the MCP tools (its session id,
    else CLAUDE_CODE_SESSION_ID, else MEMCLI_SESSION, else 'default'; see Memory's hook_session)."""
    from .frontend import hook_session

    return hook_session(session_id)


def _event(raw: bytes) -> dict | HookResult:
    """The UserPromptSubmit event with a prompt to answer, or what the hook says instead."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        why = (
            "not UTF-8"
            if isinstance(e, UnicodeDecodeError)
            else f"not JSON ({e.msg})"
            if hasattr(e, "msg")
            else "not JSON"
        )
        return HookResult(
            stderr=[f"memcli hook: stdin is {why}; expected Claude Code's UserPromptSubmit JSON"], code=BROKEN_INPUT
        )
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        return HookResult(
            stderr=['memcli hook: the input has no "prompt" text; expected Claude Code\'s UserPromptSubmit JSON'],
            code=BROKEN_INPUT,
        )
    event = data.get("hook_event_name")
    if event not in (None, HOOK_EVENT):
        return HookResult(stderr=[f"memcli hook: ignored {event!r} (wire it to {HOOK_EVENT})"])
    if not data["prompt"].strip():
        return HookResult()
    return data


def target(raw: bytes, root=None) -> str | None:
    """The real path of the root the hook would use for this event, None when it would use none
    (broken input, a blank prompt, no root it may use)."""
    import os

    from .core import Memory
    from .errors import MemcliError

    data = _event(raw)
    if isinstance(data, HookResult):
        return None
    try:
        mem, _ = Memory.for_hook(root, data.get("cwd"))
    except MemcliError:
        return None
    return None if mem is None else os.path.realpath(mem.root)


def claude_code(raw: bytes, root=None, budget: int | None = None, scope: str | None = None) -> HookResult:
    """What the hook prints for one UserPromptSubmit payload."""
    from .errors import MemcliError

    data = _event(raw)
    if isinstance(data, HookResult):
        return data
    prompt = data["prompt"]
    warnings: list = []
    try:
        from .core import Memory
        from .frontend import session_names

        # the root the user chose; a command named by the root's own files (a summarizer) never runs here
        mem, note = Memory.for_hook(root, data.get("cwd"))
        if note:
            warnings.append(note)
        if mem is None:
            return HookResult(stderr=warnings)
    except MemcliError as e:
        return HookResult(stderr=warnings + [f"memcli hook: {e.message}"])
    session = session_name(data.get("session_id"))
    scope = session_names(None, scope)[1]
    out = ""
    try:  # the block when the prompt asks for memory, or a memory reaches the gate of injection
        got = mem.context(prompt, budget=budget, session=session, scope=scope)
        if got["recalled"] or mem.should_recall(prompt)["kind"] != "none":
            out = got["text"]
    except MemcliError as e:
        warnings.append(f"memcli hook: no memory context: {e.message}")
    try:
        res = mem.session(session).add("user", prompt, via="hook")
        warnings += [f"memcli hook: {w}" for w in res.warnings]
    except MemcliError as e:
        warnings.append(f"memcli hook: the turn was not recorded: {e.message}")
    from .frontend import plugin_problems

    warnings += [f"memcli hook: {p}" for p in plugin_problems()]  # a broken plugin is said, never fatal
    return HookResult(out, warnings, root=mem.root)


USAGE = "usage: memcli hook claude-code [--budget N] [--json]"
AGENTS = ("claude-code",)


def run(
    argv: list,
    root=None,
    scope=None,
    stdin=None,
    stdout=None,
    stderr=None,
    as_json: bool = False,
    error: str | None = None,
) -> int:
    """`memcli hook AGENT [--budget N] [--root R] [--json]` (argv: what follows `hook`), read by the
    command line's one parser (``memcli.cli.argv``) and run without the framework; a wrong word
    exits 1, never 2. ``error``: what was wrong before `hook` (a global option that is not one).
    Returns the exit code. With --json the outcome is one envelope on stdout (the context block in
    data.context)."""
    from .cli.argv import parse

    stdin = stdin or sys.stdin.buffer
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    line = parse(["hook", *argv])
    given = line.values
    if error is None and line.words is None:
        words = argv[: argv.index("--")] if "--" in argv else argv
        given = {"json_": True} if "--json" in words else {}
        kind = argv[0] if argv and not argv[0].startswith("-") else None
        error = (
            f"unknown agent {kind!r}; known: {', '.join(AGENTS)}"
            if kind
            else f"no such option {argv[0]!r} before the agent"
            if argv
            else "which agent?"
        )
    return answer(
        error or line.error,
        given.get("root", root),
        given.get("budget"),
        scope,
        as_json=as_json or bool(given.get("json_")),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
    )


def answer(
    error: str | None,
    root,
    budget: int | None,
    scope: str | None,
    *,
    as_json: bool = False,
    stdin=None,
    stdout=None,
    stderr=None,
) -> int:
    """The hook's outcome for arguments already read: ``error`` (what was wrong with them) or the
    context block for the event on stdin; with ``as_json`` one envelope on stdout."""
    stdin = stdin or sys.stdin.buffer
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    if as_json:
        return _answer_json(error, root, budget, scope, stdin, stdout)
    if error is not None:
        stderr.write(f"memcli hook: {error.rstrip('.')} ({USAGE})\n")
        return BROKEN_INPUT
    res = claude_code(stdin.read(), root, budget, scope)
    code = emit(res, stdout, stderr)
    if res.root is not None:  # answered here: a server for the root answers the next prompts
        from .resident import start

        start(str(res.root))
    return code


def _answer_json(error, root, budget, scope, stdin, stdout) -> int:
    """The hook's outcome as one JSON envelope: data {"context": the block or ""}, the warnings,
    and for broken input or arguments an error (exit 1 still: Claude Code blocks on 2)."""
    import io

    from .render import envelope

    out, err = io.StringIO(), io.StringIO()
    code = answer(error, root, budget, scope, stdin=stdin, stdout=out, stderr=err)
    lines = [ln.removeprefix("memcli hook: ") for ln in err.getvalue().splitlines() if ln]
    failure = None
    if code:
        failure = {"code": "usage", "message": lines[0] if lines else "hook failed"}
        lines = lines[1:]
    stdout.write(envelope("hook", code == 0, {"context": out.getvalue()} if not code else None, lines, failure) + "\n")
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
