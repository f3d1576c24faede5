"""memcli's MCP server and hooks in the agents' own configuration files (`memcli agents`). A change
keeps every key the user wrote and the file as it was beside it (FILE.memcli-backup); a second run
changes nothing."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

from ..errors import FileError, UsageError

HOOK_WORDS = ["hook", "claude-code"]  # one command for every event: the event's hook_event_name says which
BACKUP = ".memcli-backup"
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")


class Client(NamedTuple):
    home: tuple  # (the variable naming its folder, its folder under ~)
    user: tuple  # (server file, hooks file) in that folder
    project: tuple  # (server file, hooks file) in the project
    events: tuple
    timeout: int  # of a hook, in the client's unit
    server: dict  # memcli's server entry besides the command line (a setting the user gave stays theirs)
    note: str = ""  # what the user still does


CLIENTS = {
    "claude-code": Client(
        ("CLAUDE_CONFIG_DIR", ""),
        (".claude.json", ".claude/settings.json"),
        (".mcp.json", ".claude/settings.json"),
        EVENTS,
        10,
        {"type": "stdio"},
    ),
    "codex": Client(
        ("CODEX_HOME", ".codex"),
        ("config.toml", "hooks.json"),
        (".codex/config.toml", ".codex/hooks.json"),
        EVENTS,
        10,
        {"required": True, "startup_timeout_sec": 60},
        "Codex runs a hook only once you review it: start `codex` and trust memcli's hooks when it says a hook "
        "needs review",
    ),
    "gemini": Client(
        ("GEMINI_CLI_HOME", ".gemini"),
        ("settings.json", "settings.json"),
        (".gemini/settings.json", ".gemini/settings.json"),
        ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"),
        10000,
        {"timeout": 30000},
        "Gemini CLI runs hooks and MCP servers only in a folder you trust (it asks when you start `gemini`)",
    ),
}


def program() -> list[str]:
    """This memcli as a command: the `memcli` script beside this interpreter, else python -I -m memcli
    (isolated: a folder holding a memcli/ of its own never runs instead)."""
    from ..procs import module_command

    script = os.path.join(os.path.dirname(sys.executable), "memcli")
    return [script] if os.access(script, os.X_OK) else module_command("memcli")


def module_form(argv: list) -> int:
    """How many words after the interpreter say ``-m memcli`` (``-I -m memcli``: 3; an older
    entry's ``-m memcli``: 2), 0 when none do."""
    return 3 if argv[1:4] == ["-I", "-m", "memcli"] else 2 if argv[1:3] == ["-m", "memcli"] else 0


def ours(command) -> str | None:
    """The root a command line of memcli's hook or server names ("" for none), None when it is not
    one: memcli, then [--root ROOT], then `mcp` or `hook claude-code [--budget N]`, nothing else."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    except (ValueError, TypeError):
        return None
    form = module_form(argv)
    if not argv or os.path.basename(argv[0]) != "memcli" and not form:
        return None
    rest, root = argv[1 + form :], ""
    if rest[:1] == ["--root"] and len(rest) > 2:
        root, rest = rest[1], rest[2:]
    hook = rest[:2] == HOOK_WORDS and (rest[2:] == [] or len(rest) == 4 and rest[2] in ("--budget", "-b"))
    return root if rest == ["mcp"] or hook else None


class Agents:
    """The agents' files, the user's (scope "user") or a project folder's ("project")."""

    def __init__(self, project: str | os.PathLike | None = None):
        self.project = Path(project or os.getcwd())

    def files(self, name: str, scope: str) -> tuple[Path, Path]:
        c = CLIENTS[name]
        if scope == "project":
            return self.project / c.project[0], self.project / c.project[1]
        from ..config import env

        given = env(c.home[0])  # GEMINI_CLI_HOME names the home that holds .gemini
        base = Path(given) / (".gemini" if name == "gemini" else "") if given else Path.home() / c.home[1]
        return base / c.user[0], base / ("settings.json" if given and name == "claude-code" else c.user[1])

    def add(self, name: str, root: str | os.PathLike, scope: str = "user") -> dict:
        """memcli for root in the agent's files; for an agent memcli does not know, the command to paste."""
        prog, root = program(), os.path.realpath(root)
        server = {"command": prog[0], "args": [*prog[1:], "--root", root, "mcp"]}
        if name not in CLIENTS:
            block = json.dumps({"mcpServers": {"memcli": server}}, ensure_ascii=False)
            return {"agent": name, "snippet": {"command": shlex.join([prog[0], *server["args"]]), "json": block}}
        c, files = _client(name, scope), self.files(name, scope)
        hook = {"type": "command", "command": shlex.join([*prog, "--root", root, *HOOK_WORDS]), "timeout": c.timeout}
        kept = [str(p) + BACKUP for p in files if p.exists()]
        changed = _edit(files[0], lambda d: _put_server(d, server, c.server))
        changed += _edit(files[1], lambda d: _put_hooks(d, c.events, hook))
        from ..trust import allow_hook_root

        allow_hook_root(root)
        res = dict(agent=name, scope=scope, root=root, note=c.note, changed=changed, events=list(c.events))
        return {**res, "files": [str(p) for p in files], "backups": [b for b in kept if b[: -len(BACKUP)] in changed]}

    def remove(self, name: str, scope: str = "user") -> dict:
        _client(name, scope)
        mcp, hooks = self.files(name, scope)
        changed = _edit(mcp, lambda d: _put_server(d, None), create=False)
        changed += _edit(hooks, lambda d: _put_hooks(d, (), None), create=False)
        return {"agent": name, "scope": scope, "changed": changed, "backups": [f + BACKUP for f in changed]}

    def listing(self) -> list[dict]:
        """Where memcli is wired: each agent and scope, its files, root, events hooked and missing."""
        out = []
        for name, c in CLIENTS.items():
            for scope in ("user", "project"):
                hooks: dict
                mcp_file, hooks_file = self.files(name, scope)
                server, hooks = _server(_load(mcp_file)), {e: [] for e in c.events}  # the client's order first
                for event, _, _, hook in _walk(_load(hooks_file)):
                    hooks[event] = hooks.get(event, []) + ([hook["command"]] if _mine(hook) else [])
                hooks = {e: commands for e, commands in hooks.items() if commands}
                if not server and not hooks:
                    continue
                command = [server["command"], *server.get("args", [])] if server else None
                seen = unreviewed(hooks_file, self.files(name, "user")[0]) if name == "codex" else []
                row: dict = dict(agent=name, scope=scope, note=c.note, missing=[e for e in c.events if e not in hooks])
                row["mcp"] = {"file": str(mcp_file), "command": command} if server else None
                row["hooks"] = {"file": str(hooks_file), "events": hooks} if hooks else None
                out.append({**row, "root": ours(command or next(iter(hooks.values()))[0]), "unreviewed": seen})
        return out


def _client(name: str, scope: str) -> Client:
    if name not in CLIENTS:
        raise UsageError(f"unknown agent {name!r}; memcli wires {', '.join(CLIENTS)}")
    if scope not in ("user", "project"):
        raise UsageError(f"--scope must be user or project, got {scope!r}")
    return CLIENTS[name]


def unreviewed(hooks_file: Path, config: Path) -> list[str]:
    """The events of memcli's hooks in a Codex hooks.json that Codex has no review of (no entry
    [hooks.state."FILE:EVENT:GROUP:HOOK"] in its config.toml)."""
    state = (_toml(_load(config) or "", config).get("hooks") or {}).get("state") or {}
    key = os.path.realpath(hooks_file) + ":{}:{}:{}"
    return [
        e
        for e, g, h, hook in _walk(_load(hooks_file))
        if _mine(hook) and key.format(re.sub(r"(?<!^)(?=[A-Z])", "_", e).lower(), g, h) not in state
    ]


def _walk(doc):
    """(event, group number, hook number, hook) of every hook of a JSON configuration."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            listed = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(listed if isinstance(listed, list) else ()):
                yield event, g, h, hook


# ---------------------------------------------------------------- one configuration file


def _load(path: Path):
    """A file's content (a dict for JSON, the text for TOML), None when it is missing."""
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


def _edit(path: Path, change, create: bool = True) -> list[str]:
    """Change a file's content and write it when it differs, the old one beside it: [path] or []."""
    doc = _load(path)
    if doc is None and not create:
        return []
    if path.suffix == ".toml":
        before, after = doc, change(doc or "")
    else:
        before, doc = json.dumps(doc, ensure_ascii=False, indent=2) + "\n", doc or {}
        change(doc)
        after = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if after == before:
        return []
    import shutil

    from ..store.fs import atomic_write

    real = Path(os.path.realpath(path))
    if real.exists():
        shutil.copy2(real, real.with_name(real.name + BACKUP))
    atomic_write(real, after)
    return [str(path)]


def _table(doc: dict, key: str) -> dict:
    value = doc.setdefault(key, {})
    if not isinstance(value, dict):
        raise FileError(f'"{key}" is not a JSON object in the file; fix it, then run this again')
    return value


def _put_server(doc, command: dict | None, extra: dict | None = None):
    """memcli's server entry (command None: taken out); a key the user added to it stays."""
    if isinstance(doc, str):
        return _toml_put(doc, command, extra or {})
    servers = _table(doc, "mcpServers")
    old = servers.pop("memcli", None)
    if command is not None:
        servers["memcli"] = {**(extra or {}), **(old if isinstance(old, dict) else {}), **command}


def _server(doc) -> dict | None:
    servers = _toml(doc, None).get("mcp_servers") if isinstance(doc, str) else (doc or {}).get("mcpServers")
    s = servers.get("memcli") if isinstance(servers, dict) else None
    return s if isinstance(s, dict) and isinstance(s.get("command"), str) else None


def _mine(hook) -> bool:
    return isinstance(hook, dict) and ours(hook.get("command")) is not None


def _put_hooks(doc: dict, events: tuple, entry: dict | None) -> None:
    """memcli's hook, once, in each of events (entry None: in none); every other hook stays."""
    hooks = _table(doc, "hooks")
    for event in [*hooks, *(e for e in events if e not in hooks)]:
        groups, kept, placed = hooks.get(event, []), [], entry is None or event not in events
        if not isinstance(groups, list):
            continue
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(map(_mine, g["hooks"])):
                g["hooks"] = [h for h in g["hooks"] if not _mine(h)] + ([] if placed else [entry])
                placed = True
                if not g["hooks"]:
                    continue  # a group that held only memcli's hook
            kept.append(g)
        if not placed:
            kept.append({"hooks": [entry]})
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]


