"""`memcli doctor`: every agent memcli is wired into, checked for real. Each hook command runs
with a sample event of its own, the MCP server starts and lists its tools, each in its own
process; the roots they name get heartbeat's audit. A command that is not this memcli is not
run: it is reported, with the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..model import Result

DOCTOR = "memcli-doctor"  # the sample events' session, dropped afterwards
RUN_TIMEOUT = 60  # seconds for one hook or the MCP server (a loaded machine starts it in seconds)
SAMPLE_REPLY = "memcli doctor: a sample reply"
EVENT_KEYS = {"Stop": "last_assistant_message", "AfterAgent": "prompt_response"}


def doctor(agents) -> Result:
    """{"agents": [{agent, scope, root, checks: [{what, ok, said, fix}], note}], "roots": [...], "ok"}."""
    rows: list = []
    roots: dict = {}
    for row in agents.listing():
        fix = f"`memcli agents add {row['agent']}" + (" --scope project`" if row["scope"] == "project" else "`")
        checks = [{"what": e, "ok": False, "said": "not wired", "fix": fix} for e in row["missing"]]
        for event, commands in (row["hooks"] or {}).get("events", {}).items():
            for command in commands:
                checks.append(_hook(event, command, agents.project, fix))
        if row["unreviewed"]:
            said = f"Codex has no review of memcli's hooks ({', '.join(row['unreviewed'])}) and will not run them"
            checks.append({"what": "hook review", "ok": False, "said": said, "fix": row["note"]})
        if row["mcp"]:
            checks.append(_mcp(row["mcp"]["command"], fix))
        else:
            checks.append({"what": "MCP server", "ok": False, "said": "not wired", "fix": fix})
        rows.append({**row, "checks": checks})
        roots.setdefault(row["root"], None)
    health = [_health(r) for r in roots if r]
    ok = all(c["ok"] for r in rows for c in r["checks"]) and all(h["ok"] for h in health)
    return Result({"agents": rows, "roots": health, "ok": ok})


def runnable(argv: list) -> list | None:
    """The command line to run for a wired memcli command (isolated), None when it is another program."""
    from .agents import program

    here = [os.path.realpath(p) for p in program()[:1]] + [os.path.realpath(sys.executable)]
    if not argv or os.path.realpath(argv[0]) not in here:
        return None
    if os.path.realpath(argv[0]) == here[-1]:  # python -m memcli ...
        return [sys.executable, "-I", *argv[1:]] if argv[1:3] == ["-m", "memcli"] else None
    return [sys.executable, "-I", argv[0], *argv[1:]]


def _run(argv: list, stdin: str, cwd) -> tuple[int, str, str]:
    try:
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=cwd)
    except subprocess.TimeoutExpired:
        return -1, "", f"no answer within {RUN_TIMEOUT} s"
    except OSError as e:
        return -1, "", str(e.strerror or e)
    return p.returncode, p.stdout, p.stderr


def _hook(event: str, command: str, project, fix: str) -> dict:
    import shlex

    from .agents import ours

    check = {"what": event, "ok": False, "said": "", "fix": ""}
    argv = runnable(shlex.split(command))
    if argv is None:
        return {**check, "said": f"runs {command.split()[0]}, not this memcli", "fix": fix}
    root = Path(ours(command) or ".")
    sample = {"hook_event_name": event, "session_id": DOCTOR, "cwd": str(project)}
    if event in ("UserPromptSubmit", "BeforeAgent"):
        sample["prompt"] = _question(root)
    sample.update({EVENT_KEYS[event]: SAMPLE_REPLY} if event in EVENT_KEYS else {})
    if event == "SessionEnd":  # a session with no turns: nothing goes to the episode log
        sample["session_id"] = DOCTOR + "-end"
    code, out, err = _run(argv, json.dumps(sample), project)
    problems = [ln for ln in err.splitlines() if ln.strip()]
    if code != 0:
        return {**check, "said": f"exit {code}: {problems[-1] if problems else 'no message'}", "fix": fix}
    said = _gets(event, out, root)
    if said is None:
        return {**check, "said": "answered with output the client cannot read: " + out[:200], "fix": fix}
    return {**check, "ok": True, "said": "; ".join([said, *problems])}


def _question(root) -> str:
    """A prompt about the first memory the index lists (a prompt about nothing gets nothing)."""
    from ..store.root import Root
    from ..tighten import load_config

    try:
        entries = Root(Path(root), load_config(Path(root), root_commands=False)).read_index().entries
    except Exception:  # noqa: BLE001 - the hook itself says what is wrong with the root
        entries = []
    return f"what did we note last time about {entries[0].title}?" if entries else "what did we decide last time?"


def _gets(event: str, out: str, root) -> str | None:
    """What the agent gets from a hook's output, None when the output is not what the client reads."""
    from ..store.session import drop, load_or_skip
    from .context import tokens

    if event in EVENT_KEYS or event == "SessionEnd":
        if out.strip():
            return None
        if event == "SessionEnd":
            return "ends the session into the episode log"
        turns = load_or_skip(root, DOCTOR)[0]["turns"]
        drop(root, DOCTOR)
        if not any(t["role"] == "assistant" and t["text"] == SAMPLE_REPLY for t in turns):
            return None
        return "records the assistant's reply in the session"
    text = out
    if out.lstrip().startswith("{"):
        try:
            text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return None
    if event == "SessionStart":
        return f"the index at session start ({tokens(text)} tokens)" if text else "nothing (the memory is empty)"
    return (
        f"memory context for a sample question ({tokens(text)} tokens)" if text else "no context for a sample question"
    )


def _mcp(command: list, fix: str) -> dict:
    check = {"what": "MCP server", "ok": False, "said": "", "fix": ""}
    argv = runnable(command)
    if argv is None:
        return {**check, "said": f"runs {command[0]}, not this memcli", "fix": fix}
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "memcli-doctor", "version": "1"},
    }
    talk = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    code, out, err = _run(argv, "".join(json.dumps(m) + "\n" for m in talk), None)
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("id") == 2 and isinstance(msg.get("result"), dict):
            names = [t.get("name") for t in msg["result"].get("tools", [])]
            return {**check, "ok": True, "said": f"{len(names)} tools: {', '.join(names)}"}
    problems = [ln for ln in err.splitlines() if ln.strip()]
    return {**check, "said": f"no tool list (exit {code}): {problems[-1] if problems else 'no message'}", "fix": fix}


def _health(root: str) -> dict:
    from ..errors import MemcliError
    from ..store.root import Root
    from ..tighten import load_config
    from .maintain import audit

    from ..store.layout import is_root

    try:
        if not is_root(Path(root)):
            raise MemcliError(f"{root} is not a memory root (`memcli init {root}`)")
        report = audit(Root(Path(root), load_config(Path(root), root_commands=False)), write_cache=False)
    except MemcliError as e:
        return {"root": root, "ok": False, "summary": None, "said": e.message}
    summary = report.to_dict()["summary"]
    return {"root": root, "ok": not summary["error"], "summary": summary, "said": ""}
