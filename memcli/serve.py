"""`memcli serve`: one process per root that keeps memcli loaded, runs its clients' per-turn
commands (through the Typer app, given the client's values as a ``cli.boundary.Call``; its own
environment, working folder and streams are never touched) and holds the semantic extra's model.
What declines a request, and what it keeps between requests, is docs/serve.md's."""

from __future__ import annotations

import io
import os
import time
import traceback
from contextlib import suppress
from typing import Any

from . import resident

_CHECK_EVERY = 2.0  # seconds between checks, while idle, that the socket and the root are still there
# Seconds after a command that wrote, or a change of the details layer's files, before the search
# cache is brought up to date (``Resident.prepare``): the client is gone by then.
PREPARE_AFTER = 0.05
READ_ONLY = ("recall", "should-recall", "context")  # the per-turn commands that write nothing
# The environment's settings a server hands on as values; any other it compares with its own.
HANDED_ON = ("MEMCLI_ROOT", "MEMCLI_SESSION", "MEMCLI_SCOPE", "MEMCLI_SERVE", "CLAUDE_CODE_SESSION_ID")


class Declined(Exception):
    """The server does not run this request (before it acted): the client runs it itself."""


class _Recorder(io.TextIOBase):
    """A text stream recording what is written to it (``stream``: b"1" stdout, b"2" stderr)."""

    def __init__(self, events: list, stream: bytes):
        self.events, self.stream = events, stream

    def write(self, text: str) -> int:
        if text:
            self.events.append(self.stream + text.encode("utf-8", "surrogatepass"))
        return len(text)


def _code_files() -> dict:
    """path -> (mtime, ctime, size) of memcli's own files: a server whose code changed no longer answers."""
    base = os.path.dirname(os.path.abspath(resident.__file__))
    out = {}
    for folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".json")):
                path = os.path.join(folder, name)
                out[path] = _times(path)
    return out


