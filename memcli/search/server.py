"""The semantic step held by `memcli serve` (``memcli.serve``): one memory root's embedding model and
vectors, kept in memory, answering the requests of ``remote`` (the protocol and the client)."""

from __future__ import annotations


from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

    from memcli.search.semantic import EmbeddingCache


class Server:
    """Answers the semantic requests of one root, holding the model and the vectors."""

    def __init__(self, root) -> None:
        self.store = root  # a store.Root
        self._cache: EmbeddingCache | None = None
        self._dirty = True  # the vectors may be out of date: compare every file before answering
        self._observer: BaseObserver | None = None

    def preload(self) -> None:
        """Load the bundled model now, so the first request does not wait for it."""
        from memcli.search import semantic

        if semantic.provider_for(self.store).name == "use":
            from memcli.search import embed

            embed.load()

    def watch(self) -> bool:
        """Follow writes to memory/ so a request stats the files only after one; False (and
        a full check on every request) when the folder cannot be watched."""
        if self._observer is not None:
            return True
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            return False
        server = self

        class Changes(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.event_type not in ("opened", "closed_no_write"):
                    server._dirty = True

        try:
            folder = self.store.memory_dir()
            observer = Observer()
            observer.schedule(Changes(), str(folder), recursive=False)
            observer.daemon = True
            observer.start()
        except (OSError, RuntimeError, ValueError):
            return False
        self._observer = observer
        return True

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "search":
            from memcli.search import semantic

            self.watch()
            if self._cache is None:
                self._cache = semantic.cache_for(self.store)
            current = self._observer is not None and not self._dirty
            self._dirty = self._observer is None  # a write from now on marks it again
            try:
                hits = semantic.search_local(
                    self.store,
                    str(request["query"]),
                    semantic.as_triples(request["lexical"]),
                    int(request.get("limit") or 5),
                    cache=self._cache,
                    current=current,
                    best=request.get("best") is True,
                )
            except BaseException:
                self._dirty = True
                raise
            return {"ok": True, "hits": [[k, s, list(m)] for k, s, m in hits]}
        return {"ok": False, "error": f"unknown op {op!r}"}
