"""A root's short-term state: `Memory.session(name)` and `Memory.scope(name)`.

Each write takes the root lock itself and reads its own configuration, so a Python caller
gets the same guarantees as the command line. Every method returns a Result: a dict of data,
with what went wrong on the way (a broken file set aside, a summarizer that failed) in its
warnings.
"""

from __future__ import annotations

from ..dates import utcnow
from ..errors import UsageError
from ..model import Result
from ..safety.writecheck import WriteCheck, mask
from ..safety.text_limits import check_text_field


def _now(now: str | None) -> str:
    return now or utcnow()


def _result(data: dict) -> Result:
    """The store's dict as a Result: its "warning" goes to the warnings."""
    data = dict(data)
    return Result(data, [data.pop("warning", None)])


def _scan(root, fields: dict) -> dict:
    """Text captured into the state (and from there into memory/episodes/), by write.secrets."""
    return WriteCheck(root.config["write.secrets"]).secrets(fields)[0]


class Session:
    """Recent turns plus a summary of older ones (.memcli/sessions/<name>.json)."""

    def __init__(self, root, name: str = "default"):
        self.root = root
        self.name = name

    def add(self, role: str, text: str, now: str | None = None, *, via: str | None = None) -> Result:
        """Add a turn; beyond session.max_rounds the oldest turns are folded into the summary.
        The result's warnings say when the configured summarizer failed or personal data was masked. A fold starts a
        reflection in the background under reflect.on_fold (`via="hook"`: the offline engine only)."""
        res = self._add(role, text, now)
        if res.get("folded") and self.root.config["reflect.on_fold"]:
            from .reflect import trigger

            trigger(self.root, via)
        return res

    def _add(self, role: str, text: str, now: str | None = None) -> Result:
        """The turn added and the fold made (see add).

        A configured summarizer (a command, which may be slow) runs without the root lock: the
        turn is saved first, the turns to fold are summarized unlocked, and the fold is applied
        under the lock only if those turns and the summary are still what was summarized; when
        another writer changed them meanwhile, the fold is planned again (the turn stays saved)."""
        check_text_field(text, "turn")
        text = _scan(self.root, {"turn": text})["turn"]  # turns are folded into memory/episodes/
        masked, notes = mask(self.root, {"turn": text}, captured=True)  # personal data: write.pii_captured
        res = _result(self._append(role, masked["turn"], now))
        res.warnings += notes
        return res

    def _append(self, role: str, text: str, now: str | None) -> dict:
        from ..store import session

        cfg = self.root.config
        now = _now(now)
        max_rounds, command = int(cfg["session.max_rounds"]), cfg["session.summarizer"]
        timeout, limit = cfg.seconds("session.summarizer_timeout"), int(cfg["session.max_summary_chars"])
        session.check_turn(role, text)
        with self.root.lock():
            if not command:
                return session.add(
                    self.root.path,
                    self.name,
                    role,
                    text,
                    now,
                    max_rounds=max_rounds,
                    summarizer=None,
                    timeout=timeout,
                    limit=limit,
                )
            data, moved = session.load_for_write(self.root.path, self.name)
            data["turns"].append({"role": role, "text": text, "time": now})
            data["updated"] = now
            n = session.to_fold(data["turns"], max_rounds)
            if not n:
                episode, folded = session.fold(self.root.path, self.name, data, 0, "", now)
                return session.result(self.name, data, folded, episode, moved)
            session.save(self.root.path, data)
        why = None
        for _ in range(3):
            previous, turns = data.get("summary", ""), data["turns"][:n]
            summary, why = session.summarize(command, timeout, previous, turns, limit, self.root.path)
            with self.root.lock():
                data = session.load_or_skip(self.root.path, self.name)[0]
                if data.get("summary", "") == previous and data["turns"][:n] == turns:
                    episode, folded = session.fold(self.root.path, self.name, data, n, summary, now)
                    return session.result(self.name, data, folded, episode, moved, why)
                n = session.to_fold(data["turns"], max_rounds)
                if not n:  # another writer folded these turns meanwhile
                    return session.result(self.name, data, [], None, moved, why)
        # Still changing after three tries: the turns stay as they are; the next turn folds them.
        return session.result(self.name, data, [], None, moved, why)

    def show(self) -> Result:
        """The session; a broken file gives an empty one, and a warning."""
        from ..store import session

        data, warning = session.load_or_skip(self.root.path, self.name)
        return Result(data, [warning])

    def clear(self, now: str | None = None, *, via: str | None = None) -> Result:
        """End the session; its turns and summary go to the episode log first (and, under
        reflect.on_fold, a reflection starts in the background)."""
        from ..store import session

        with self.root.lock():
            res = _result(session.clear(self.root.path, self.name, _now(now)))
        if res.get("episode") and self.root.config["reflect.on_fold"]:
            from .reflect import trigger

            trigger(self.root, via)
        return res


