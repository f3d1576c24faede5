"""The scope layer: the current task's shared keys, with the agent that wrote each one. A second
agent writing a key it does not own is a collision: refused, or with force overwritten and logged;
every write is recorded, so `scope check` can say who wrote what."""

from __future__ import annotations

from pathlib import Path

from ..errors import CollisionError, FileError, UsageError
from ..model import short
from . import episodes
from .fs import atomic_write, atomic_write_many, dump_state, read_state, set_aside, state_file

MAX_VALUE = 100_000  # characters of one value
MAX_BYTES = 4_000_000  # the whole file, well under what a reader accepts
MAX_LOG = 1_000  # the newest entries kept of the write log and of the collisions


def scope_path(root: Path, name: str) -> Path:
    return state_file(root, "scopes", name)


def load(root: Path, name: str) -> dict | None:
    data = read_state(scope_path(root, name), "scope", "`memcli scope end` moves it aside", _check_shape)
    if data is None:
        return None
    data.setdefault("log", [])
    data.setdefault("collisions", [])
    data["name"] = name  # the file's name decides where it is saved, not what the file says
    return data


def load_or_skip(root: Path, name: str) -> tuple[dict | None, str | None]:
    """For readers: (scope, None), or (None, a warning) when the file cannot be read."""
    try:
        return load(root, name), None
    except FileError as e:
        return None, f"{e.message}; skipped"


def load_for_write(root: Path, name: str) -> tuple[dict | None, str | None]:
    """For writers (holding the root lock): a broken file is moved aside (never deleted), as the warning says."""
    try:
        return load(root, name), None
    except FileError as e:
        moved = set_aside(scope_path(root, name))
        return None, f"{e.message.split(';')[0]}; moved it to {moved}"


def _check_shape(data) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("keys"), dict):
        raise ValueError("not a scope object")
    for name in ("log", "collisions"):
        if not isinstance(data.get(name, []), list):
            raise ValueError(f"{name!r} is not a list")
    for v in data["keys"].values():
        if not isinstance(v, dict) or "value" not in v or not isinstance(v.get("agent"), str):
            raise ValueError("a key is not an object with a value and an agent")
        if not isinstance(v.get("writers", []), list) or not isinstance(v.get("writes", 0), int):
            raise ValueError("a key's writers or writes are malformed")
    for c in data.get("collisions", []):
        if not isinstance(c, dict) or not all(k in c for k in ("time", "key", "owner", "agent", "forced")):
            raise ValueError("a collision is not an object with time, key, owner, agent and forced")


def fresh(name: str, task: str | None, now: str) -> dict:
    return {"version": 1, "name": name, "task": task, "started": now, "keys": {}, "log": [], "collisions": []}


def save(root: Path, data: dict) -> None:
    """Write the scope, keeping only the newest MAX_LOG entries of its log and collisions."""
    _trim(data)
    atomic_write(scope_path(root, data["name"]), dump_state(data))


def _trim(data: dict) -> None:
    for k in ("log", "collisions"):
        del data[k][:-MAX_LOG]


def start(root: Path, name: str, task: str, now: str) -> dict:
    """Begin a task; an unended previous scope is moved to the episode log first."""
    old, aside = load_for_write(root, name)
    moved = None
    data = fresh(name, task, now)
    files = [(scope_path(root, name), dump_state(data))]
    if old is not None:
        log = episodes.appended(
            root, now, f"scope {name} left open, replaced by a new task", [episodes.scope_text(old)]
        )
        moved = episodes.rel(log[0])
        files.insert(0, log)
    # The old state reaches the episode log in the same step as the fresh scope: both or neither.
    atomic_write_many(files)
    warning = aside
    if old is not None:
        warning = f"scope {name!r} (task {old.get('task')!r}) was never ended; its state is in {moved}"
    return {"scope": name, "task": task, "previous": (old or {}).get("task"), "moved_to": moved, "warning": warning}


def set_key(root: Path, name: str, key: str, value: str, agent: str, now: str, force: bool = False) -> dict:
    if not key.strip() or not agent.strip():
        raise UsageError("a key and an --agent are required")
    if len(value) > MAX_VALUE:
        raise UsageError(
            f"the value has {len(value)} characters; the limit is {MAX_VALUE} "
            "(put long text in a memory and set its id)"
        )
    data, aside = load_for_write(root, name)
    data = data or fresh(name, None, now)
    cur = data["keys"].get(key)
    collision = cur is not None and cur["agent"] != agent
    if collision:
        data["collisions"].append(
            {
                "time": now,
                "key": key,
                "owner": cur["agent"],
                "agent": agent,
                "old": short(cur["value"], 200),
                "new": short(value, 200),
                "forced": bool(force),
            }
        )
    if collision and not force:
        data["log"].append({"time": now, "agent": agent, "key": key, "action": "refused"})
        save(root, data)
        raise CollisionError(
            f"key {key!r} belongs to agent {cur['agent']!r}: old value {short(cur['value'])!r}, "
            f"{agent!r} tried {short(value)!r}; use another key, or --force to overwrite",
            data={"key": key, "owner": cur["agent"], "agent": agent, "old": short(cur["value"]), "new": short(value)},
        )
    writers = sorted(set((cur or {}).get("writers", [])) | {agent})
    data["keys"][key] = {
        "value": value,
        "agent": agent,
        "time": now,
        "writers": writers,
        "writes": int((cur or {}).get("writes", 0)) + 1,
    }
    data["log"].append({"time": now, "agent": agent, "key": key, "action": "forced" if collision else "set"})
    _trim(data)
    size = len(dump_state(data).encode("utf-8"))
    if size > MAX_BYTES:
        raise UsageError(
            f"scope {name!r} would hold {size} bytes; the limit is {MAX_BYTES}: end the scope or use shorter values"
        )
    save(root, data)
    notes = [aside, f"overwrote {key!r} owned by {cur['agent']!r} (logged as a collision)" if collision else None]
    warning = "; ".join(n for n in notes if n) or None
    return {"scope": name, "key": key, "agent": agent, "forced": collision, "warning": warning}


def check(data: dict | None) -> dict:
    if data is None:
        return {"collisions": [], "shared_keys": []}
    shared = [
        {"key": k, "writers": v.get("writers", [v["agent"]])}
        for k, v in data["keys"].items()
        if len(v.get("writers", [])) > 1
    ]
    return {"collisions": data["collisions"], "shared_keys": shared}


def end(root: Path, name: str, now: str) -> dict:
    """Clear the scope, its final state going to the episode log; a broken file is moved aside."""
    data, aside = load_for_write(root, name)
    if data is None:
        return {"scope": name, "ended": aside is not None, "episode": None, "warning": aside}
    episode = episodes.append(root, now, f"scope {name} ended (task {data.get('task')!r})", [episodes.scope_text(data)])
    scope_path(root, name).unlink()
    return {"scope": name, "ended": True, "episode": episode, "keys": len(data["keys"]), "warning": None}
