"""The resident process behind `memcli serve`: one memory root's embedding model and vectors,
held in memory, answering the semantic step over a socket (the protocol and the client are
``remote``'s)."""

from __future__ import annotations

import json
import os
import socket

from .remote import ask, private_folder, read_line, socket_path


class Server:
    """Answers requests for one root, one at a time, holding the model and the vectors."""

    def __init__(self, root) -> None:
        from memcli.store.root import Root

        self.store = root if isinstance(root, Root) else Root(root)
        self.root = self.store.path
        self.path = socket_path(self.root)
        self._cache = None
        self._search = None
        self._dirty = True  # the vectors may be out of date: compare every file before answering
        self._observer = None

    def watch(self) -> bool:
        """Follow writes to memory/ so a request stats the files only after one; False (and
        a full check on every request) when the folder cannot be watched."""
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

    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "ping":
            return {"ok": True, "root": str(self.root), "pid": os.getpid()}
        if op == "search":
            from memcli.search import semantic

            if self._cache is None:
                self._cache = semantic.cache_for(self.store)
            if request.get("lexical") is None:  # fetched here, from a search cache kept open
                from memcli.search.cache import SearchCache
                from memcli.store.layout import SEARCH

                if self._search is None:
                    self._search = SearchCache(self.store.state_dir(SEARCH))
                lexical = semantic.as_triples(semantic.lexical_candidates(self.store, str(request["query"]),
                                                                     cache=self._search))
            else:
                lexical = [(str(x[0]), float(x[1]), bool(x[2]) if len(x) > 2 else True) for x in request["lexical"]]
            current = self._observer is not None and not self._dirty
            self._dirty = self._observer is None  # a write from now on marks it again
            try:
                hits = semantic.search_local(self.store, str(request["query"]), lexical, int(request.get("limit") or 5),
                                             float(request["threshold"]), fill=bool(request.get("fill")),
                                             cache=self._cache, current=current,
                                             rescue=None if request.get("rescue") is None else float(request["rescue"]))
            except BaseException:
                self._dirty = True
                if self._search is not None:
                    self._search.close()
                    self._search = None
                raise
            return {"ok": True, "hits": [[k, s, list(m)] for k, s, m in hits]}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def bind(self) -> socket.socket:
        why = private_folder(self.path.parent, create=True)
        if why is not None:
            raise RuntimeError(f"{self.path.parent} is not a private folder: {why}; no socket is put there")
        if ask(self.root, {"op": "ping"}, timeout=2.0) is not None:
            raise RuntimeError(f"a server already answers for {self.root} at {self.path}")
        try:
            os.unlink(self.path)  # a socket left behind by a server that died
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # only this user may connect
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        sock.listen(16)
        return sock

    def serve(self, sock: socket.socket, preload: bool = True) -> None:
        """Answer requests until interrupted; ``preload`` loads the model before the first."""
        if preload:
            from memcli.search import semantic

            if semantic.provider_for(self.store).name == "use":  # the bundled model, loaded once here
                from memcli.search import embed

                embed.load()
        self.watch()
        try:
            while True:
                conn, _ = sock.accept()
                with conn:
                    try:
                        conn.settimeout(10.0)
                        request = json.loads(read_line(conn).decode("utf-8"))
                        answer = self.handle(request) if isinstance(request, dict) else {"ok": False}
                    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
                        answer = {"ok": False, "error": str(e)}
                    except Exception as e:  # one bad request must not stop the server
                        answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                    try:
                        conn.sendall(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
                    except OSError:
                        pass
        finally:
            if self._observer is not None:
                self._observer.stop()
            sock.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass
