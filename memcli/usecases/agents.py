"""Wiring memcli into the agents people run: each client's MCP server entry and hooks, merged into
the client's own configuration files (`memcli agents add|list|remove`).

A change keeps every key the user wrote (JSON is read and written back whole; a TOML table is
edited line by line and the whole file compared before and after), leaves the file as it was
beside it (`<file>.memcli-backup`), and a second run with the same root changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileError, UsageError

HOOK_WORDS = ("hook", "claude-code")  # the one hook command: the event's hook_event_name says which event
BACKUP = ".memcli-backup"


@dataclass(frozen=True)
class Client:
    name: str
    title: str
    home: tuple  # (environment variable naming its folder, the folder under ~ otherwise)
    mcp: tuple  # (user file, project file) under home / the project; .toml or .json
    hooks: tuple  # (user file, project file)
    events: tuple
    timeout: int  # a hook's timeout in the client's unit
    server: tuple  # extra keys of the MCP server entry, as (key, value) pairs
    note: str  # what the user still has to do, if anything


CLIENTS = {
    c.name: c
    for c in (
        Client(
            "claude-code",
            "Claude Code",
            ("CLAUDE_CONFIG_DIR", ""),
            (".claude.json", ".mcp.json"),
            (".claude/settings.json", ".claude/settings.json"),
            ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"),
            10,
            (("type", "stdio"),),
            "",
        ),
        Client(
            "codex",
            "Codex CLI",
            ("CODEX_HOME", ".codex"),
            ("config.toml", ".codex/config.toml"),
            ("hooks.json", ".codex/hooks.json"),
            ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"),
            10,
            (("required", True), ("startup_timeout_sec", 60)),
            "Codex runs a hook only once you review it: start `codex` and trust memcli's hooks when it says "
            "a hook needs review",
        ),
        Client(
            "gemini",
            "Gemini CLI",
            ("GEMINI_CLI_HOME", ".gemini"),
            ("settings.json", ".gemini/settings.json"),
            ("settings.json", ".gemini/settings.json"),
            ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"),
            10000,
            (("timeout", 30000),),
            "Gemini CLI runs hooks and MCP servers only in a folder you trust (it asks when you start `gemini`)",
        ),
    )
}


def program() -> list[str]:
    """This memcli as a command line: the `memcli` script beside this interpreter, else python -m memcli."""
    script = os.path.join(os.path.dirname(sys.executable), "memcli")
    return [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "memcli"]


def ours(command) -> str | None:
    """The root a hook or server command line of memcli names ("" for none), None when it is not memcli's."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    except (ValueError, TypeError):
        return None
    if not argv or os.path.basename(argv[0]) != "memcli" and argv[1:3] != ["-m", "memcli"]:
        return None
    if not any(argv[i : i + 2] == list(HOOK_WORDS) for i in range(len(argv))) and argv[-1] != "mcp":
        return None
    return argv[argv.index("--root") + 1] if "--root" in argv[:-1] else ""


