"""A root's short-term state: `Memory.session(name)` and `Memory.scope(name)`. Each write takes the
root lock and reads its own configuration, so a Python caller gets the command line's guarantees."""

from __future__ import annotations

from ..dates import utcnow
from ..errors import UsageError
from ..model import Result
from ..safety.text_limits import check_text_field
from ..safety.writecheck import WriteCheck, mask
from ..store import scope, session


def _result(data: dict) -> Result:
    """The store's dict as a Result: its "warning" goes to the warnings."""
    data = dict(data)
    return Result(data, [data.pop("warning", None)])


def _captured(root, fields: dict) -> tuple[dict, list]:
    """Text captured into the state, and from there into memory/episodes/: secrets by write.secrets,
    personal data by write.pii_captured; (the fields, what was masked)."""
    return mask(root, WriteCheck(root.config["write.secrets"]).secrets(fields)[0], captured=True)


def _reflect(root, via: str | None = None) -> None:
    """A reflection in the background under reflect.on_fold (via "hook": the offline engine only);
    reflect is imported only then."""
    if root.config["reflect.on_fold"]:
        from .reflect import trigger

        trigger(root, via)


class Session:
    """Recent turns plus a summary of older ones (.memcli/sessions/<name>.json)."""

    def __init__(self, root, name: str = "default"):
        self.root = root
        self.name = name

    def add(self, role: str, text: str, now: str | None = None, *, via: str | None = None) -> Result:
        """Add a turn; beyond session.max_rounds the oldest turns are folded into the summary (and a
        reflection starts in the background under reflect.on_fold)."""
        check_text_field(text, "turn")
        fields, notes = _captured(self.root, {"turn": text})
        res = _result(self._append(role, fields["turn"], now or utcnow()))
        res.warnings += notes
        if res.get("folded"):
            _reflect(self.root, via)
        return res

    def _append(self, role: str, text: str, now: str) -> dict:
        """The turn added and the fold made. A summarizer command runs without the lock: the turn is saved
        first, and the fold applied only if the turns summarized are still there (else planned again)."""
        cfg = self.root.config
        command, limit = cfg["session.summarizer"], int(cfg["session.max_summary_chars"])
        kw = {"max_rounds": int(cfg["session.max_rounds"]), "timeout": cfg.seconds("session.summarizer_timeout")}
        session.check_turn(role, text)
        with self.root.lock():
            if not command:
                return session.add(self.root.path, self.name, role, text, now, summarizer=None, limit=limit, **kw)
            data, moved = session.load_for_write(self.root.path, self.name)
            data["turns"].append({"role": role, "text": text, "time": now})
            data["updated"] = now
            n = session.to_fold(data["turns"], kw["max_rounds"])
            if not n:
                episode, folded = session.fold(self.root.path, self.name, data, 0, "", now)
                return session.result(self.name, data, folded, episode, moved)
            session.save(self.root.path, data)
        why = None
        for _ in range(3):
            previous, turns = data.get("summary", ""), data["turns"][:n]
            summary, why = session.summarize(command, kw["timeout"], previous, turns, limit, self.root.path)
            with self.root.lock():
                data = session.load_or_skip(self.root.path, self.name)[0]
                if data.get("summary", "") == previous and data["turns"][:n] == turns:
                    episode, folded = session.fold(self.root.path, self.name, data, n, summary, now)
                    return session.result(self.name, data, folded, episode, moved, why)
                n = session.to_fold(data["turns"], kw["max_rounds"])
                if not n:  # another writer folded these turns meanwhile
                    return session.result(self.name, data, [], None, moved, why)
        # Still changing after three tries: the turns stay as they are; the next turn folds them.
        return session.result(self.name, data, [], None, moved, why)

    def show(self) -> Result:
        """The session; a broken file gives an empty one, and a warning."""
        data, warning = session.load_or_skip(self.root.path, self.name)
        return Result(data, [warning])

    def clear(self, now: str | None = None, *, via: str | None = None) -> Result:
        """End the session; its turns and summary go to the episode log first (and, under
        reflect.on_fold, a reflection starts in the background)."""
        with self.root.lock():
            res = _result(session.clear(self.root.path, self.name, now or utcnow()))
        if res.get("episode"):
            _reflect(self.root, via)
        return res


class Scope:
    """The current task's shared keys, each owned by the agent that wrote it (.memcli/scopes/<name>.json)."""

    def __init__(self, root, name: str = "default"):
        self.root = root
        self.name = name

    def start(self, task: str, now: str | None = None) -> Result:
        """Start a task; an unended scope of the same name is moved to the episode log first."""
        check_text_field(task, "task")
        fields, notes = _captured(self.root, {"task": task})
        with self.root.lock():
            res = _result(scope.start(self.root.path, self.name, fields["task"], now or utcnow()))
        res.warnings += notes
        return res

    def set(self, key: str, value: str, agent: str, force: bool = False, now: str | None = None) -> Result:
        """Write a key as `agent`; another agent's key raises CollisionError unless force."""
        if not agent or not agent.strip():
            raise UsageError("scope set needs --agent NAME")
        check_text_field(key, "key", name=True)
        check_text_field(agent, "agent name", name=True)
        fields, notes = _captured(self.root, {"key": key, "value": value, "agent name": agent})
        key, value, agent = fields["key"], fields["value"], fields["agent name"]
        with self.root.lock():
            res = _result(scope.set_key(self.root.path, self.name, key, value, agent, now or utcnow(), force))
        res.warnings += notes
        return res

    def get(self, key: str) -> Result:
        """{"key", "value", "agent", ...}; the value is None when the key is not set."""
        item = ((scope.load(self.root.path, self.name) or {}).get("keys") or {}).get(key)
        return Result({"key": key, "value": None} if item is None else {"key": key, **item})

    def read(self, agent: str | None, keys) -> Result:
        """Only the keys an agent asks for: {"agent", "keys": {key: value}, "missing": [...]}."""
        data = (scope.load(self.root.path, self.name) or {}).get("keys") or {}
        said = {k: data[k]["value"] for k in keys if k in data}
        return Result({"agent": agent or None, "keys": said, "missing": [k for k in keys if k not in data]})

    def show(self) -> dict | None:
        """The whole scope (task, keys, owners, log), or None when it is not started."""
        data = scope.load(self.root.path, self.name)
        return None if data is None else _result(data)

    def check(self) -> Result:
        """Collisions and keys written by several agents."""
        return Result(scope.check(scope.load(self.root.path, self.name)))

    def end(self, now: str | None = None) -> Result:
        """Clear the scope; its final state goes to the episode log (and, under reflect.on_fold, a
        reflection starts in the background)."""
        with self.root.lock():
            res = _result(scope.end(self.root.path, self.name, now or utcnow()))
        if res.get("episode"):
            _reflect(self.root)
        return res
