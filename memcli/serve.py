"""`memcli serve` (and `python -I -m memcli.serve --root PATH [--idle-exit SECONDS]`, what the hook
starts): one process per memory root that keeps memcli loaded, runs its clients' per-turn
commands (``memcli.resident`` is the client and the protocol) and holds the semantic extra's
model for the semantic step (``search.server``).

A request is run by the same code a cold process runs (``memcli.cli.answer``), in the client's
environment, working folder and umask, its stdout and stderr recorded in the order written; so
it reads the root's files as a cold process would, and sees what an editor, git or another
process changed. It runs only when nothing could make its output differ from the client's own:
the same memcli (package folder, version, interpreter; its files unchanged on disk since the
server started), the same root (resolved in the client's environment by the same code), the
same umask, and the same plugins (none failed). Otherwise the client is told no and runs the
command itself.
"""

from __future__ import annotations

import io
import os
import sys
import time
import traceback

from . import resident

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_CHECK_EVERY = 2.0  # seconds between checks, while idle, that the socket and the root are still there
# Seconds after a command that wrote, or after the kernel said the details layer's files changed
# (whoever changed them), before the server brings the search cache up to date (``Resident.prepare``):
# the client is gone by then, and the next turn seconds away.
PREPARE_AFTER = 0.05


class _Recorder:
    """A text stream that records what is written to it, for the client to write in turn."""

    def __init__(self, events: list, write: bytes, flush: bytes, encoding: str = "utf-8"):
        self.events, self._write, self._flush = events, write, flush
        self.encoding, self.errors = encoding, "strict"

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self.events.append(self._write + text.encode("utf-8", "surrogatepass"))
        return len(text)

    def flush(self) -> None:
        self.events.append(self._flush)

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


def _code_files() -> dict:
    """path -> (mtime, ctime, size) of memcli's own files: a server whose code changed on disk (an
    upgrade, an edit) no longer answers for it."""
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
    """Whether a file of ``_code_files`` changed or went (an upgrade rewrites them all): a stat
    each, not a walk of the package."""
    return any(_times(path) != was for path, was in code.items())


