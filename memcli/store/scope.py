"""The scope layer: the current task's shared keys, with the agent that wrote each one.

A second agent writing a key it does not own is a collision: refused, or with force
overwritten and logged. Every write is recorded, so `scope check` can say who wrote what.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CollisionError, UsageError
from . import episodes
from .fs import atomic_write, atomic_write_many, dump_state, read_state, state_file

MAX_VALUE = 1_000_000


def scope_path(root: Path, name: str) -> Path:
    return state_file(root, "scopes", name)


def short(value: str, n: int = 60) -> str:
    v = " ".join(str(value).split())
    return v if len(v) <= n else v[: n - 1] + "…"


def load(root: Path, name: str) -> dict | None:
    data = read_state(scope_path(root, name), "scope", "move it away or run `memcli scope end`", _check_shape)
    if data is None:
        return None
    data.setdefault("log", [])
    data.setdefault("collisions", [])
    data["name"] = name  # the file's name decides where it is saved, not what the file says
    return data


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
    atomic_write(scope_path(root, data["name"]), dump_state(data))



def start(root: Path, name: str, task: str, now: str) -> dict:
    """Begin a task; an unended previous scope is moved to the episode log first."""
    old = load(root, name)
    moved = None
    data = fresh(name, task, now)
    files = [(scope_path(root, name), dump_state(data))]
    if old is not None:
        log = episodes.appended(root, now, f"scope {name} left open, replaced by a new task",
                                [episodes.json_block(old)])
        moved = episodes.rel(log[0])
        files.insert(0, log)
    # The old state reaches the episode log in the same step as the fresh scope: both or neither.
    atomic_write_many(files)
    return {"scope": name, "task": task, "previous": (old or {}).get("task"), "moved_to": moved,
            "warning": (f"scope {name!r} (task {old.get('task')!r}) was never ended; its state is in {moved}"
                        if old is not None else None)}


def set_key(root: Path, name: str, key: str, value: str, agent: str, now: str, force: bool = False) -> dict:
    if not key.strip() or not agent.strip():
        raise UsageError("a key and an --agent are required")
    if len(value) > MAX_VALUE:
        raise UsageError(f"the value has {len(value)} characters; the limit is {MAX_VALUE}")
    data = load(root, name) or fresh(name, None, now)
    cur = data["keys"].get(key)
    collision = cur is not None and cur["agent"] != agent
    if collision and not force:
        data["collisions"].append({"time": now, "key": key, "owner": cur["agent"], "agent": agent,
                                   "old": short(cur["value"], 200), "new": short(value, 200), "forced": False})
        data["log"].append({"time": now, "agent": agent, "key": key, "action": "refused"})
        save(root, data)
        raise CollisionError(
            f"key {key!r} belongs to agent {cur['agent']!r}: old value {short(cur['value'])!r}, "
            f"{agent!r} tried {short(value)!r}; use another key, or --force to overwrite",
            data={"key": key, "owner": cur["agent"], "agent": agent, "old": short(cur["value"]),
                  "new": short(value)})
    if collision:
        data["collisions"].append({"time": now, "key": key, "owner": cur["agent"], "agent": agent,
                                   "old": short(cur["value"], 200), "new": short(value, 200), "forced": True})
    writers = sorted(set((cur or {}).get("writers", [])) | {agent})
    data["keys"][key] = {"value": value, "agent": agent, "time": now, "writers": writers,
                         "writes": int((cur or {}).get("writes", 0)) + 1}
    data["log"].append({"time": now, "agent": agent, "key": key, "action": "forced" if collision else "set"})
    save(root, data)
    return {"scope": name, "key": key, "agent": agent, "forced": collision,
            "warning": (f"overwrote {key!r} owned by {cur['agent']!r} (logged as a collision)" if collision else None)}


def check(data: dict | None) -> dict:
    if data is None:
        return {"collisions": [], "shared_keys": []}
    shared = [{"key": k, "writers": v.get("writers", [v["agent"]])} for k, v in data["keys"].items()
              if len(v.get("writers", [])) > 1]
    return {"collisions": data["collisions"], "shared_keys": shared}


def end(root: Path, name: str, now: str) -> dict:
    data = load(root, name)
    if data is None:
        return {"scope": name, "ended": False, "episode": None}
    episode = episodes.append(root, now, f"scope {name} ended (task {data.get('task')!r})",
                              [episodes.json_block(data)])
    scope_path(root, name).unlink()
    return {"scope": name, "ended": True, "episode": episode, "keys": len(data["keys"])}
