"""The only reader of memcli.yaml and MEMCLI_* variables; finds the root."""

from __future__ import annotations

import os
from pathlib import Path

from .dates import parse_duration
from .errors import ConfigError, NotARootError
from .model import Value

EXPLICIT_SIGNALS = [
    "上次", "之前", "以前", "昨天", "前天", "上周", "继续", "还记得", "记得吗", "记不记得", "我们说过",
    "我说过", "刚才", "老样子", "照旧", "像上次",
    "last time", "remember", "previously", "earlier", "yesterday", "last week", "as before",
    "we discussed", "i told you", "i mentioned", "recall", "continue", "pick up where", "again",
]
IMPLICIT_SIGNALS = [
    "那个", "这个方案", "那个方案", "第一个", "第二个", "第三个", "换成", "改成", "还是用", "同样的", "一样的",
    "老地方", "那边", "按之前",
    "that one", "the other one", "instead", "same as", "the first one", "the second one",
    "the usual", "like before", "switch to", "go with", "as usual",
]

# key -> (default, kind). Kinds: int, float, str, choice:a|b, duration, list, cmd.
SCHEMA: dict[str, tuple[object, str]] = {
    "index.max_lines": (40, "int"),
    "index.on_full": ("demote", "choice:demote|refuse"),
    "index.rank": ("importance", "choice:importance|activity"),
    "session.max_rounds": (5, "int"),
    "session.summarizer": (None, "cmd"),
    "session.summarizer_timeout": ("20s", "duration"),
    "session.max_summary_chars": (2000, "int"),
    "recall.threshold": (0.35, "float"),
    "recall.limit": (5, "int"),
    "recall.half_life": ("7d", "duration"),  # freshness halves every half_life (recall and index.rank: activity)
    "recall.freshness_weight": (0.05, "float"),  # share of the score for importance x freshness: a tie-breaker
    "recall.signals.explicit": (EXPLICIT_SIGNALS, "list"),
    "recall.signals.implicit": (IMPLICIT_SIGNALS, "list"),
    "heartbeat.stale_after": ("90d", "duration"),
    "heartbeat.scope_max_age": ("24h", "duration"),
    "heartbeat.session_max_turns": (200, "int"),
    "write.secrets": ("refuse", "choice:refuse|redact|allow"),
    "write.pii": ("warn", "pii"),  # deliberate writes; a policy or {front end: policy} (safety/pii.py)
    "write.pii_captured": ("redact", "pii"),  # session turns, hook prompts, episodes, reflection proposals
    "embed.provider": ("use", "text"),
    "embed.url": (None, "text"),
    "embed.model": (None, "text"),
    "embed.key_env": (None, "text"),
    "embed.query_prefix": ("", "prefix"),
    "embed.passage_prefix": ("", "prefix"),
    "lock_timeout": ("10s", "duration"),
    # learning from sessions (memcli reflect, the inbox, gated writes)
    "reflect.engine": ("auto", "choice:auto|offline|extractor"),
    "reflect.extractor": (None, "cmd"),
    "reflect.extractor_timeout": ("120s", "duration"),
    "reflect.budget": (15, "int"),
    "reflect.on_fold": (False, "bool"),
    "inbox.max_age": ("7d", "duration"),
    "inbox.auto_accept": ([], "types"),
    "inbox.auto_accept_confidence": (0.8, "float"),
    "write.gate": ("direct", "gate"),
    "write.gate.cli": (None, "gate?"),
    "write.gate.mcp": (None, "gate?"),
    "write.gate.hook": (None, "gate?"),
    # what MCP `propose` may add to the inbox: per call, per hour, and in all (pending proposals, bytes)
    "inbox.propose_per_call": (20, "int"),
    "inbox.propose_per_hour": (200, "int"),
    "inbox.max_pending": (500, "int"),
    "inbox.max_bytes": (4_000_000, "int"),
}
GATES = ("direct", "inbox")
FRONT_ENDS = ("cli", "mcp", "hook")