class Agents:
    """The agents' configuration files, for the user (`scope="user"`) or a project folder."""

    def __init__(self, project: str | os.PathLike | None = None, home: str | os.PathLike | None = None):
        self.project = Path(project or os.getcwd())
        self.home = Path(home or os.path.expanduser("~"))

    def files(self, c: Client, scope: str) -> tuple[Path, Path]:
        if scope == "project":
            return self.project / c.mcp[1], self.project / c.hooks[1]
        from ..config import env

        given = env(c.home[0])  # GEMINI_CLI_HOME names the home that holds .gemini
        base = Path(given) / (".gemini" if c.name == "gemini" else "") if given else self.home / c.home[1]
        hooks = "settings.json" if given and c.name == "claude-code" else c.hooks[0]
        return base / c.mcp[0], base / hooks

    @staticmethod
    def client(name: str) -> Client:
        if name not in CLIENTS:
            raise UsageError(f"unknown agent {name!r}; memcli wires {', '.join(CLIENTS)} (`memcli agents add NAME`)")
        return CLIENTS[name]

    def add(self, name: str, root: str | os.PathLike, scope: str = "user") -> dict:
        c, root = self.client(name), os.path.realpath(root)
        prog = program()
        hook = shlex.join([*prog, "--root", root, *HOOK_WORDS])
        server = {"command": prog[0], "args": [*prog[1:], "--root", root, "mcp"], **dict(c.server)}
        mcp_file, hooks_file = self.files(c, _scope(scope))
        backups = [p for p in (mcp_file, hooks_file) if p.exists()]
        changed = [_edit(mcp_file, lambda doc: _set_server(doc, server))]
        entry = {"type": "command", "command": hook, "timeout": c.timeout}
        changed.append(_edit(hooks_file, lambda doc: _set_hooks(doc, c.events, entry)))
        from ..trust import allow_hook_root

        allow_hook_root(root)
        return {
            "agent": name,
            "scope": scope,
            "root": root,
            "mcp": {"file": str(mcp_file), "server": server},
            "hooks": {"file": str(hooks_file), "events": list(c.events), "command": hook},
            "changed": [str(p) for p in dict.fromkeys(changed) if p],
            "backups": [str(p) + BACKUP for p in dict.fromkeys(changed) if p in backups],
            "note": c.note,
        }

    def remove(self, name: str, scope: str = "user") -> dict:
        c = self.client(name)
        mcp_file, hooks_file = self.files(c, _scope(scope))
        changed = [_edit(mcp_file, _drop_server, create=False), _edit(hooks_file, _drop_hooks, create=False)]
        files = [str(p) for p in dict.fromkeys(changed) if p]
        return {"agent": name, "scope": scope, "changed": files, "backups": [f + BACKUP for f in files]}

    @staticmethod
    def snippet(root: str | os.PathLike) -> dict:
        """What any other MCP client needs: the stdio command and the usual JSON block."""
        prog = program()
        args = [*prog[1:], "--root", os.path.realpath(root), "mcp"]
        server = {"mcpServers": {"memcli": {"command": prog[0], "args": args}}}
        return {"command": shlex.join([prog[0], *args]), "json": json.dumps(server, ensure_ascii=False)}

    def listing(self) -> list[dict]:
        """Every agent and scope where memcli is wired: its files, the root and the events hooked."""
        out = []
        for c in CLIENTS.values():
            for scope in ("user", "project"):
                mcp_file, hooks_file = self.files(c, scope)
                server, found = _server(_load(mcp_file)), _hooks(_load(hooks_file))
                order = {e: i for i, e in enumerate(c.events)}
                hooks = dict(sorted(found.items(), key=lambda kv: order.get(kv[0], len(order))))
                if server or hooks:
                    command = [server["command"], *server.get("args", [])] if server else None
                    out.append(
                        {
                            "agent": c.name,
                            "title": c.title,
                            "scope": scope,
                            "mcp": {"file": str(mcp_file), "command": command} if server else None,
                            "hooks": {"file": str(hooks_file), "events": hooks} if hooks else None,
                            "root": ours(command or next(iter(hooks.values()))[0]),
                            "missing": [e for e in c.events if e not in hooks],
                            "note": c.note,
                            "unreviewed": unreviewed(hooks_file, self.files(c, "user")[0]) if c.name == "codex" else [],
                        }
                    )
        return out


def _scope(scope: str) -> str:
    if scope not in ("user", "project"):
        raise UsageError(f"--scope must be user or project, got {scope!r}")
    return scope


# ---------------------------------------------------------------- one configuration file


