"""`memcli doctor`: every wired agent checked for real, each hook command run with a sample event
and the MCP server asked for its tools, in their own processes; heartbeat's summary of the roots
they name. A command that is not this memcli is reported, never run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from ..errors import MemcliError
from ..model import Result
from ..procs import module_command, python_command
from ..settings_guard import load_config
from ..store.layout import is_root
from ..store.root import Root
from ..store.session import drop, load_or_skip
from .agents import Agents, module_form, ours, program
from .context import tokens
from .maintain import audit

DOCTOR = "memcli-doctor"  # the sample events' session, dropped afterwards
RUN_TIMEOUT = 60  # seconds for one hook or the server (a loaded machine starts it in seconds)
REPLY = "memcli doctor: a sample reply"
REPLIES = {"Stop": "last_assistant_message", "AfterAgent": "prompt_response"}


def doctor(agents: Agents) -> Result:
    """{"agents": [{... agents.listing()'s row, "checks": [{what, ok, said, fix}]}], "roots": [...], "ok"}."""
    rows = []
    for row in agents.listing():
        fix = f"`memcli agents add {row['agent']}" + (" --scope project`" if row["scope"] == "project" else "`")
        checks = [_check(e, False, "not wired", fix) for e in row["missing"]]
        for event, commands in (row["hooks"] or {}).get("events", {}).items():
            checks += [_hook(event, c, agents.project, fix) for c in commands]
        if row["unreviewed"]:
            said = f"Codex has no review of memcli's hooks ({', '.join(row['unreviewed'])}) and runs none of them"
            checks.append(_check("hook review", False, said, row["note"]))
        checks.append(_mcp(row["mcp"]["command"], fix) if row["mcp"] else _check("MCP server", False, "not wired", fix))
        if row["root"] and is_root(Path(row["root"])):
            drop(Path(row["root"]), DOCTOR)
        rows.append({**row, "checks": checks})
    health = [_health(r) for r in dict.fromkeys(row["root"] for row in rows) if r]
    ok = all(c["ok"] for r in rows for c in r["checks"]) and all(h["ok"] for h in health)
    return Result({"agents": rows, "roots": health, "ok": ok})


def _check(what: str, ok: bool, said: str, fix: str = "") -> dict:
    return {"what": what, "ok": ok, "said": said, "fix": "" if ok else fix}


def runnable(argv: list) -> list | None:
    """The isolated command line of a wired memcli command, None when it runs another program or
    another memcli command than its hook or server (a project's files may come from a clone)."""
    if ours(argv) is None:
        return None
    exe, here = os.path.realpath(argv[0]), os.path.realpath(sys.executable)
    form = module_form(argv)
    if exe == here and form:
        return module_command("memcli", *argv[1 + form :])
    return python_command(*argv) if exe == os.path.realpath(program()[0]) != here else None


def _run(argv: list, stdin: str, cwd) -> tuple[int, str, str]:
    try:
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=cwd)
    except (subprocess.TimeoutExpired, OSError) as e:
        return -1, "", f"no answer within {RUN_TIMEOUT} s" if isinstance(e, subprocess.TimeoutExpired) else str(e)
    return p.returncode, p.stdout, p.stderr


def _last(err: str) -> str:
    return ([ln for ln in err.splitlines() if ln.strip()] or ["no message"])[-1]


def _hook(event: str, command: str, project, fix: str) -> dict:
    argv, root = runnable(shlex.split(command)), Path(ours(command) or ".")
    if argv is None:
        return _check(event, False, f"runs {shlex.split(command)[0]}, not this memcli", fix)
    if not is_root(root):
        return _check(event, False, f"{root} is not a memory root", f"`memcli init {root}`, or {fix}")
    sample = {"hook_event_name": event, "session_id": DOCTOR, "cwd": str(project), "source": "startup"}
    if event in ("UserPromptSubmit", "BeforeAgent"):
        sample["prompt"] = "what did we decide last time?"
    if event in REPLIES:
        sample[REPLIES[event]] = REPLY
    if event == "SessionEnd":  # a session with no turns: nothing reaches the episode log
        sample["session_id"] = DOCTOR + "-end"
    code, out, err = _run(argv, json.dumps(sample), project)
    if code:
        return _check(event, False, f"exit {code}: {_last(err)}", fix)
    text = out
    try:
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.startswith("{") else out
    except (ValueError, KeyError, TypeError):
        return _check(event, False, "answered with output the client cannot read: " + out[:200], fix)
    if event in REPLIES or event == "SessionEnd":
        recorded = event == "SessionEnd" or any(t["text"] == REPLY for t in load_or_skip(root, DOCTOR)[0]["turns"])
        said = "records the assistant's reply in the session" if event in REPLIES else "ends the session"
        return _check(event, recorded and not out, said if recorded and not out else "recorded nothing", fix)
    what = "the index at session start" if event == "SessionStart" else "memory context for a sample question"
    said = f"{what} ({tokens(text)} tokens)" if text else f"nothing: {what} is empty"
    return _check(event, True, said + (f"; {_last(err)}" if err.strip() else ""))


def _mcp(command: list, fix: str) -> dict:
    argv = runnable(command)
    if argv is None:
        return _check("MCP server", False, f"runs {shlex.join(command)}, not this memcli's server", fix)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": DOCTOR, "version": "1"}}
    talk = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    code, out, err = _run(argv, "".join(json.dumps(m) + "\n" for m in talk), None)
    for line in out.splitlines():
        try:
            tools = json.loads(line)["result"]["tools"] if '"id":2' in line.replace(" ", "") else None
        except (ValueError, KeyError, TypeError):
            continue
        if tools is not None:
            return _check("MCP server", True, f"{len(tools)} tools: {', '.join(t.get('name', '?') for t in tools)}")
    return _check("MCP server", False, f"no tool list (exit {code}): {_last(err)}", fix)


def _health(root: str) -> dict:
    try:
        if not is_root(Path(root)):
            raise MemcliError(f"{root} is not a memory root (`memcli init {root}`)")
        report = audit(Root(Path(root), load_config(Path(root), root_commands=False)), write_cache=False)
    except MemcliError as e:
        return {"root": root, "ok": False, "summary": None, "said": e.message}
    summary = report.to_dict()["summary"]
    return {"root": root, "ok": not summary["error"], "summary": summary, "said": ""}