class Config(Value):
    """A root's configuration: the values set (the rest are SCHEMA's defaults), the memcli.yaml
    read, and what was said about it (a setting not trusted, a file not read)."""

    FIELDS = ("values", "path", "warnings")
    __slots__ = FIELDS
    values: dict
    path: Path | None
    warnings: tuple

    def __init__(self, values: dict | None = None, path: Path | None = None, warnings: tuple = ()):
        object.__setattr__(self, "values", {} if values is None else values)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "warnings", warnings)

    def __getitem__(self, key: str):
        if key in self.values:
            return self.values[key]
        return SCHEMA[key][0]

    def seconds(self, key: str) -> float:
        return parse_duration(self[key], key)


def _flatten(data: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and not any(s == key for s in SCHEMA):
            if not v and any(s.startswith(key + ".") for s in SCHEMA):
                continue
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _check(key: str, value: object, kind: str, shown: str = "memcli.yaml") -> object:
    def bad(expected: str):
        return ConfigError(f"{shown}: {key} must be {expected}, got {value!r}")

    if value is None:
        if kind in ("cmd", "gate?", "text"):
            return None
        raise bad("set (remove the key to use the default)")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad("a whole number of at least 1")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise bad("a number from 0 to 1")
        value = float(value)
    elif kind.startswith("choice:"):
        choices = kind[7:].split("|")
        if value not in choices:
            raise bad("one of " + ", ".join(choices))
    elif kind == "duration":
        parse_duration(value, f"{shown}: {key}")
    elif kind == "list":
        if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
            raise bad("a list of words or phrases")
    elif kind == "pii":
        from .safety.pii import check_setting

        why = check_setting(key, value)
        if why:
            raise bad(why)
    elif kind == "cmd":
        if not isinstance(value, str) or not value.strip():
            raise bad("a shell command (a string) or null")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
    elif kind == "types":
        from .model import TYPES

        if not isinstance(value, list) or not all(isinstance(x, str) and x in TYPES for x in value):
            raise bad(f"a list of memory types ({', '.join(TYPES)})")
    elif kind in ("gate", "gate?"):
        if isinstance(value, dict) and kind == "gate":
            for k, v in value.items():
                if k not in FRONT_ENDS + ("default",) or v not in GATES:
                    raise bad(f"direct, inbox, or a mapping of {', '.join(FRONT_ENDS)} to direct or inbox")
        elif value not in GATES:
            raise bad("direct or inbox")
    elif kind == "text":
        if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 for c in value):
            raise bad("one line of text")
    elif kind == "prefix":
        if not isinstance(value, str) or any(ord(c) < 32 for c in value):
            raise bad("a string (may be empty)")
    return value


def write_gate(config: "Config", front_end: str) -> str:
    """direct or inbox: where a write through this front end (cli, mcp, hook) lands."""
    own = config[f"write.gate.{front_end}"]
    if own:
        return own
    gate = config["write.gate"]
    if isinstance(gate, dict):
        return gate.get(front_end) or gate.get("default") or "direct"
    return gate


def _is_blank_yaml(text: str) -> bool:
    return all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines())