# ---------------------------------------------------------------- TOML: Codex's [mcp_servers.memcli]

_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_MINE = re.compile(rf"""^\s*\[\s*mcp_servers\s*\.\s*(?:memcli|"memcli")\s*(?:\.\s*{_PART}\s*)*\]\s*(#.*)?$""")
_HEADER = re.compile(rf"^\s*\[\[?\s*{_PART}(?:\s*\.\s*{_PART})*\s*\]\]?\s*(#.*)?$")


def _toml(text: str, path: Path | None) -> dict:
    if sys.version_info >= (3, 11):  # Python 3.10 has no tomllib: nothing read, nothing to compare
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise FileError(f"{path or 'the file'} is not TOML ({e}); fix it, then run this again") from None
    return {}


def _value(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(map(_value, v)) + "]"
    return json.dumps(v) if isinstance(v, (str, int, float, bool)) else str(v)  # str: a TOML date


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _others(doc: dict) -> dict:
    servers = doc.get("mcp_servers")
    return {**doc, "mcp_servers": {k: v for k, v in (servers or {}).items() if k != "memcli"}}


def _toml_put(text: str, command: dict | None, extra: dict) -> str:
    """The text with memcli's tables taken out and, for a command, memcli's one table at the end,
    a key the user gave it kept; refused when anything else would differ (memcli's server written
    another way: dotted keys, an inline table)."""
    lines, old = text.splitlines(), _toml(text, None)
    heads = [i for i, ln in enumerate(lines) if _HEADER.match(ln)] + [len(lines)]
    cut = {i for s, e in zip(heads, heads[1:]) if _MINE.match(lines[s]) for i in range(s, e)}
    kept = "\n".join(ln for i, ln in enumerate(lines) if i not in cut).rstrip()
    user = (old.get("mcp_servers") or {}).get("memcli")
    table = {**extra, **(user if isinstance(user, dict) else {}), **command} if command else {}
    body = "\n".join(["[mcp_servers.memcli]", *(f"{_key(k)} = {_value(v)}" for k, v in table.items())])
    new = (kept + "\n\n" if kept else "") + body if command else kept
    new += "\n" if new else ""
    if new == text or not cut and command is None:
        return text
    if sys.version_info < (3, 11) and cut:
        raise FileError("Python 3.10 cannot read Codex's config.toml to keep your settings; edit it by hand")
    try:
        got = _toml(new, None)
    except FileError:
        got = None
    mine = (got or {}).get("mcp_servers", {}).get("memcli", {})
    if got is None or _others(got) != _others(old) or got and mine != table:
        raise FileError(
            "Codex's config.toml holds memcli's server in another form than a [mcp_servers.memcli] table; "
            "edit it by hand"
        )
    return new