class Resident:
    """The server of one root: ``bind``, then ``serve`` until stopped or idle."""

    def __init__(self, memory, idle: float | None = None):
        self.memory = memory
        self.root = os.path.realpath(memory.root)
        self.path = resident.socket_path(self.root)
        self.idle = idle
        self.stamp = resident.stamp()
        self.code = _code_files()
        from .frontend import watch_changes

        # the folders of memcli's own files, followed by the kernel: no stat per request
        self.code_watch = watch_changes(sorted({os.path.dirname(p) for p in self.code}))
        mask = os.umask(0o022)
        os.umask(mask)
        self.umask = mask
        self.semantic = None
        self.followed: Any = None  # memcli.core.follow_files: the details layer's files, followed
        from .frontend import plugins

        plugins()  # found now, in the server's own environment (a request compares its client's)
        self.served = 0
        self.stopping = False
        self._busy = False
        self._lock: int | None = None
        self._inode: int | None = None
        self._prepare: tuple | None = None  # (environment, working folder, when): a prepare due
        self._last: tuple | None = None  # (environment, working folder) of the last request run

    # ---------------------------------------------------------------- start and stop
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
        from .frontend import semantic_available

        if semantic_available():
            self._semantic().preload()

    def bind(self):
        """The listening socket (the lock taken first: ``lock``)."""
        import socket

        if self._lock is None:
            self.lock()
        try:
            os.unlink(self.path)  # a socket left behind by a server that died
        except FileNotFoundError:
            pass
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
        try:
            if os.lstat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass
        if self.semantic is not None:
            self.semantic.close()
        if self.followed is not None:
            self.followed.close()
        if self.code_watch is not None:
            self.code_watch.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def stop(self) -> None:
        """Stop after the request being answered (now, when none is)."""
        self.stopping = True
        if not self._busy:
            raise KeyboardInterrupt

    def prepare(self) -> None:
        """PREPARE_AFTER seconds after a command that wrote or a change of the details layer's
        files (a turn folded into the episode log, a new memory, an edit, a pull), between
        requests: do in the last client's environment and working folder what the next details
        recall would do first, so the next turn does not wait for it."""
        if self._prepare is None:
            return
        environ, cwd, _ = self._prepare
        self._prepare = None
        self._busy = True
        try:
            if self.followed is not None:
                # the kernel's queue read first, whatever the prepare needs: a change made while it
                # runs leaves the queue readable, and the next prepare is due
                self.followed.detail_files()
            with _Client(environ, cwd) as client:
                if client.error is None:
                    client.prepare(self.memory.root)
        finally:
            self._busy = False

    def _due(self) -> None:
        if self._prepare is None and self._last is not None:
            self._prepare = (*self._last, time.monotonic() + PREPARE_AFTER)

    def _still_here(self) -> bool:
        try:
            return os.lstat(self.path).st_ino == self._inode and os.path.isdir(self.root)
        except OSError:
            return False

    def serve(self, sock) -> str:
        """Answer requests until stopped (KeyboardInterrupt), idle for ``idle`` seconds, or the
        socket or the root is gone; returns why it stopped."""
        import select
        import socket

        from .frontend import answer_semantic_here, follow_files

        resident.serving = True
        answer_semantic_here(self.root, self._semantic_request)
        self.followed = follow_files(self.memory.root)
        last = time.monotonic()
        try:
            while not self.stopping:
                wait = _CHECK_EVERY
                if self._prepare is not None:
                    left = self._prepare[2] - time.monotonic()
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
                # the details layer's files, followed once a request gave an environment to prepare in
                follow = self.followed if self._prepare is None and self._last is not None else None
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

    # ---------------------------------------------------------------- one connection
    def _connection(self, conn) -> None:
        import socket

        try:
            peer = (
                conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12) if hasattr(socket, "SO_PEERCRED") else None
            )
            if peer is not None and int.from_bytes(peer[4:8], sys.byteorder) != os.getuid():
                return  # never another user's
            conn.settimeout(resident.READY_WAIT)  # a client sends its request as soon as it connects
            request = resident.receive(conn)
            if not request:
                return
            if request[0] == b"json" and len(request) == 2:
                self._json(conn, request[1])
            elif request[0] == b"run" and len(request) == 9:
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
        _, stamp, root, cwd, umask, argv, env, path, stdin = request
        args = [os.fsdecode(a) for a in resident.unpack(argv) or ()]
        environ = {}
        for item in resident.unpack(env) or ():
            key, sep, value = item.partition(b"=")
            if sep:
                environ[os.fsdecode(key)] = os.fsdecode(value)
        data = stdin[1:] if stdin[:1] == b"1" else None
        with _Client(environ, os.fsdecode(cwd)) as client:
            why = client.error or self._declines(
                stamp, os.fsdecode(root), umask, args, data, [os.fsdecode(p) for p in resident.unpack(path) or ()]
            )
            if why is not None:
                resident.send(conn, b"declined", why.encode("utf-8", "replace"))
                return
            resident.send(conn, b"ready")
            conn.settimeout(READY_WAIT_GO)
            if resident.receive(conn) != [b"go"]:
                return  # the client gave up and runs it itself
            code, events = client.run(args, data)
        self.served += 1
        resident.send(conn, b"done", b"%d" % code, resident.pack(*events))
        from .cli.hot import writes

        self._last = (environ, os.fsdecode(cwd))
        if writes(args):  # where the files are not followed, the command line says it
            self._due()

    def _declines(
        self, stamp: bytes, root: str, umask: bytes, args: list, data: bytes | None, sys_path: list
    ) -> str | None:
        """Why this server does not run the request (None: it runs it), checked in the client's
        environment and working folder before anything runs."""
        if stamp != self.stamp:
            return "another memcli"
        if self.code_watch() if self.code_watch is not None else _code_changed(self.code):
            self.stopping = True  # its code changed on disk: the next server runs the new code
            return "memcli changed on disk"
        if root != self.root:
            return "another root"
        if umask != b"%d" % self.umask:
            return "another umask"
        from .cli.hot import runs_here

        if not runs_here(args):
            return "not a per-turn command"
        from .frontend import plugins_match

        if not plugins_match(sys_path, os.getcwd()):
            return "other plugins"
        target = _target(args, data)
        if target != self.root:
            return "the command is for another root" if target else "no root"
        return None