def _read_yaml(path: Path, shown: str) -> dict:
    """The checked key -> value pairs of one configuration file; {} when it is missing or blank."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{shown}: cannot read it ({e.__class__.__name__}: {e})")
    if _is_blank_yaml(text):
        return {}
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{shown}{where}: {problem}")
    except (RecursionError, MemoryError, ValueError, TypeError) as e:
        raise ConfigError(f"{shown}: unreadable YAML ({e.__class__.__name__})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{shown}: expected a mapping of keys such as index.max_lines")
    try:
        flat = _flatten(data)
    except RecursionError:
        raise ConfigError(f"{shown}: nested too deeply") from None
    values = {}
    for key, value in flat.items():
        if key not in SCHEMA:
            from difflib import get_close_matches

            close = get_close_matches(key, list(SCHEMA), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{shown}: unknown key {key!r}{hint}")
        values[key] = _check(key, value, SCHEMA[key][1], shown)
    return values


# ---- settings that protect the user: a committed memcli.yaml only tightens them (``tighten``)

LOCAL_CONFIG = ".memcli/config.yaml"  # per root, never committed
LEGACY_TRUST_FILE = ".memcli/trusted"  # where older versions kept trust, inside the root: never read
EXECUTING_KEYS = ("session.summarizer", "reflect.extractor")  # settings whose value is a shell command
COMMAND_ENV = {"session.summarizer": "MEMCLI_SUMMARIZER"}  # the user's own override of each
# Settings that send memory text (and a key read from the environment) off this machine, or name
# what is loaded to embed it: like a command, honoured from memcli.yaml only after `memcli trust`.
OUTBOUND_KEYS = ("embed.provider", "embed.url", "embed.key_env", "embed.model", "embed.query_prefix",
                 "embed.passage_prefix")
GATE_KEYS = ("write.gate", "write.gate.cli", "write.gate.mcp", "write.gate.hook")


def _guards() -> dict:
    from .tighten import GUARDS

    return GUARDS


def user_config_path() -> Path:
    """The user's own configuration: $XDG_CONFIG_HOME/memcli/config.yaml, else ~/.config/memcli/config.yaml."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "memcli" / "config.yaml"


def _guarded(key: str, value: object) -> bool:
    """Whether this value of this key, from memcli.yaml, loosens what the defaults give (and so
    needs a trust step)."""
    from .tighten import looser, per_door

    guard = _guards().get(key.rsplit(".", 1)[0] if key.startswith("write.gate.") else key)
    if guard is None or value is None:
        return False
    if key in GATE_KEYS:
        return any(looser(guard, g, "direct") for g in _gate_values(key, value))
    if key in ("write.pii", "write.pii_captured"):
        from .safety.pii import DEFAULTS, DOORS

        default = DEFAULTS[key == "write.pii_captured"]
        return any(looser(guard, per_door(value, d, default) or default, default) for d in DOORS)
    return looser(guard, value, SCHEMA[key][0])


def _gate_values(key: str, value) -> list:
    return list(value.values()) if isinstance(value, dict) else [value]


def _trust_state(root: Path) -> "tuple[bool, dict]":
    """(memcli.yaml is the file `memcli trust` recorded, {a file a trusted command names: changed})."""
    from . import trust as records

    return records.check(root)


def is_trusted(root: Path) -> bool:
    """True when memcli.yaml is byte for byte the file `memcli trust` recorded for this root, in the
    user's state folder (a record inside the root, which git could have brought, is never read)."""
    return _trust_state(root)[0]


def trust(root: Path) -> dict:
    """Record, outside the root, that this root's memcli.yaml, as it is now, may run the commands
    it names and loosen what it loosens; the files in the root its commands name are recorded by
    their digests too. A later change to any of them needs trusting again."""
    from . import trust as records
    from .dates import utcnow

    path = root / "memcli.yaml"
    digest = records.digest(path)
    if digest is None:
        raise ConfigError("memcli.yaml: no such file to trust")
    load = _read_yaml(path, "memcli.yaml")
    commands = {k: load[k] for k in EXECUTING_KEYS if load.get(k)}
    files = records.named_files(root, list(commands.values()))
    where = records.record_trust(root, digest, utcnow(), files)
    return {"path": "memcli.yaml", "sha256": digest, "record": str(where), "commands": commands,
            "files": {rel: d for rel, d in files.items()},
            "loosens": {k: v for k, v in load.items() if k not in EXECUTING_KEYS and _guarded(k, v)}}