def _load(path: Path):
    """A configuration file's content: a dict for JSON, the text for TOML; None when it is missing."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise FileError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    if path.suffix == ".toml":
        _toml(text, path)
        return text
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise FileError(f"{path} is not JSON ({e}); fix it, then run this again") from None
    if not isinstance(doc, dict):
        raise FileError(f"{path} does not hold a JSON object; fix it, then run this again")
    return doc


def _edit(path: Path, change, create: bool = True) -> Path | None:
    """Apply change to the file's content and write it back when it differs (the old file kept
    beside it); the path written, else None."""
    doc = _load(path)
    if doc is None and not create:
        return None
    before = doc if path.suffix == ".toml" else json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if path.suffix == ".toml":
        after = change(doc or "")
        _same_besides_memcli(doc or "", after, path)
    else:
        doc = doc if doc is not None else {}
        change(doc)
        after = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if doc is not None and after == before:
        return None
    from ..store.fs import atomic_write

    real = Path(os.path.realpath(path))
    if real.exists():
        import shutil

        shutil.copy2(real, real.with_name(real.name + BACKUP))
    atomic_write(real, after)
    return path


# ---------------------------------------------------------------- JSON: servers and hooks


def _table(doc: dict, key: str, path: str) -> dict:
    value = doc.setdefault(key, {})
    if not isinstance(value, dict):
        raise FileError(f'"{key}" in {path} is not an object; fix it, then run this again')
    return value


def _set_server(doc, server: dict):
    if isinstance(doc, str):
        return _toml_set(doc, server)
    servers = _table(doc, "mcpServers", "the file")
    old = servers.get("memcli")
    servers["memcli"] = {**server, **(old if isinstance(old, dict) else {}), **_own(server)}


def _own(server: dict) -> dict:
    """What memcli sets in its server entry whatever was there: the command line."""
    return {k: server[k] for k in ("command", "args")}


def _drop_server(doc):
    if isinstance(doc, str):
        return _toml_drop(doc)
    if isinstance(doc.get("mcpServers"), dict):
        doc["mcpServers"].pop("memcli", None)


def _server(doc) -> dict | None:
    servers = _toml(doc, None).get("mcp_servers") if isinstance(doc, str) else (doc or {}).get("mcpServers")
    s = servers.get("memcli") if isinstance(servers, dict) else None
    return s if isinstance(s, dict) and isinstance(s.get("command"), str) else None


def _groups(doc: dict, event: str) -> list:
    groups = doc.get("hooks", {}).get(event) if isinstance(doc.get("hooks"), dict) else None
    return (
        [g for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)]
        if isinstance(groups, list)
        else []
    )


def _set_hooks(doc: dict, events: tuple, entry: dict) -> None:
    hooks = _table(doc, "hooks", "the file")
    for event in events:
        placed = False
        for g in _groups(doc, event):
            keep = []
            for h in g["hooks"]:
                if isinstance(h, dict) and ours(h.get("command")) is not None:
                    if placed:
                        continue  # a second memcli hook for the event would record each turn twice
                    h, placed = {**h, **entry}, True
                keep.append(h)
            g["hooks"] = keep
        if not placed:
            hooks.setdefault(event, []).append({"hooks": [entry]})


def _drop_hooks(doc: dict) -> None:
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in list(hooks.items()):
        kept = []
        for g in groups if isinstance(groups, list) else ():
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and g["hooks"]:
                g["hooks"] = [h for h in g["hooks"] if not (isinstance(h, dict) and ours(h.get("command")) is not None)]
                if not g["hooks"]:
                    continue  # a group that held only memcli's hook
            kept.append(g)
        if isinstance(groups, list) and groups and not kept:
            del hooks[event]
        elif isinstance(groups, list):
            hooks[event] = kept


def _hooks(doc) -> dict:
    """{event: [memcli's hook commands]} of a JSON configuration."""
    if not isinstance(doc, dict):
        return {}
    found: dict = {}
    for event in doc.get("hooks", {}) if isinstance(doc.get("hooks"), dict) else ():
        for g in _groups(doc, event):
            for h in g["hooks"]:
                if isinstance(h, dict) and ours(h.get("command")) is not None:
                    found.setdefault(event, []).append(h["command"])
    return found


def unreviewed(hooks_file: Path, config: Path) -> list[str]:
    """The events of memcli's hooks in a Codex hooks.json that Codex has no review of (no trusted_hash
    under [hooks.state."FILE:EVENT:GROUP:HOOK"] in its config.toml)."""
    hooks, text = (_load(hooks_file) or {}).get("hooks"), _load(config) or ""
    state = (_toml(text, config).get("hooks") or {}).get("state") or {}
    out = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            for h, hook in enumerate(group.get("hooks") or () if isinstance(group, dict) else ()):
                key = f"{os.path.realpath(hooks_file)}:{snake}:{g}:{h}"
                if isinstance(hook, dict) and ours(hook.get("command")) is not None and key not in state:
                    out.append(event)
    return out


# ---------------------------------------------------------------- TOML: the [mcp_servers.memcli] table

_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_HEADER = re.compile(rf"""^\s*\[\s*mcp_servers\s*\.\s*(?:memcli|"memcli")\s*((?:\.\s*{_PART}\s*)*)\]\s*(#.*)?$""")
_ANY_HEADER = re.compile(rf"^\s*\[\[?\s*{_PART}(?:\s*\.\s*{_PART})*\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r'^\s*("?)([A-Za-z0-9_-]+)\1\s*=')


def _toml(text: str, path: Path | None) -> dict:
    if sys.version_info >= (3, 11):  # Python 3.10 has no tomllib: the file is edited without the check
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise FileError(f"{path or 'the file'} is not TOML ({e}); fix it, then run this again") from None
    return {}


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v) if isinstance(v, int) else json.dumps(v)


def _spans(lines: list) -> list[tuple[int, int, str | None]]:
    """(start, end, which) of each table, its header line up to the next header; which: None for
    another's, "" for [mcp_servers.memcli], ".env" for [mcp_servers.memcli.env] and so on."""
    heads = [i for i, ln in enumerate(lines) if _ANY_HEADER.match(ln)]
    mine = [_HEADER.match(lines[i]) for i in heads]
    return [(s, e, m and m.group(1)) for s, e, m in zip(heads, heads[1:] + [len(lines)], mine)]


def _toml_set(text: str, server: dict) -> str:
    lines = text.splitlines()
    table = next(((s, e) for s, e, which in _spans(lines) if which == ""), None)
    new = [f"{k} = {_value(v)}" for k, v in server.items()]
    if table is None:
        return "\n".join([*lines, *([""] if lines and lines[-1].strip() else []), "[mcp_servers.memcli]", *new]) + "\n"
    s, e = table
    body, skip, done = [], 0, set()
    for ln in lines[s + 1 : e]:
        if skip:  # the rest of a value we replace (an array over several lines)
            skip += ln.count("[") - ln.count("]")
            continue
        m = _KEY.match(ln)
        if m and m.group(2) in server and m.group(2) not in _own(server):
            done.add(m.group(2))  # a setting the user gave (a timeout) stays theirs
        elif m and m.group(2) in server:
            if m.group(2) not in done:
                body.append(f"{m.group(2)} = {_value(server[m.group(2)])}")
                done.add(m.group(2))
            rest = ln.split("=", 1)[1]
            skip = max(rest.count("[") - rest.count("]"), 0)
            continue
        body.append(ln)
    while body and not body[-1].strip():
        body.pop()
    body += [f"{k} = {_value(v)}" for k, v in server.items() if k not in done]
    tail = lines[e:]
    return "\n".join([*lines[: s + 1], *body, *([""] if tail else []), *tail]) + "\n"


def _toml_drop(text: str) -> str:
    lines = text.splitlines()
    cut = {i for s, e, which in _spans(lines) if which is not None for i in range(s, e)}
    kept = [ln for i, ln in enumerate(lines) if i not in cut]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


def _same_besides_memcli(before: str, after: str, path: Path) -> None:
    """The edit changed nothing but memcli's own table (checked where tomllib reads TOML)."""
    old = _toml(before, path)
    try:
        new = _toml(after, path)
    except FileError:
        new = None
    for d in (old, new or {}):
        if isinstance(d.get("mcp_servers"), dict):
            d["mcp_servers"].pop("memcli", None)
            if not d["mcp_servers"]:
                del d["mcp_servers"]
    if old != new:
        raise FileError(
            f"{path}: memcli could not change its [mcp_servers.memcli] table without touching the rest; "
            "edit that table by hand"
        )