class Scope:
    """The current task's shared keys, each owned by the agent that wrote it (.memcli/scopes/<name>.json)."""

    def __init__(self, root, name: str = "default"):
        self.root = root
        self.name = name

    def _load(self) -> dict | None:
        from ..store import scope

        return scope.load(self.root.path, self.name)

    def start(self, task: str, now: str | None = None) -> Result:
        """Start a task; an unended scope of the same name is moved to the episode log first."""
        from ..store import scope

        check_text_field(task, "task")
        task = _scan(self.root, {"task": task})["task"]  # a scope's state is archived to memory/episodes/
        masked, notes = mask(self.root, {"task": task}, captured=True)
        with self.root.lock():
            res = _result(scope.start(self.root.path, self.name, masked["task"], _now(now)))
        res.warnings += notes
        return res

    def set(self, key: str, value: str, agent: str, force: bool = False, now: str | None = None) -> Result:
        """Write a key as `agent`; another agent's key raises CollisionError unless force."""
        from ..store import scope

        if not agent or not agent.strip():
            raise UsageError("scope set needs --agent NAME")
        check_text_field(key, "key", name=True)
        check_text_field(agent, "agent name", name=True)
        # The scope's state is archived to memory/episodes/: its keys, values and agents are scanned.
        fields = _scan(self.root, {"key": key, "value": value, "agent name": agent})
        fields, notes = mask(self.root, fields, captured=True)
        key, value, agent = fields["key"], fields["value"], fields["agent name"]
        with self.root.lock():
            res = _result(scope.set_key(self.root.path, self.name, key, value, agent, _now(now), force))
        res.warnings += notes
        return res

    def get(self, key: str) -> Result:
        """{"key", "value", "agent", ...}; the value is None when the key is not set."""
        item = ((self._load() or {}).get("keys") or {}).get(key)
        return Result({"key": key, "value": None} if item is None else {"key": key, **item})

    def read(self, agent: str | None, keys) -> Result:
        """Only the keys an agent asks for: {"agent", "keys": {key: value}, "missing": [...]}."""
        data = (self._load() or {}).get("keys") or {}
        return Result(
            {
                "agent": agent or None,
                "keys": {k: data[k]["value"] for k in keys if k in data},
                "missing": [k for k in keys if k not in data],
            }
        )

    def show(self) -> dict | None:
        """The whole scope (task, keys, owners, log), or None when it is not started."""
        data = self._load()
        return None if data is None else _result(data)

    def check(self) -> Result:
        """Collisions and keys written by several agents."""
        from ..store import scope

        return Result(scope.check(self._load()))

    def end(self, now: str | None = None) -> Result:
        """Clear the scope; its final state goes to the episode log (and, under reflect.on_fold, a
        reflection starts in the background)."""
        from ..store import scope

        with self.root.lock():
            res = _result(scope.end(self.root.path, self.name, _now(now)))
        if self.root.config["reflect.on_fold"]:
            from .reflect import trigger

            trigger(self.root)
        return res