READY_WAIT_GO = resident.READY_WAIT + 1.0  # how long the server waits for the client's go


def _target(args: list, data: bytes | None) -> str | None:
    """The real path of the root a command line would use here, None when it would fail to find one."""
    from . import hooks
    from .cli import argv
    from .cli.hot import hook_root_option
    from .frontend import find_root
    from .errors import MemcliError

    line = argv.parse(args)
    hook = hook_root_option(args, line)
    if hook is not None:
        return None if data is None else hooks.target(data, hook[0])
    try:
        return os.path.realpath(find_root(line.value("root") or None))
    except MemcliError:
        return None


class _Client:
    """The client's environment and working folder, in place while its request is checked and run."""

    def __init__(self, environ: dict, cwd: str):
        self.environ, self.cwd = environ, cwd
        self.error: str | None = None

    def __enter__(self):
        self._saved = dict(os.environ), sys.stdin, sys.stdout, sys.stderr
        _become(self.environ)
        try:
            os.chdir(self.cwd)
        except OSError:
            self.error = "its working folder cannot be entered"
        return self

    def run(self, args: list, data: bytes | None) -> tuple[int, list]:
        from .cli.hot import answer

        events: list = []
        sys.stdout = _Recorder(events, b"1", b"F", self.environ.get("PYTHONIOENCODING") or "utf-8")
        sys.stderr = _Recorder(events, b"2", b"G", self.environ.get("PYTHONIOENCODING") or "utf-8")
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        try:
            code = answer(args, None if data is None else io.BytesIO(data))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        except Exception:  # a bug: its traceback, as the client's own process would print it
            sys.stderr.write(traceback.format_exc())
            code = 1
        return (1 if code is None else code), events

    def prepare(self, root) -> None:
        """Bring the search cache up to date, as the next details recall would first."""
        from .core import Memory

        try:
            Memory.find(root).prepare_recall()
        except Exception:  # a cache: whatever fails here, the next recall meets it itself and says so
            pass

    def __exit__(self, *exc):
        environ, sys.stdin, sys.stdout, sys.stderr = self._saved
        _become(environ)
        os.chdir("/")
        return False


def _become(environ: dict) -> None:
    """Make os.environ equal environ, touching only the variables that differ."""
    for key in [k for k in os.environ if k not in environ]:
        del os.environ[key]
    for key, value in environ.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def main(argv: list | None = None) -> int:
    """`python -I -m memcli.serve --root PATH [--idle-exit SECONDS]`."""
    import argparse

    from .core import Memory
    from .errors import MemcliError

    parser = argparse.ArgumentParser(prog="python -I -m memcli.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=None, help="the memory root (default: found as memcli finds it)")
    parser.add_argument(
        "--idle-exit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="exit after this many seconds without a request",
    )
    args = parser.parse_args(argv)
    try:
        server = Resident(Memory.find(args.root), idle=args.idle_exit)
        os.chdir("/")  # a fixed working folder: nothing here depends on where it was started
        server.lock()
        server.preload()
        sock = server.bind()
    except (MemcliError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"serving {server.root} on {server.path}", file=sys.stderr, flush=True)
    import signal

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    server.serve(sock)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
