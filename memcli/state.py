"""A root's short-term state: `Memory.session(name)` and `Memory.scope(name)`.

Each write takes the root lock itself and reads its own configuration, so a Python caller
gets the same guarantees as the command line. Every method returns a plain dict.
"""

from __future__ import annotations

from .errors import UsageError
from .textcheck import check_text_field


def _noted(result: dict, notes: list) -> dict:
    """A result whose "warning" also says what personal data was masked or kept."""
    if notes:
        result["warning"] = "; ".join(w for w in (result.get("warning"), *notes) if w)
    return result


def _now(now: str | None) -> str:
    from .core import utcnow

    return now or utcnow()


class Session:
    """Recent turns plus a summary of older ones (.memcli/sessions/<name>.json)."""

    def __init__(self, mem, name: str = "default"):
        self.mem = mem
        self.name = name

    def add(self, role: str, text: str, now: str | None = None, *, via: str | None = None) -> dict:
        """Add a turn; beyond session.max_rounds the oldest turns are folded into the summary.
        The result's "warning" is set when the configured summarizer failed. A fold starts a
        reflection in the background under reflect.on_fold (`via="hook"`: the offline engine only)."""
        res = self._add(role, text, now)
        if res.get("folded") and self.mem.config["reflect.on_fold"]:
            from .usecases.reflect import trigger

            trigger(self.mem, via)
        return res

    def _add(self, role: str, text: str, now: str | None = None) -> dict:
        """The turn added and the fold made (see add).

        A configured summarizer (a command, which may be slow) runs without the root lock: the
        turn is saved first, the turns to fold are summarized unlocked, and the fold is applied
        under the lock only if those turns and the summary are still what was summarized; when
        another writer changed them meanwhile, the fold is planned again (the turn stays saved)."""
        check_text_field(text, "turn")
        text = self.mem.scan({"turn": text})[0]["turn"]  # turns are folded into memory/episodes/
        masked, notes = self.mem.mask({"turn": text}, captured=True)  # personal data: write.pii_captured
        return _noted(self._append(role, masked["turn"], now), notes)

    def _append(self, role: str, text: str, now: str | None) -> dict:
        from .store import session

        cfg = self.mem.config
        now = _now(now)
        max_rounds, command = int(cfg["session.max_rounds"]), cfg["session.summarizer"]
        timeout, limit = cfg.seconds("session.summarizer_timeout"), int(cfg["session.max_summary_chars"])
        session.check_turn(role, text)
        with self.mem.lock():
            if not command:
                return session.add(self.mem.root, self.name, role, text, now, max_rounds=max_rounds,
                                   summarizer=None, timeout=timeout, limit=limit)
            data, moved = session.load_for_write(self.mem.root, self.name)
            data["turns"].append({"role": role, "text": text, "time": now})
            data["updated"] = now
            n = session.to_fold(data["turns"], max_rounds)
            if not n:
                episode, folded = session.fold(self.mem.root, self.name, data, 0, "", now)
                return session.result(self.name, data, folded, episode, moved)
            session.save(self.mem.root, data)
        why = None
        for _ in range(3):
            previous, turns = data.get("summary", ""), data["turns"][:n]
            summary, why = session.summarize(command, timeout, previous, turns, limit)
            with self.mem.lock():
                data = session.load_or_skip(self.mem.root, self.name)[0]
                if data.get("summary", "") == previous and data["turns"][:n] == turns:
                    episode, folded = session.fold(self.mem.root, self.name, data, n, summary, now)
                    return session.result(self.name, data, folded, episode, moved, why)
                n = session.to_fold(data["turns"], max_rounds)
                if not n:  # another writer folded these turns meanwhile
                    return session.result(self.name, data, [], None, moved, why)
        # Still changing after three tries: the turns stay as they are; the next turn folds them.
        return session.result(self.name, data, [], None, moved, why)

    def show(self) -> dict:
        """The session; a broken file gives an empty one with a "warning"."""
        from .store import session

        data, warning = session.load_or_skip(self.mem.root, self.name)
        return {**data, "warning": warning} if warning else data

    def clear(self, now: str | None = None) -> dict:
        """End the session; its turns and summary go to the episode log first."""
        from .store import session

        with self.mem.lock():
            return session.clear(self.mem.root, self.name, _now(now))


class Scope:
    """The current task's shared keys, each owned by the agent that wrote it (.memcli/scopes/<name>.json)."""

    def __init__(self, mem, name: str = "default"):
        self.mem = mem
        self.name = name

    def _load(self) -> dict | None:
        from .store import scope

        return scope.load(self.mem.root, self.name)

    def start(self, task: str, now: str | None = None) -> dict:
        """Start a task; an unended scope of the same name is moved to the episode log first."""
        from .store import scope

        check_text_field(task, "task")
        task = self.mem.scan({"task": task})[0]["task"]  # a scope's state is archived to memory/episodes/
        masked, notes = self.mem.mask({"task": task}, captured=True)
        with self.mem.lock():
            return _noted(scope.start(self.mem.root, self.name, masked["task"], _now(now)), notes)

    def set(self, key: str, value: str, agent: str, force: bool = False, now: str | None = None) -> dict:
        """Write a key as `agent`; another agent's key raises CollisionError unless force."""
        from .store import scope

        if not agent or not agent.strip():
            raise UsageError("scope set needs --agent NAME")
        check_text_field(key, "key", name=True)
        check_text_field(agent, "agent name", name=True)
        # The scope's state is archived to memory/episodes/: its keys, values and agents are scanned.
        fields = self.mem.scan({"key": key, "value": value, "agent name": agent})[0]
        fields, notes = self.mem.mask(fields, captured=True)
        key, value, agent = fields["key"], fields["value"], fields["agent name"]
        with self.mem.lock():
            return _noted(scope.set_key(self.mem.root, self.name, key, value, agent, _now(now), force), notes)

    def get(self, key: str) -> dict:
        """{"key", "value", "agent", ...}; the value is None when the key is not set."""
        item = ((self._load() or {}).get("keys") or {}).get(key)
        return {"key": key, "value": None} if item is None else {"key": key, **item}

    def read(self, agent: str | None, keys) -> dict:
        """Only the keys an agent asks for: {"agent", "keys": {key: value}, "missing": [...]}."""
        data = (self._load() or {}).get("keys") or {}
        return {"agent": agent or None, "keys": {k: data[k]["value"] for k in keys if k in data},
                "missing": [k for k in keys if k not in data]}

    def show(self) -> dict | None:
        """The whole scope (task, keys, owners, log), or None when it is not started."""
        return self._load()

    def check(self) -> dict:
        """Collisions and keys written by several agents."""
        from .store import scope

        return scope.check(self._load())

    def end(self, now: str | None = None) -> dict:
        """Clear the scope; its final state goes to the episode log (and, under reflect.on_fold, a
        reflection starts in the background)."""
        from .store import scope

        with self.mem.lock():
            res = scope.end(self.mem.root, self.name, _now(now))
        if self.mem.config["reflect.on_fold"]:
            from .usecases.reflect import trigger

            trigger(self.mem)
        return res
