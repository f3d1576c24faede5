"""The settings: every key of memcli.yaml with its default and kind (``SCHEMA``), their values
(``Config``), one configuration file read and checked, the names the environment gives. Which
file's value holds for a setting that protects the user is ``settings_guard``'s."""

from __future__ import annotations

import os
from pathlib import Path

from .dates import parse_duration
from .errors import ConfigError, NotARootError
from .model import Value

EXPLICIT_SIGNALS = [  # a message that refers to earlier work
    *("上次", "之前", "以前", "昨天", "前天", "上周", "继续", "还记得", "记得吗", "记不记得"),
    *("我们说过", "我说过", "刚才", "老样子", "照旧", "像上次"),
    *("last time", "remember", "previously", "earlier", "yesterday", "last week", "as before"),
    *("we discussed", "i told you", "i mentioned", "recall", "continue", "pick up where", "again"),
]
IMPLICIT_SIGNALS = [  # a message that points at something it does not name
    *("那个", "这个方案", "那个方案", "第一个", "第二个", "第三个", "换成", "改成", "还是用", "同样的", "一样的"),
    *("老地方", "那边", "按之前"),
    *("that one", "the other one", "instead", "same as", "the first one", "the second one", "the usual"),
    *("like before", "switch to", "go with", "as usual"),
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
    "recall.threshold": (None, "float"),  # None: the gate fitted on dev (memcli/recall/gate.json)
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
    # what may be proposed (MCP `propose`, a write under write.gate: inbox): per call, per hour, and in all
    "inbox.propose_per_call": (20, "int"),
    "inbox.propose_per_hour": (200, "int"),
    "inbox.max_pending": (500, "int"),
    "inbox.max_bytes": (4_000_000, "int"),
}
GATES = ("direct", "inbox")
FRONT_ENDS = ("cli", "mcp", "hook")
GATE_KEYS = ("write.gate", "write.gate.cli", "write.gate.mcp", "write.gate.hook")
# write.pii and write.pii_captured: a policy, or {front end: policy} (``safety.pii`` applies them)
PII_POLICIES = ("warn", "redact", "refuse", "allow")
PII_DOORS = ("cli", "api", "mcp", "hook")
PII_DEFAULTS = {False: "warn", True: "redact"}  # deliberate writes warn; captured text is masked


class Config(Value):
    """A root's configuration: the values set (else SCHEMA's defaults), the file read, the warnings."""

    FIELDS = ("values", "path", "warnings")
    __slots__ = FIELDS
    values: dict
    path: Path | None
    warnings: tuple

    def __init__(self, values: dict | None = None, path: Path | None = None, warnings: tuple = ()):
        self._fill(locals())
        if values is None:
            object.__setattr__(self, "values", {})

    def __getitem__(self, key: str):
        return self.values[key] if key in self.values else SCHEMA[key][0]

    def get(self, key: str, default=None):
        return self[key] if key in SCHEMA else default

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
        why = pii_problem(value)
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


def front_end_value(settings, key: str, door: str):
    """What settings (a dict, or a Config) say of write.gate, write.pii or write.pii_captured for
    one front end: write.gate.DOOR, else the mapping's entry for it or its default, else the one
    value; None when they say nothing."""
    value = settings.get(f"{key}.{door}") or settings.get(key)
    return (value.get(door) or value.get("default")) if isinstance(value, dict) else value


def write_gate(config: "Config", front_end: str) -> str:
    """direct or inbox: where a write through this front end (cli, mcp, hook) lands."""
    return front_end_value(config, "write.gate", front_end) or "direct"


def pii_policy(config: "Config", door: str = "api", captured: bool = False) -> str:
    """The personal-data policy for a front end: `write.pii` for deliberate writes, `write.pii_captured`
    for text captured on its own (session turns, hook prompts, episodes, reflection proposals)."""
    key = "write.pii_captured" if captured else "write.pii"
    return front_end_value(config, key, door) or PII_DEFAULTS[captured]


def pii_problem(value) -> str | None:
    """Why a write.pii value is not valid (None when it is): a policy, or {front end: policy}."""
    if isinstance(value, str):
        return None if value in PII_POLICIES else f"one of {', '.join(PII_POLICIES)}"
    if isinstance(value, dict) and value:
        for k, v in value.items():
            if k not in PII_DOORS:
                return f"a policy, or a mapping of front ends ({', '.join(PII_DOORS)}) to policies; {k!r} is not one"
            if v not in PII_POLICIES:
                return f"a policy ({', '.join(PII_POLICIES)}) for {k}"
        return None
    return f"one of {', '.join(PII_POLICIES)}, or a mapping of front ends ({', '.join(PII_DOORS)}) to policies"


def read_file(path: Path, shown: str) -> dict:
    """The checked key -> value pairs of one configuration file; {} when it is missing or blank."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{shown}: cannot read it ({e.__class__.__name__}: {e})")
    if all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        return {}  # blank: no YAML parser loaded for it
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


def user_config_path() -> Path:
    """The user's own configuration: $XDG_CONFIG_HOME/memcli/config.yaml, else ~/.config/memcli/config.yaml."""
    from .xdg import home

    return Path(home("config")) / "config.yaml"


def env(name: str) -> str | None:
    """A MEMCLI_* variable; empty counts as unset."""
    return os.environ.get(name) or None


def find_root(explicit: str | os.PathLike | None = None, env=None, cwd: str | None = None) -> Path:
    """--root > MEMCLI_ROOT > the nearest root at or above cwd (``roots.find``); NotARootError otherwise."""
    from .roots import find

    path, why = find(explicit, env, None if cwd is None else os.fspath(cwd))
    if path is None:
        raise NotARootError(why)
    return Path(path)


def names(session: str | None = None, scope: str | None = None, env=None) -> tuple[str, str]:
    """The session and scope names: given, else MEMCLI_SESSION / MEMCLI_SCOPE, else 'default'."""
    env = os.environ if env is None else env
    return session or env.get("MEMCLI_SESSION") or "default", scope or env.get("MEMCLI_SCOPE") or "default"


def agent_session(session_id=None, env=None) -> str:
    """The session an agent's turn belongs to (the hook's and the MCP tools' alike): its session id
    (the event's, else CLAUDE_CODE_SESSION_ID) as a valid name, else MEMCLI_SESSION, else 'default'."""
    from .paths import slugify, valid_id

    env = os.environ if env is None else env
    sid = str(session_id or "").strip() or (env.get("CLAUDE_CODE_SESSION_ID") or "").strip()
    if not sid:
        return env.get("MEMCLI_SESSION") or "default"
    return sid if valid_id(sid) else slugify(sid)