def trusted_setting(root: Path, key: str, committed=None, user=None, local=None, *,
                    root_commands: bool = True, trusted: bool | None = None) -> tuple[object, str | None]:
    """The one rule for a setting that protects the user (``tighten.GUARDS``): (the value to use,
    or None for the default; a warning). The user's own value is the MEMCLI_* override, else the
    root's untracked .memcli/config.yaml, else the user's configuration file; memcli.yaml's value
    holds where it is stricter than that (or than the default when the user set nothing), and
    where it is looser only once `memcli trust` recorded the file as it is now.
    ``root_commands=False`` (the agent hook) takes no command from the root's files at all."""
    from .tighten import COMMAND, OUTBOUND, resolve

    guard = _guards()[key]
    override = env(COMMAND_ENV[key]) if key in COMMAND_ENV else None
    own_command = key in EXECUTING_KEYS and not root_commands
    own = override or (local if local is not None and not own_command else None)
    own = own if own is not None else user
    if own_command:
        committed = None
    default = SCHEMA[key][0]
    if trusted is None and committed is not None and own is None and _guarded(key, committed):
        trusted = is_trusted(root)
    value, set_aside = resolve(guard, own, committed, default, bool(trusted))
    if key in EXECUTING_KEYS and value and value == committed and own is None:
        changed = _trust_state(root)[1]
        named = [rel for rel in changed if rel in _named(root, value)]
        if named:
            return None, (f"memcli.yaml's {key} runs {named[0]}, which changed since `memcli trust`: not run "
                          "(review it, then `memcli trust` again)")
    if not set_aside:
        return (None if value == default and key in EXECUTING_KEYS + OUTBOUND_KEYS else value), None
    if guard == COMMAND:
        what, done = "a command", "not run"
    elif guard == OUTBOUND:
        what, done = "which would send memory text off this machine or choose what is loaded to embed it", "ignored"
    else:
        what, done = "looser than the default", f"the default {default} applies"
    legacy = (f" ({LEGACY_TRUST_FILE}, which older versions wrote inside the root, is no longer read)"
              if (root / LEGACY_TRUST_FILE).exists() else "")
    return None, (f"memcli.yaml sets {key}: {committed}, {what}, and was not trusted on this machine: "
                  f"{done}{legacy} (review the file, then `memcli trust`)")


def _named(root: Path, command: str) -> set:
    from . import trust as records

    return set(records.named_files(root, [command]))


def effective_summarizer(root: Path, committed: str | None, local: str | None) -> tuple[str | None, str | None]:
    """The summarizer command to run and a warning (see ``trusted_setting``)."""
    value, warning = trusted_setting(root, "session.summarizer", committed, None, local)
    return (None if value is None else str(value)), warning


def _per_door(key: str, committed: dict, own: dict, root: Path, warnings: list, trusted) -> object:
    """write.pii / write.pii_captured, front end by front end: {front end: policy}."""
    from .safety.pii import DEFAULTS, DOORS
    from .tighten import per_door, resolve

    default = DEFAULTS[key == "write.pii_captured"]
    guard = _guards()[key]
    out, loosened = {}, []
    for door in DOORS:
        c, o = per_door(committed.get(key), door, default), per_door(own.get(key), door, default)
        value, aside = resolve(guard, o, c, default, trusted)
        out[door] = value
        if aside:
            loosened.append(f"{door}: {c}")
    if loosened:
        warnings.append(f"memcli.yaml sets {key} looser than the default {default} ({', '.join(loosened)}) and was "
                        f"not trusted on this machine: {default} applies (review the file, then `memcli trust`)")
    return out


def _gates(committed: dict, own: dict, warnings: list, trusted) -> dict:
    """write.gate and write.gate.cli|mcp|hook, front end by front end: {front end: gate}."""
    from .tighten import gate_of, resolve

    guard = _guards()["write.gate"]
    out, loosened = {}, []
    for fe in FRONT_ENDS:
        c, o = gate_of(committed, fe), gate_of(own, fe)
        value, aside = resolve(guard, o, c, "direct", trusted)
        out[fe] = value
        if aside:
            loosened.append(f"{fe}: {c}")
    if loosened:
        warnings.append(f"memcli.yaml sets write.gate looser than yours ({', '.join(loosened)}) and was not trusted "
                        "on this machine: inbox holds (review the file, then `memcli trust`)")
    return out


