"""`memory(root)`: a Memory with the whole per-root API (recall, context, session, scope, audit)
for the front ends that need it, built on today's modules. Locks and configuration are taken
exactly as the command line takes them."""

from __future__ import annotations

import os


def memory(root: str | os.PathLike):
    """The Memory for a root that exists (`config.find_root` has found it)."""
    from .core import Memory

    return _Memory(Memory(root))


class _Memory:
    def __init__(self, core):
        self._core = core

    def __getattr__(self, name):
        return getattr(self._core, name)

    def recall(self, query, *, limit=None, deep=False, layer=None, session="default", scope="default",
               threshold=None, now=None):
        from .recall import recall

        return recall(self._core, query, session=session, scope=scope, limit=limit, deep=deep, layer=layer,
                      threshold=threshold, now=now)

    def should_recall(self, text) -> dict:
        from .recall import known_names, should_recall

        c = self._core.config
        return should_recall(text, c["recall.signals.explicit"], c["recall.signals.implicit"], known_names(self._core))

    def context(self, query=None, *, budget=None, session="default", scope="default") -> dict:
        from .context import build
        from .errors import UsageError

        budget = 2000 if budget is None else int(budget)
        if budget < 50:
            raise UsageError("--budget must be at least 50 tokens")
        return build(self._core, query, budget, session, scope)

    def session(self, name="default"):
        return _Session(self._core, name)

    def scope(self, name="default"):
        return _Scope(self._core, name)

    def audit(self):
        from .heartbeat import audit

        return audit(self._core)


def _now():
    from .core import utcnow

    return utcnow()


class _Session:
    def __init__(self, core, name):
        self.core, self.name = core, name

    def add(self, role, text) -> dict:
        from .store import session

        c = self.core.config
        with self.core.lock():
            return session.add(self.core.root, self.name, role, text, _now(), max_rounds=int(c["session.max_rounds"]),
                               summarizer=c["session.summarizer"], timeout=c.seconds("session.summarizer_timeout"),
                               limit=int(c["session.max_summary_chars"]))

    def show(self) -> dict:
        from .store import session

        return session.load(self.core.root, self.name)

    def clear(self) -> dict:
        from .store import session

        with self.core.lock():
            return session.clear(self.core.root, self.name, _now())


class _Scope:
    def __init__(self, core, name):
        self.core, self.name = core, name

    def _load(self):
        from .store import scope

        return scope.load(self.core.root, self.name)

    def start(self, task) -> dict:
        from .store import scope

        with self.core.lock():
            return scope.start(self.core.root, self.name, task, _now())

    def set(self, key, value, agent, force=False) -> dict:
        from .errors import UsageError
        from .store import scope

        if not agent or not agent.strip():
            raise UsageError("scope set needs --agent NAME")
        with self.core.lock():
            return scope.set_key(self.core.root, self.name, key, value, agent, _now(), force)

    def get(self, key):
        item = ((self._load() or {}).get("keys") or {}).get(key)
        return None if item is None else {"key": key, **item}

    def read(self, agent, keys) -> dict:
        data = self._load() or {"keys": {}}
        return {"agent": agent or None, "keys": {k: data["keys"][k]["value"] for k in keys if k in data["keys"]},
                "missing": [k for k in keys if k not in data["keys"]]}

    def show(self):
        return self._load()

    def check(self) -> dict:
        from .store import scope

        return scope.check(self._load())

    def end(self) -> dict:
        from .store import scope

        with self.core.lock():
            return scope.end(self.core.root, self.name, _now())
