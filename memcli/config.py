"""The only reader of memcli.yaml and MEMCLI_* variables; finds the root."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError, NotARootError

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
    "session.max_rounds": (5, "int"),
    "session.summarizer": (None, "cmd"),
    "session.summarizer_timeout": ("20s", "duration"),
    "session.max_summary_chars": (2000, "int"),
    "recall.threshold": (0.35, "float"),
    "recall.limit": (5, "int"),
    "recall.signals.explicit": (EXPLICIT_SIGNALS, "list"),
    "recall.signals.implicit": (IMPLICIT_SIGNALS, "list"),
    "heartbeat.stale_after": ("90d", "duration"),
    "heartbeat.scope_max_age": ("24h", "duration"),
    "heartbeat.session_max_turns": (200, "int"),
    "write.secrets": ("refuse", "choice:refuse|redact|allow"),
    "embed.provider": ("use", "text"),
    "embed.url": (None, "text"),
    "embed.model": (None, "text"),
    "embed.key_env": (None, "text"),
    "embed.query_prefix": ("", "prefix"),
    "embed.passage_prefix": ("", "prefix"),
    "lock_timeout": ("10s", "duration"),
}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNIT = {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(value: object, key: str = "duration") -> float:
    """'10s', '90d', '1.5h', 30 -> seconds."""
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a duration like 10s, 90d, got {value!r}")
    if isinstance(value, (int, float)):
        if not 0 <= value < float("inf"):
            raise ConfigError(f"{key}: expected a duration like 10s, 90d, got {value!r}")
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ConfigError(f"{key}: expected a duration like 10s, 30m, 24h, 90d, got {value!r}")
    return float(m.group(1)) * _UNIT[m.group(2)]


@dataclass(frozen=True)
class Config:
    values: dict = field(default_factory=dict)
    path: Path | None = None
    warnings: tuple = ()

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
        if kind in ("cmd", "text"):
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
    elif kind == "cmd":
        if not isinstance(value, str) or not value.strip():
            raise bad("a shell command (a string) or null")
    elif kind == "text":
        if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 for c in value):
            raise bad("one line of text")
    elif kind == "prefix":
        if not isinstance(value, str) or any(ord(c) < 32 for c in value):
            raise bad("a string (may be empty)")
    return value


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


# ---- settings that run commands: never from a committed file without a local trust step

LOCAL_CONFIG = ".memcli/config.yaml"  # per root, never committed
TRUST_FILE = ".memcli/trusted"  # the digest of the memcli.yaml a person allowed to run commands
EXECUTING_KEYS = ("session.summarizer",)
# Settings that send memory text (and a key from the environment) off this machine: like a
# command, honoured from memcli.yaml only after `memcli trust`.
OUTBOUND_KEYS = ("embed.provider", "embed.url", "embed.key_env")


def user_config_path() -> Path:
    """The user's own configuration: $XDG_CONFIG_HOME/memcli/config.yaml, else ~/.config/memcli/config.yaml."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "memcli" / "config.yaml"


def _digest(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def is_trusted(root: Path) -> bool:
    """True when memcli.yaml is byte for byte the file `memcli trust` recorded for this root."""
    digest = _digest(root / "memcli.yaml")
    try:
        recorded = (root / TRUST_FILE).read_text(encoding="utf-8").split()
    except OSError:
        return False
    return digest is not None and digest in recorded


def trust(root: Path) -> dict:
    """Record that this root's memcli.yaml, as it is now, may run the commands it names.
    A later change to the file needs trusting again."""
    from .store.fs import atomic_write, state_dir

    path = root / "memcli.yaml"
    digest = _digest(path)
    if digest is None:
        raise ConfigError("memcli.yaml: no such file to trust")
    state_dir(root)
    atomic_write(root / TRUST_FILE, digest + "\n")
    load = _read_yaml(path, "memcli.yaml")
    return {"path": "memcli.yaml", "sha256": digest,
            "commands": {k: load[k] for k in EXECUTING_KEYS + OUTBOUND_KEYS if load.get(k)}}


def effective_summarizer(root: Path, committed: str | None, local: str | None) -> tuple[str | None, str | None]:
    """The summarizer command to run and a warning: MEMCLI_SUMMARIZER, else local configuration,
    else memcli.yaml only once trusted; an untrusted one is ignored with a warning."""
    chosen = env("MEMCLI_SUMMARIZER") or local
    if chosen:
        return chosen, None
    if not committed:
        return None, None
    if is_trusted(root):
        return committed, None
    return None, ("memcli.yaml sets session.summarizer, a command, and was not trusted on this machine: "
                  "not run (review the file, then `memcli trust`)")


def load_config(root: Path) -> Config:
    """memcli.yaml, then the user's configuration, then the root's .memcli/config.yaml, each
    overriding the one before; commands from memcli.yaml only after `memcli trust`."""
    path = root / "memcli.yaml"
    if path.is_symlink():
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            raise ConfigError("memcli.yaml leads outside the memory root (a symlink?); not read") from None
    values = _read_yaml(path, "memcli.yaml")
    committed = {k: values.pop(k) for k in EXECUTING_KEYS + OUTBOUND_KEYS if k in values}
    local: dict = {}
    for p, shown in ((user_config_path(), str(user_config_path())), (root / LOCAL_CONFIG, LOCAL_CONFIG)):
        if p.is_file():
            local.update(_read_yaml(p, shown))
    values.update(local)
    warnings = []
    command, warning = effective_summarizer(root, committed.get("session.summarizer"),
                                            local.get("session.summarizer"))
    values["session.summarizer"] = command
    if warning:
        warnings.append(warning)
    outbound = [k for k in OUTBOUND_KEYS if k in committed and k not in local]
    if outbound and is_trusted(root):
        values.update((k, committed[k]) for k in outbound)
    elif outbound:
        warnings.append(f"memcli.yaml sets {', '.join(outbound)}, which would send memory text off this machine, "
                        "and was not trusted here: ignored (review the file, then `memcli trust`)")
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
