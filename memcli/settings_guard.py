"""A committed memcli.yaml only tightens. memcli.yaml travels with the repository, so for each
setting in GUARDS its value is honoured only when at least as strict as what the user's own files
give (~/.config/memcli/config.yaml, the root's untracked .memcli/config.yaml, a MEMCLI_* override),
or the default; a looser one counts only after `memcli trust` (recorded outside the root), and
otherwise the user's value or the default applies, with one warning. A command and a setting that
sends memory text off this machine are never "at least as strict": from memcli.yaml they always
need trust. Settings not listed choose only how memories are ranked and shown. docs/safety.md has
the table; ``load_config`` reads a root's settings under this rule.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .config import FRONT_ENDS, GATE_KEYS, PII_DEFAULTS, PII_DOORS, SCHEMA, Config, env, front_end_value
from .config import read_file, user_config_path
from .errors import ConfigError
from .paths import LOCAL_CONFIG

# kind of guard per setting; an ordered kind ranks its values (higher is stricter; equal ranks
# protect alike: a redacted secret and a refused one both stay out of the file)
COMMAND = "command"  # a shell command: memcli.yaml needs trust, the user's own wins
OUTBOUND = "outbound"  # sends memory text off this machine, or names what is loaded to embed it
PII = {"allow": 0, "warn": 1, "redact": 2, "refuse": 2}
GUARDS: dict[str, object] = {
    "session.summarizer": COMMAND,
    "reflect.extractor": COMMAND,
    "embed.provider": OUTBOUND,
    "embed.url": OUTBOUND,
    "embed.key_env": OUTBOUND,
    "embed.model": OUTBOUND,
    "embed.query_prefix": OUTBOUND,
    "embed.passage_prefix": OUTBOUND,
    "write.secrets": {"allow": 0, "redact": 1, "refuse": 1},
    "write.pii": PII,  # per front end
    "write.pii_captured": PII,  # per front end
    "write.gate": {"direct": 0, "inbox": 1},  # per front end, with write.gate.cli|mcp|hook
    "inbox.auto_accept": "subset",  # fewer types auto-accepted is stricter
    "inbox.auto_accept_confidence": "higher",
    "inbox.propose_per_call": "lower",
    "inbox.propose_per_hour": "lower",
    "inbox.max_pending": "lower",
    "inbox.max_bytes": "lower",
    "reflect.on_fold": {True: 0, False: 1},  # on: session turns become proposals that sync shares
}
# What each guard does when memcli.yaml loosens it without trust (for the warning).
WHAT = {
    COMMAND: ("a command", "not run"),
    OUTBOUND: ("which would send memory text off this machine or choose what is loaded to embed it", "ignored"),
}


def rank(guard, value) -> float:
    """How strict a value is under its guard (higher is stricter)."""
    if isinstance(guard, dict):
        return float(guard.get(value, -1))
    if guard == "higher":
        return float(value)
    if guard == "lower":
        return -float(value)
    raise ValueError(guard)


def stricter(guard, a, b) -> bool:
    """Whether value a is strictly stricter than b."""
    if guard in (COMMAND, OUTBOUND):
        return False
    if guard == "subset":
        return set(a) < set(b)
    return rank(guard, a) > rank(guard, b)


def looser(guard, a, b) -> bool:
    """Whether value a is looser than b (where a needs trust over b)."""
    if guard == COMMAND:
        return bool(a)
    if guard == OUTBOUND:
        return a is not None and a != b
    if guard == "subset":
        return not set(a) <= set(b)
    return rank(guard, a) < rank(guard, b)


def resolve(guard, own, committed, default, trusted):
    """(the value that holds, whether memcli.yaml's loosening was set aside) of the user's own value,
    memcli.yaml's and the default; ``trusted``: a bool, or a function asked only when it matters."""
    if committed is None:
        return (default if own is None else own), False
    if own is not None:
        return (committed if stricter(guard, committed, own) else own), False
    if not looser(guard, committed, default) or (trusted() if callable(trusted) else trusted):
        return committed, False
    return default, True


LEGACY_TRUST_FILE = ".memcli/trusted"  # where older versions kept trust, inside the root: never read
EXECUTING_KEYS = tuple(k for k, guard in GUARDS.items() if guard == COMMAND)
OUTBOUND_KEYS = tuple(k for k, guard in GUARDS.items() if guard == OUTBOUND)
COMMAND_ENV = {"session.summarizer": "MEMCLI_SUMMARIZER"}  # the user's own override of a command
PER_FRONT_END = ("write.gate", "write.pii", "write.pii_captured")  # a value, or {front end: value}


def _guarded(key: str, value: object) -> bool:
    """Whether this value of this key, from memcli.yaml, loosens the default (and needs trust)."""
    guard = GUARDS.get(key.rsplit(".", 1)[0] if key.startswith("write.gate.") else key)
    if guard is None or value is None:
        return False
    if key in GATE_KEYS:
        return any(looser(guard, g, "direct") for g in (value.values() if isinstance(value, dict) else [value]))
    if key in PER_FRONT_END:
        default = PII_DEFAULTS[key == "write.pii_captured"]
        return any(looser(guard, front_end_value({key: value}, key, d) or default, default) for d in PII_DOORS)
    return looser(guard, value, SCHEMA[key][0])


def is_trusted(root: Path) -> bool:
    """Whether memcli.yaml is byte for byte the file `memcli trust` recorded (outside the root)."""
    from . import trust as records

    return records.check(root)[0]


def trust(root: Path) -> dict:
    """Record, outside the root, memcli.yaml as it is now, and the files its commands name."""
    from . import trust as records
    from .dates import utcnow

    path = root / "memcli.yaml"
    digest = records.digest(path)
    if digest is None:
        raise ConfigError("memcli.yaml: no such file to trust")
    load = read_file(path, "memcli.yaml")
    commands = {k: load[k] for k in EXECUTING_KEYS if load.get(k)}
    files: dict = {}
    for key, command in commands.items():
        try:
            files.update(records.named_files(root, [command]))
        except ValueError as e:
            raise ConfigError(f"memcli.yaml's {key} cannot be trusted: {_unanalysable(command, e)}") from None
    where = records.record_trust(root, digest, utcnow(), files)
    return {
        "path": "memcli.yaml",
        "sha256": digest,
        "record": str(where),
        "commands": commands,
        "files": files,
        "loosens": {k: v for k, v in load.items() if k not in EXECUTING_KEYS and _guarded(k, v)},
    }


def trusted_setting(
    root: Path,
    key: str,
    committed=None,
    user=None,
    local=None,
    *,
    root_commands: bool = True,
    trusted: bool | None = None,
) -> tuple[object, str | None]:
    """The one rule for a setting in GUARDS: (its value, None for the default; a warning). The user's own
    value is MEMCLI_*, else .memcli/config.yaml, else the user's file; ``root_commands=False`` (the
    hook) takes no command from the root's files."""
    guard = GUARDS[key]
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
        why = _runs_other_files(root, key, str(value))
        if why:
            return None, why
    if not set_aside:
        return (None if value == default and key in EXECUTING_KEYS + OUTBOUND_KEYS else value), None
    what, done = (
        WHAT[guard] if guard in (COMMAND, OUTBOUND) else ("looser than the default", f"the default {default} applies")
    )
    legacy = (
        f" ({LEGACY_TRUST_FILE}, which older versions wrote inside the root, is no longer read)"
        if (root / LEGACY_TRUST_FILE).exists()
        else ""
    )
    return None, (
        f"memcli.yaml sets {key}: {committed}, {what}, and was not trusted on this machine: "
        f"{done}{legacy} (review the file, then `memcli trust`)"
    )


def _unanalysable(command: str, why: object) -> str:
    return (
        f"`{command}` holds {why}, so what it runs cannot be recorded (name the files it runs, e.g. "
        "`sh tools/summarize.sh`, or set it in your own ~/.config/memcli/config.yaml or .memcli/config.yaml)"
    )


def _runs_other_files(root: Path, key: str, command: str) -> str | None:
    """Why a trusted command is not run (it cannot be analysed, or a file it names changed); None: it may."""
    from . import trust as records

    try:
        now = records.named_files(root, [command])
    except ValueError as e:
        return f"memcli.yaml's {key} is not run: {_unanalysable(command, e)}"
    recorded = records.check(root)[1]
    rel = next((w for w, d in now.items() if w not in recorded or recorded[w] != d), None)
    if rel is None:
        return None
    how = "not recorded then" if rel not in recorded else "added" if recorded[rel] is None else "changed or relinked"
    return (
        f"memcli.yaml's {key} runs {rel}, which changed since `memcli trust` ({how}): not run "
        "(review it, then `memcli trust` again)"
    )


def _per_front_end(key: str, committed: dict, own: dict, warnings: list, trusted) -> dict:
    """write.gate (and write.gate.FRONT_END), write.pii or write.pii_captured: {front end: value}."""
    gate = key == "write.gate"
    default = "direct" if gate else PII_DEFAULTS[key == "write.pii_captured"]
    out, loosened = {}, []
    for door in FRONT_ENDS if gate else PII_DOORS:
        c = front_end_value(committed, key, door)
        out[door], aside = resolve(GUARDS[key], front_end_value(own, key, door), c, default, trusted)
        if aside:
            loosened.append(f"{door}: {c}")
    if loosened:
        than, held = ("yours", "inbox holds") if gate else (f"the default {default}", f"{default} applies")
        warnings.append(
            f"memcli.yaml sets {key} looser than {than} ({', '.join(loosened)}) and was not trusted "
            f"on this machine: {held} (review the file, then `memcli trust`)"
        )
    return out


def _read_local(root: Path, warnings: list) -> dict:
    """The root's .memcli/config.yaml, unless git tracks it (then it came with the repository;
    git is asked only when the index changed: ``store.committed_state``)."""
    path = root / LOCAL_CONFIG
    if not path.is_file():
        return {}
    from .store.committed_state import came_with_git

    if came_with_git(root, path):
        warnings.append(
            f"{LOCAL_CONFIG} is tracked by git, so it came with the repository: not read "
            "(stop tracking it: `git rm -r --cached .memcli`)"
        )
        return {}
    return read_file(path, LOCAL_CONFIG)


def load_config(root: Path, *, root_commands: bool = True) -> Config:
    """memcli.yaml, then the user's file, then .memcli/config.yaml, each overriding the one before, a
    setting in GUARDS by ``trusted_setting``; ``root_commands=False``: none from the root's files."""
    path = root / "memcli.yaml"
    if path.is_symlink():
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            raise ConfigError("memcli.yaml leads outside the memory root (a symlink?); not read") from None
    committed = read_file(path, "memcli.yaml")
    user_path = user_config_path()
    user = read_file(user_path, str(user_path)) if user_path.is_file() else {}
    warnings: list = []
    local = _read_local(root, warnings)
    values = {**committed, **user, **local}
    guarded = GUARDS if committed or user or local else {}
    own = {**user, **local}

    @functools.cache
    def trusted() -> bool:  # asked at most once, and only when memcli.yaml loosens something
        return is_trusted(root)

    for key in guarded:
        if key in PER_FRONT_END:
            given = [k for k in values if k == key or k.startswith(key + ".")]  # write.gate.cli too
            if given:
                for k in given:
                    values.pop(k)
                values[key] = _per_front_end(key, committed, own, warnings, trusted)
            continue
        c = committed.get(key)
        t = trusted() if c is not None and _guarded(key, c) else None
        value, warning = trusted_setting(
            root, key, c, user.get(key), local.get(key), root_commands=root_commands, trusted=t
        )
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
        if warning:
            warnings.append(warning)
    for key, var in COMMAND_ENV.items():
        if env(var) and key not in values:
            values[key] = env(var)
    exists = path.exists() or path.is_symlink()
    return Config(values, path if exists else None, tuple(warnings))