def _read_local(root: Path, warnings: list) -> dict:
    """The root's .memcli/config.yaml; none of it is read when git tracks it (it came with the
    repository: someone else wrote it). Git is asked only when the index changed (``store.tracked``)."""
    path = root / LOCAL_CONFIG
    if not path.is_file():
        return {}
    from .store.tracked import came_with_git

    if came_with_git(root, path):
        warnings.append(f"{LOCAL_CONFIG} is tracked by git, so it came with the repository: not read "
                        "(stop tracking it: `git rm -r --cached .memcli`)")
        return {}
    return _read_yaml(path, LOCAL_CONFIG)


def load_config(root: Path, *, root_commands: bool = True) -> Config:
    """memcli.yaml, then the user's configuration, then the root's .memcli/config.yaml, each
    overriding the one before; a setting that protects the user (``tighten.GUARDS``) passes
    ``trusted_setting``: memcli.yaml only tightens it unless trusted. ``root_commands=False``: no
    command from the root's files (the hook)."""
    path = root / "memcli.yaml"
    if path.is_symlink():
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            raise ConfigError("memcli.yaml leads outside the memory root (a symlink?); not read") from None
    committed = _read_yaml(path, "memcli.yaml")
    user_path = user_config_path()
    user = _read_yaml(user_path, str(user_path)) if user_path.is_file() else {}
    warnings: list = []
    local = _read_local(root, warnings)
    values = {**committed, **user, **local}
    guarded = _guards() if committed or user or local else {}
    own = {**user, **local}
    known: list = []

    def trusted() -> bool:  # asked at most once, and only when memcli.yaml loosens something
        if not known:
            known.append(is_trusted(root))
        return known[0]

    for key in guarded:
        if key == "write.gate":
            if any(k in values for k in GATE_KEYS):
                for k in GATE_KEYS[1:]:
                    values.pop(k, None)
                values["write.gate"] = _gates(committed, own, warnings, trusted)
            continue
        if key in ("write.pii", "write.pii_captured"):
            if key in values:
                values[key] = _per_door(key, committed, own, root, warnings, trusted)
            continue
        c = committed.get(key)
        t = trusted() if c is not None and _guarded(key, c) else None
        value, warning = trusted_setting(root, key, c, user.get(key), local.get(key),
                                         root_commands=root_commands, trusted=t)
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
        if warning:
            warnings.append(warning)
    for key in EXECUTING_KEYS:
        if key in COMMAND_ENV and env(COMMAND_ENV[key]) and key not in values:
            values[key] = env(COMMAND_ENV[key])
    values.setdefault("session.summarizer", None)
    exists = path.exists() or path.is_symlink()
    return Config(values, path if exists else None, tuple(warnings))


def env(name: str) -> str | None:
    """A MEMCLI_* variable; empty counts as unset."""
    value = os.environ.get(name)
    return value if value else None


def find_root(explicit: str | os.PathLike | None = None, cwd: Path | None = None) -> Path:
    """--root > MEMCLI_ROOT > nearest ancestor holding MEMORY.md or memcli.yaml."""
    given = explicit if explicit not in (None, "") else env("MEMCLI_ROOT")
    if given is not None:
        root = Path(given).expanduser()
        if root.exists() and not root.is_dir():
            raise NotARootError(f"not a memory root: {root} is a file, not a folder")
        if not root.is_dir():
            raise NotARootError(f"not a memory root: {root} does not exist (run `memcli init {root}`)")
        if not ((root / "MEMORY.md").exists() or (root / "memcli.yaml").exists()):
            raise NotARootError(f"not a memory root: {root} (run `memcli init`)")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "MEMORY.md").is_file() or (d / "memcli.yaml").is_file():
            return d
    raise NotARootError("not a memory root (run `memcli init`)")
