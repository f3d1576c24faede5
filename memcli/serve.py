"""A resident process that keeps the embedding model loaded for one memory root.

    python -m memcli.serve [--root PATH]

A cold process spends most of a semantic recall loading numpy and the model; this one loads
them once and answers the semantic step over a unix socket named after the root's real path,
in a folder only this user can enter: ``$XDG_RUNTIME_DIR/memcli/``, else the user's cache
(``$XDG_CACHE_HOME/memcli/run/`` or ``~/.cache/memcli/run/``), else, when that path is too long
for a socket, ``memcli-<uid>/`` in the temp folder. The folder must belong to this user with
no access for others, and the socket too, or neither side uses it: another local user can
neither answer in the server's place nor block it. Each request is one JSON line, each answer
one JSON line:

    {"op": "ping"}                                     -> {"ok": true, "root": ..., "pid": ...}
    {"op": "search", "query": q, "lexical": [[key, relevance], ...] or null (fetched by the server),
     "limit": n, "threshold": t, "fill": false}
                                                       -> {"ok": true, "hits": [[key, score, methods], ...]}

``ask`` is the client: it returns None when no server answers (none running, a stale socket,
a timeout, a malformed answer, a hit that is not a ``memory/**/*.md`` key), and the caller
does the work itself. It imports neither numpy nor the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
from pathlib import Path

CONNECT_TIMEOUT = 0.2
ANSWER_TIMEOUT = 30.0  # a first request may embed every memory of a large root
MAX_LINE = 16 * 1024 * 1024
_UNIX_PATH_MAX = 100


def _folders() -> list[Path]:
    """Where sockets may live, in order of preference."""
    out = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        out.append(Path(runtime) / "memcli")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    out.append(Path(cache) / "memcli" / "run")
    import tempfile

    out.append(Path(tempfile.gettempdir()) / f"memcli-{os.getuid()}")
    return out


def socket_path(root: str | os.PathLike) -> Path:
    """The socket of this root's server: named after the root's real path, in the first private
    folder whose socket path the system accepts."""
    name = hashlib.sha256(os.fsencode(os.path.realpath(os.fspath(root)))).hexdigest()[:16] + ".sock"
    folders = _folders()
    for folder in folders:
        path = folder / name
        if len(os.fsencode(str(path))) <= _UNIX_PATH_MAX:
            return path
    return folders[-1] / name


def private_folder(folder: Path, create: bool = False) -> str | None:
    """None when folder is a real folder of this user that no one else may enter; else why not.
    ``create`` makes it (mode 0700), and tightens the mode of one this user owns."""
    if create:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            return f"cannot create it ({e.strerror or e})"
    try:
        st = os.lstat(folder)
    except OSError:
        return "it does not exist"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder (a symlink?)"
    if st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        if not create:
            return f"others may enter it (mode {stat.S_IMODE(st.st_mode):o})"
        os.chmod(folder, 0o700)
    return None


def _own_socket(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid()


def memory_key(key) -> bool:
    """Whether a server's hit names a memory: a relative `memory/**/*.md` path that stays there."""
    if not isinstance(key, str) or not key.startswith("memory/") or not key.endswith(".md"):
        return False
    parts = key.split("/")
    return not ("\\" in key or any(p in ("", ".", "..") for p in parts)
                or any(ord(c) < 32 or ord(c) == 127 for c in key))


def _hits_ok(answer: dict) -> bool:
    hits = answer.get("hits")
    if not isinstance(hits, list):
        return False
    for h in hits:
        if not (isinstance(h, list) and len(h) == 3 and memory_key(h[0])
                and isinstance(h[1], (int, float)) and not isinstance(h[1], bool)
                and isinstance(h[2], list) and all(isinstance(m, str) for m in h[2])):
            return False
    return True


def _read_line(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while True:
        data = conn.recv(65536)
        if not data:
            break
        chunks.append(data)
        size += len(data)
        if data.endswith(b"\n") or size > MAX_LINE:
            break
    return b"".join(chunks)


def ask(root: str | os.PathLike, request: dict, timeout: float = ANSWER_TIMEOUT) -> dict | None:
    """Send one request to the server of ``root``; None when no server answers properly."""
    path = socket_path(root)
    if private_folder(path.parent) is not None or not _own_socket(path):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
            conn.settimeout(timeout)
            conn.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
            answer = json.loads(_read_line(conn).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(answer, dict) or not answer.get("ok"):
        return None
    if request.get("op") == "search" and not _hits_ok(answer):
        return None
    return answer


class Server:
    """Answers requests for one root, one at a time, holding the model and the vectors."""

    def __init__(self, root: str | os.PathLike) -> None:
        from memcli.core import Memory

        self.mem = Memory(root)
        self.path = socket_path(self.mem.root)
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
            folder = self.mem.memory_dir()
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
            return {"ok": True, "root": str(self.mem.root), "pid": os.getpid()}
        if op == "search":
            from memcli.search import semantic

            if self._cache is None:
                self._cache = semantic.cache_for(self.mem)
            if request.get("lexical") is None:  # fetched here, from a search cache kept open
                from memcli.search.cache import SearchCache
                from memcli.store.fs import state_dir

                if self._search is None:
                    self._search = SearchCache(state_dir(self.mem.root, "search"))
                lexical = semantic._pairs(semantic.lexical_candidates(self.mem, str(request["query"]),
                                                                       cache=self._search))
            else:
                lexical = [(str(x[0]), float(x[1]), bool(x[2]) if len(x) > 2 else True) for x in request["lexical"]]
            current = self._observer is not None and not self._dirty
            self._dirty = self._observer is None  # a write from now on marks it again
            try:
                hits = semantic.search_local(self.mem, str(request["query"]), lexical, int(request.get("limit") or 5),
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
        if ask(self.mem.root, {"op": "ping"}, timeout=2.0) is not None:
            raise RuntimeError(f"a server already answers for {self.mem.root} at {self.path}")
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

            if semantic.provider_for(self.mem).name == "use":  # the bundled model, loaded once here
                from memcli.search import embed

                embed.load()
        self.watch()
        try:
            while True:
                conn, _ = sock.accept()
                with conn:
                    try:
                        conn.settimeout(10.0)
                        request = json.loads(_read_line(conn).decode("utf-8"))
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


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m memcli.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=None, help="the memory root (default: found as memcli finds it)")
    args = parser.parse_args(argv)
    from memcli.config import find_root
    from memcli.errors import MemcliError

    try:
        server = Server(find_root(args.root))
        sock = server.bind()
    except (MemcliError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"serving {server.mem.root} on {server.path}", file=sys.stderr, flush=True)
    try:
        server.serve(sock)
    except KeyboardInterrupt:
        pass
    return 0


def _stop(*_) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, _stop)  # a terminated server removes its socket too
    raise SystemExit(main())
