"""Agent hooks: `memcli hook claude-code` runs on an agent's events (Claude Code's, which Codex
shares, and Gemini CLI's), named by the event's hook_event_name.

For a prompt (UserPromptSubmit, Gemini's BeforeAgent) it reads the JSON on stdin (prompt,
session_id, cwd), prints the memory context on stdout when a memory reaches the gate of injection
or should-recall says the prompt asks for memory (Claude Code adds a hook's stdout to the
prompt's context) and records the turn in the session named after session_id; SessionStart,
Stop (AfterAgent) and SessionEnd are ``memcli.usecases.events``'. A running `memcli serve` for
the root answers it; when the hook's own process answered, it starts one for the next prompts
(``cli.typer_app.run``). It never blocks a prompt: Claude Code blocks on exit 2, so broken input
or arguments exit 1 (shown to the person, the prompt goes on) and a memory that cannot be read is
a warning on stderr with exit 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

BROKEN_INPUT = 1  # a non-blocking error for Claude Code; 2 would block the prompt
HOOK_EVENT = "UserPromptSubmit"
_GEMINI_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.S)
PROMPT_EVENTS = (HOOK_EVENT, "BeforeAgent")  # Claude Code and Codex; Gemini CLI
SESSION_EVENTS = ("SessionStart", "Stop", "AfterAgent", "SessionEnd")  # memcli.usecases.events
EVENTS = (*PROMPT_EVENTS, *SESSION_EVENTS)


class HookResult:
    """What the hook prints, its exit code, and the root it used (None when it used none)."""

    def __init__(self, stdout: str = "", stderr: list | None = None, code: int = 0, root=None):
        self.stdout, self.stderr, self.code, self.root = stdout, stderr or [], code, root


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
    event = data.get("hook_event_name") if isinstance(data, dict) else None
    if event in SESSION_EVENTS:
        return data
    if event not in (None, *PROMPT_EVENTS):
        return HookResult(stderr=[f"memcli hook: ignored {event!r} (wire it to {', '.join(EVENTS)})"])
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        return HookResult(
            stderr=['memcli hook: the input has no "prompt" text; expected Claude Code\'s UserPromptSubmit JSON'],
            code=BROKEN_INPUT,
        )
    if event == "BeforeAgent":  # Gemini CLI puts the SessionStart context before the first prompt
        data["prompt"] = _GEMINI_CONTEXT.sub("", data["prompt"])
    if not data["prompt"].strip():
        return HookResult()
    return data


def claude_code(
    raw: bytes,
    root=None,
    budget: int | None = None,
    scope: str | None = None,
    env=None,
    cwd: str | None = None,
    admit: Callable[[str], None] | None = None,
) -> HookResult:
    """What the hook prints for one UserPromptSubmit payload (env and cwd: the process's own when
    not given). ``admit(root)``: asked with the root the hook found before it acts (a server's
    check, ``cli.boundary.Call.admit``)."""
    from .config import agent_session, names
    from .errors import MemcliError

    data = _event(raw)
    if isinstance(data, HookResult):
        return data
    prompt = data.get("prompt", "")
    warnings: list = []
    try:
        from .core import Memory

        # the root the user chose; a command named by the root's own files (a summarizer) never runs here
        mem, note = Memory.for_hook(root, data.get("cwd"), env=env, here=cwd)
        if note:
            warnings.append(note)
        if mem is None:
            return HookResult(stderr=warnings)
    except MemcliError as e:
        return HookResult(stderr=warnings + [f"memcli hook: {e.message}"])
    if admit is not None:
        admit(str(mem.root))
    session = agent_session(data.get("session_id"), env)
    scope = names(None, scope, env)[1]
    event = data.get("hook_event_name") or HOOK_EVENT
    if event in SESSION_EVENTS:
        try:
            res = mem.hook_event(event, data, session=session, scope=scope, budget=budget)
            return HookResult(res["stdout"], warnings + [f"memcli hook: {w}" for w in res.warnings], root=mem.root)
        except MemcliError as e:
            return HookResult(stderr=warnings + [f"memcli hook: {event}: nothing recorded: {e.message}"], root=mem.root)
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
    from .plugins import problems

    warnings += [f"memcli hook: {p}" for p in problems()]  # a broken plugin is said, never fatal
    if out and event == "BeforeAgent":  # Gemini CLI reads a hook's context from its JSON only
        out = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": out}}, ensure_ascii=False)
    return HookResult(out, warnings, root=mem.root)


def answer(res: HookResult, out, as_json: bool = False) -> int:
    """Print the hook's outcome on ``out`` (a ``render.Output``): the context block on stdout and the
    warnings on stderr, or with ``as_json`` one envelope on stdout (the block in data.context; for
    broken input an error, exit 1 still: Claude Code blocks on 2)."""
    if not as_json:
        if res.stdout:
            out.stdout.write(res.stdout)
            out.stdout.flush()
        for line in res.stderr:
            out.stderr.write(line + "\n")
        return res.code
    from .render import envelope

    lines = [ln.removeprefix("memcli hook: ") for ln in res.stderr]
    failure = None
    if res.code:
        failure = {"code": "usage", "message": lines[0] if lines else "hook failed"}
        lines = lines[1:]
    data = {"context": res.stdout} if not res.code else None
    out.stdout.write(envelope("hook", res.code == 0, data, lines, failure) + "\n")
    out.stdout.flush()
    return res.code