def _times(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size


def _code_changed(code: dict) -> bool:
    """Whether a file of ``_code_files`` changed or went (a stat each, not a walk)."""
    return any(_times(path) != was for path, was in code.items())


def _folders(root: str) -> tuple | None:
    """(device, inode) of the root and of its memory/ folder: which folders they are now."""
    try:
        return tuple((st.st_dev, st.st_ino) for st in (os.stat(root), os.stat(os.path.join(root, "memory"))))
    except OSError:
        return None


class Resident:
    """The server of one root: ``bind``, then ``serve`` until stopped or idle."""

    def __init__(self, memory, idle: float | None = None):
        from .plugins import installed
        from .store.watcher import changed

        self.memory = memory
        self.root = os.path.realpath(memory.root)
        self.path = resident.socket_path(self.root)
        self.idle = idle
        self.stamp = resident.stamp()
        self.code = _code_files()
        # the folders of memcli's own files, followed by the kernel: no stat per request
        self.code_watch = changed(sorted({os.path.dirname(p) for p in self.code}))
        self.umask = os.umask(0o022)  # read by setting it, then put back
        os.umask(self.umask)
        self.semantic = None
        self.followed: Any = None  # store.watcher.Followed: the details layer's files, followed
        self.folders = _folders(self.root)  # the root and memory/ the files are followed in
        installed()  # the plugins, found now in the server's own environment (a request compares its client's)
        self.served = 0
        self.stopping = False
        self._busy = False
        self._lock: int | None = None
        self._inode: int | None = None
        self._prepare: float | None = None  # when a prepare is due
        self._asked = False  # a client has been served: the details layer's files are worth preparing

    def lock(self) -> None:
        """Take this root's server lock (one server per root); RuntimeError when another has it."""
        import fcntl

        folder = os.path.dirname(self.path)
        why = resident.private_folder(folder, create=True)
        if why is not None:
            raise RuntimeError(f"{folder} is not a private folder: {why}; no socket is put there")
        fd = os.open(self.path[: -len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RuntimeError(f"a server already answers for {self.root} at {self.path}") from None
        self._lock = fd

    def preload(self) -> None:
        """With the semantic extra: load the model now, so the first recall does not wait for it."""
        from .search.semantic import enabled

        if enabled():
            self._semantic().preload()

    def bind(self):
        """The listening socket (the lock taken first: ``lock``)."""
        import socket

        if self._lock is None:
            self.lock()
        with suppress(FileNotFoundError):
            os.unlink(self.path)  # a socket left behind by a server that died
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # only this user may connect
        try:
            sock.bind(self.path)
        finally:
            os.umask(old)
        sock.listen(64)
        self._inode = os.lstat(self.path).st_ino
        return sock

    def close(self, sock) -> None:
        sock.close()
        with suppress(OSError):
            if os.lstat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        for held in (self.semantic, self.followed, self.code_watch):
            if held is not None:
                held.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def stop(self) -> None:
        """Stop after the request being answered (now, when none is)."""
        self.stopping = True
        if not self._busy:
            raise KeyboardInterrupt

    def follow(self) -> None:
        """Follow the details layer's files of the root as its folders are now."""
        from .store.watcher import follow

        if self.followed is not None:
            self.followed.close()
        self.folders = _folders(self.root)
        self.followed = follow(self.memory.root)

    def prepare(self) -> None:
        """Between requests, do what the next details recall would do first."""
        from .core import Memory

        self._prepare = None
        self._busy = True
        try:
            if self.followed is not None:
                self.followed.detail_files()  # read first: a change made during the prepare is due next
            Memory(self.root).prepare_recall()
        except Exception:  # a cache: whatever fails here, the next recall meets it itself and says so
            pass
        finally:
            self._busy = False

    def _due(self) -> None:
        if self._prepare is None:
            self._prepare = time.monotonic() + PREPARE_AFTER

    def _still_here(self) -> bool:
        try:
            return os.lstat(self.path).st_ino == self._inode and os.path.isdir(self.root)
        except OSError:
            return False

    def serve(self, sock) -> str:
        """Answer requests until stopped, idle, or the socket or the root is gone; why it stopped."""
        import select
        import socket

        from .search.remote import answer_here

        answer_here(self.root, self._semantic_request)
        self.follow()
        last = time.monotonic()
        try:
            while not self.stopping:
                wait = _CHECK_EVERY
                if self._prepare is not None:
                    left = self._prepare - time.monotonic()
                    if left <= 0:
                        self.prepare()
                        continue
                    wait = min(wait, left)
                if self.idle is not None:
                    left = self.idle - (time.monotonic() - last)
                    if left <= 0:
                        return "idle"
                    wait = min(wait, left)
                sock.settimeout(wait)
                # the details layer's files, followed once a client has been served
                follow = self.followed if self._prepare is None and self._asked else None
                ready = select.select([sock] if follow is None else [sock, follow], [], [], wait)[0]
                if follow is not None and follow in ready:
                    self._due()
                if sock not in ready:
                    if self._prepare is None and not self._still_here():
                        return "gone"
                    continue
                try:
                    conn, _ = sock.accept()
                except socket.timeout:
                    continue
                self._busy = True
                try:
                    with conn:
                        self._connection(conn)
                finally:
                    self._busy = False
                last = time.monotonic()
            return "stopped"
        except KeyboardInterrupt:
            return "stopped"
        finally:
            self.close(sock)

    def _connection(self, conn) -> None:
        try:
            if resident.peer_uid(conn) not in (None, os.getuid()):
                return  # never another user's
            conn.settimeout(resident.READY_WAIT)  # a client sends its request as soon as it connects
            request = resident.receive(conn)
            if not request:
                return
            if request[0] == b"json" and len(request) == 2:
                self._json(conn, request[1])
            elif request[0] == b"run" and len(request) == 8:
                self._run(conn, request)
        except OSError:
            return

    def _semantic(self):
        if self.semantic is None:
            self.semantic = self.memory.semantic_server()
        return self.semantic

    def _semantic_request(self, request: dict) -> dict:
        if request.get("op") == "ping":
            return {
                "ok": True,
                "root": self.root,
                "pid": os.getpid(),
                "served": self.served,
                "preparing": self._prepare is not None,
                "scans": None if self.followed is None else self.followed.scans,
                "cpu": time.process_time(),
            }
        return self._semantic().handle(request)

    def _json(self, conn, body: bytes) -> None:
        import json

        try:
            request = json.loads(body.decode("utf-8"))
            answer = self._semantic_request(request) if isinstance(request, dict) else {"ok": False}
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            answer = {"ok": False, "error": str(e)}
        except Exception as e:  # one bad request must not stop the server
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        resident.send(conn, b"json", json.dumps(answer, ensure_ascii=False).encode("utf-8"))

    def _run(self, conn, request: list) -> None:
        _, stamp, root, cwd, umask, argv, env, path = request
        args = [os.fsdecode(a) for a in resident.unpack(argv) or ()]
        settings = {}
        for item in resident.unpack(env) or ():
            key, sep, value = item.partition(b"=")
            if sep:
                settings[os.fsdecode(key)] = os.fsdecode(value)
        sys_path = [os.fsdecode(p) for p in resident.unpack(path) or ()]
        why = self._declines(stamp, os.fsdecode(root), umask, settings, sys_path, os.fsdecode(cwd))
        if why is None:
            run = _Run(self, conn, settings, os.fsdecode(cwd))
            why, code = run.run(args)
        if why is not None:
            resident.send(conn, b"declined", why.encode("utf-8", "replace"))
            return
        self.served += 1
        resident.send(conn, b"done", b"%d" % code, resident.pack(*run.events))
        self._asked = True
        if run.command not in READ_ONLY:  # where the files are not followed, the command says it wrote
            self._due()

    def _declines(self, stamp: bytes, root: str, umask: bytes, settings: dict, sys_path: list, cwd: str) -> str | None:
        """Why this server does not run the request, checked before anything is parsed; None: it may."""
        from .plugins import same_as_here

        if stamp != self.stamp:
            return "another memcli"
        if self.code_watch() if self.code_watch is not None else _code_changed(self.code):
            self.stopping = True  # its code changed on disk: the next server runs the new code
            return "memcli changed on disk"
        if root != self.root:
            return "another root"
        if umask != b"%d" % self.umask:
            return "another umask"
        names = set(resident.settings()) | set(settings)
        differ = sorted(n for n in names - set(HANDED_ON) if settings.get(n) != os.environ.get(n))
        if differ:
            return f"another environment ({differ[0]})"
        if not os.path.isdir(cwd):
            return "its working folder is gone"
        if not same_as_here(sys_path, cwd):
            return "other plugins"
        if _folders(self.root) != self.folders:
            self.follow()  # the root or memory/ was replaced: its files are followed anew
        return None


class _Run:
    """One request run by the Typer app for the client's values; the command asks ``admit`` before it acts."""

    def __init__(self, server: Resident, conn, settings: dict, cwd: str):
        from .cli.boundary import Call
        from .render import Output

        self.server, self.conn, self.settings = server, conn, settings
        self.events: list = []
        self.command: str | None = None
        self.stdin: bytes | None = None
        out = Output(_Recorder(self.events, b"1"), _Recorder(self.events, b"2"))
        self.call = Call(out, self.read, settings, cwd, self.admit)

    def ask(self, *what: bytes) -> list:
        resident.send(self.conn, b"need", *what)
        reply = resident.receive(self.conn)
        if not reply or reply[0] != what[0] or len(reply) != 2:
            raise Declined("the client went away")
        return reply

    def read(self) -> bytes:
        """The client's stdin, asked for the first time the command reads it."""
        if self.stdin is None:
            self.stdin = self.ask(b"stdin")[1]
            return self.stdin
        data, self.stdin = self.stdin, b""
        return data

    def admit(self, command: str, root) -> None:
        """Before the command acts: decline what this server does not run, else ready, go."""
        if command not in resident.PER_TURN:
            raise Declined("not a per-turn command")
        key = self.server.memory.config["embed.key_env"]  # the embedding service's key: the client's too?
        if key and key not in self.settings:
            have = self.ask(b"env", os.fsencode(key))[1]
            if (os.fsdecode(have[1:]) if have[:1] == b"1" else None) != os.environ.get(key):
                raise Declined(f"another environment ({key})")
        target = root()
        if target != self.server.root:
            raise Declined("the command is for another root" if target else "no root")
        resident.send(self.conn, b"ready")
        self.conn.settimeout(resident.READY_WAIT + 1.0)
        if resident.receive(self.conn) != [b"go"]:
            raise Declined("the client gave up")  # it runs the command itself
        self.conn.settimeout(None)
        self.command = command

    def run(self, args: list) -> tuple[str | None, int]:
        """(why the server declines, None) or (None, the exit code)."""
        from .cli.boundary import run_app
        from .cli.typer_app import command

        try:
            code = run_app(command(), args, self.call)
        except Declined as e:
            return str(e), 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        except Exception:  # a bug: its traceback, as the client's own process would print it
            if self.command is None:
                return "the command failed before it ran", 0
            self.call.out.stderr.write(traceback.format_exc())
            code = 1
        if self.command is None:
            return "no per-turn command acted", 0  # help, a usage error, the version, a hook without a root
        return None, code
