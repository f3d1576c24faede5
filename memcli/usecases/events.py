"""An agent's session events besides the prompt: SessionStart gives the index, scope and session
within the context budget; Stop (AfterAgent) records the reply as a turn; SessionEnd ends the session."""

from __future__ import annotations

import json
import os
import stat

from ..model import Result

REPLIES = ("last_assistant_message", "prompt_response")  # Claude Code and Codex; Gemini CLI
TRANSCRIPT_TAIL = 1 << 20  # bytes read from the end of a transcript: the last reply is there


def answer(root, event: str, data: dict, session: str, scope: str, budget: int | None, now=None) -> Result:
    """(stdout for the client, in "stdout"; what went wrong in the warnings) for one event."""
    from .session_scope import Session

    if event == "SessionStart":
        from .context import build

        block = build(root, None, budget, session, scope, now)
        if not block["sections"]:
            return Result({"stdout": ""}, block.warnings)
        out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": block["text"]}}
        return Result({"stdout": json.dumps(out, ensure_ascii=False)}, block.warnings)
    if event == "SessionEnd":
        return Result({"stdout": ""}, Session(root, session).clear(now, via="hook").warnings)
    text = reply(data)
    if not text:
        return Result({"stdout": ""})
    from ..store.session import MAX_TURN

    return Result({"stdout": ""}, Session(root, session).add("assistant", text[:MAX_TURN], now, via="hook").warnings)


def reply(data: dict) -> str:
    """The assistant's reply an event carries, else the last one in its transcript."""
    for key in REPLIES:
        if isinstance(data.get(key), str) and data[key].strip():
            return data[key].strip()
    path = data.get("transcript_path")
    return transcript_reply(path) if isinstance(path, str) else ""


def transcript_reply(path: str) -> str:
    """The text of the last assistant message of a JSONL transcript: a regular file only (no
    symlink, device or pipe), its last TRANSCRIPT_TAIL bytes; "" when there is none."""
    if not path.endswith(".jsonl"):
        return ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return ""
    with os.fdopen(fd, "rb") as f:
        f.seek(max(st.st_size - TRANSCRIPT_TAIL, 0))
        lines = f.read(TRANSCRIPT_TAIL).splitlines()
    for line in reversed(lines):
        try:
            said = _said(json.loads(line))
        except (ValueError, RecursionError):
            continue
        if said:
            return said
    return ""


def _said(entry) -> str:
    """An assistant message's text in the transcript line shapes of Claude Code, Codex and Gemini CLI."""
    if not isinstance(entry, dict):
        return ""
    for o in (entry, entry.get("message"), entry.get("payload")):
        if not isinstance(o, dict) or not (o.get("role") in ("assistant", "model") or o.get("type") == "gemini"):
            continue
        c = o.get("content")
        parts = [{"text": c}] if isinstance(c, str) else c if isinstance(c, list) else []
        text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)).strip()
        if text:
            return text
    return ""
