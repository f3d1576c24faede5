"""The client side of the resident path (docs/serve.md is the protocol's page): which socket a
root's `memcli serve` listens on, who may answer (a folder and a socket of this user's, and on
Linux a peer of this user's), the frames, and one exchange. Besides this module the client imports
``memcli.roots`` and ``memcli.xdg``, and ``socket`` once a socket is there."""

from __future__ import annotations

import os
import sys
from .xdg import VARIABLES, runtime

CONNECT_WAIT = 0.5  # seconds to connect (a unix socket connects at once, or not at all)
READY_WAIT = 2.0  # seconds a busy server may take to say whether it runs a request
MAX_FRAME = 64 * 1024 * 1024
_UNIX_PATH_MAX = 100  # bytes of a socket's path that every system accepts
IDLE_EXIT = 600.0  # seconds: how long a server a command started waits for a request before it exits

# The commands a server runs, and after which a command run in its own process starts one.
PER_TURN = ("recall", "should-recall", "context", "session add", "scope set", "remember", "hook claude-code")
# What a client sends of its environment: every MEMCLI_* variable and these. The server hands on
# the root's and the session's names as values, and declines a client whose others differ from its own.
SETTINGS = ("CLAUDE_CODE_SESSION_ID", *VARIABLES)


def _temp_folder() -> str:
    tmp = os.environ.get("TMPDIR")
    return os.path.join(tmp if tmp and os.path.isabs(tmp) else "/tmp", f"memcli-{os.getuid()}")


def socket_path(root: str) -> str:
    """The socket of the server of a root (given as its real path), named by two checksums of the
    path (zlib's: hashlib would load OpenSSL, milliseconds a turn need not pay; a name two roots
    share makes the second one's commands run in their own process, as its server cannot start)."""
    import zlib

    real = os.fsencode(root)
    name = f"{zlib.crc32(real):08x}{zlib.adler32(real):08x}.sock"
    path = os.path.join(runtime() or _temp_folder(), name)
    if len(os.fsencode(path)) > _UNIX_PATH_MAX:
        path = os.path.join(_temp_folder(), name)
    return path


def private_folder(folder: str, create: bool = False) -> str | None:
    """None when folder is a real folder of this user's no one else may enter, else why not
    (``create``: make it 0700, or tighten it)."""
    if create:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as e:
            return f"cannot create it ({e.strerror or e})"
    try:
        st = os.lstat(folder)
    except OSError:
        return "it does not exist"
    if st.st_mode & 0o170000 != 0o040000:
        return "it is not a folder (a symlink?)"
    if st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        if not create:
            return f"others may enter it (mode {st.st_mode & 0o777:o})"
        os.chmod(folder, 0o700)
    return None


def own_socket(path: str) -> bool:
    """Whether path is a socket of this user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_mode & 0o170000 == 0o140000 and st.st_uid == os.getuid()


def peer_uid(conn) -> int | None:
    """The user id of the peer of a unix socket (SO_PEERCRED); None where the system does not say."""
    import socket

    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    cred = conn.getsockopt(socket.SOL_SOCKET, opt, 12)  # struct ucred: pid, uid, gid
    return int.from_bytes(cred[4:8], sys.byteorder)


def pack(*fields: bytes) -> bytes:
    """Fields as one byte string: each one its length in decimal, a colon, its bytes."""
    return b"".join(b"%d:%b" % (len(f), f) for f in fields)


def unpack(data: bytes) -> list[bytes] | None:
    """The fields of ``pack``; None when data is not made of them."""
    out, i, n = [], 0, len(data)
    while i < n:
        j = data.find(b":", i, i + 12)
        if j <= i or not data[i:j].isdigit():
            return None
        end = j + 1 + int(data[i:j])
        if end > n:
            return None
        out.append(data[j + 1 : end])
        i = end
    return out


def send(conn, *fields: bytes) -> None:
    """One frame: its length in ten decimal digits, then its fields."""
    body = pack(*fields)
    conn.sendall(b"%010d%b" % (len(body), body))


def _exactly(conn, size: int) -> bytes | None:
    chunks = []
    while size:
        data = conn.recv(min(size, 1 << 20))
        if not data:
            return None
        chunks.append(data)
        size -= len(data)
    return b"".join(chunks)


def receive(conn) -> list[bytes] | None:
    """One frame's fields; None at the end of the stream or for a malformed frame."""
    head = _exactly(conn, 10)
    if head is None or not head.isdigit() or int(head) > MAX_FRAME:
        return None
    body = _exactly(conn, int(head))
    return None if body is None else unpack(body)


def stamp() -> bytes:
    """Which memcli this is (package folder, sys.prefix, Python version): a server answers only its own."""
    return os.fsencode(f"{os.path.dirname(os.path.abspath(__file__))}\0{sys.prefix}\0{sys.hexversion}")


def settings() -> dict[str, str]:
    """What a client sends of its environment (``SETTINGS``)."""
    return {k: v for k, v in os.environ.items() if k.startswith("MEMCLI_") or k in SETTINGS}


def connect(root: str, wait: float = CONNECT_WAIT):
    """A connection to the server of root, or None: none runs, or it is not this user's."""
    path = socket_path(root)
    if private_folder(os.path.dirname(path)) is not None or not own_socket(path):
        return None
    import socket

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(wait)
        conn.connect(path)
        if peer_uid(conn) not in (None, os.getuid()):
            raise OSError("the server runs as another user")
    except OSError:
        conn.close()
        return None
    return conn


class Lost(Exception):
    """The server took the request and stopped before answering: the command may have run."""


def _tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _root_option(args: list) -> str | None:
    """The first --root of a command line (before a `--`): which server to ask."""
    for i, a in enumerate(args):
        if a == "--":
            return None
        if a == "--root" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--root="):
            return a[len("--root=") :]
    return None


def offer(args: list) -> tuple[int | None, bytes | None]:
    """Offer a command line to its root's server: (exit code, None) when it ran it; else (None, what
    was read of stdin), and this process runs it."""
    if mode() == "off" or _tty(sys.stdout) or _tty(sys.stderr) or "_MEMCLI_COMPLETE" in os.environ:
        return None, None
    from .roots import find

    root = find(_root_option(args))[0]
    conn = None if root is None else connect(root)
    if conn is None:
        return None, None
    data = None
    try:
        conn.settimeout(READY_WAIT)
        mask = os.umask(0o022)
        os.umask(mask)
        env = settings()
        send(
            conn,
            b"run",
            stamp(),
            os.fsencode(root),  # type: ignore[arg-type]
            os.fsencode(os.getcwd()),
            b"%d" % mask,
            pack(*map(os.fsencode, args)),
            pack(*(os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items())),
            pack(*map(os.fsencode, sys.path)),
        )
        reply, data = _reply(conn, data)
        if reply != [b"ready"]:  # declined (or gone) before the command acted: it runs here
            conn.close()
            return None, data
        send(conn, b"go")
    except OSError:
        conn.close()
        return None, data
    try:
        conn.settimeout(None)  # committed: the command takes as long as it takes
        answer = _reply(conn, data)[0]
    except OSError:
        answer = None
    finally:
        conn.close()
    return _written(root, answer), None  # type: ignore[arg-type]


def _reply(conn, data: bytes | None) -> tuple[list | None, bytes | None]:
    """The server's next frame that is not a need, each need answered first; what stdin gave."""
    while True:
        reply = receive(conn)
        if not reply or reply[0] != b"need":
            return reply, data
        data = _answer(conn, reply, data)


def _answer(conn, need: list, data: bytes | None) -> bytes | None:
    """Give the server what the command reads: stdin (read once) or a variable of the environment."""
    if need[1:] == [b"stdin"]:
        if data is None:
            data = sys.stdin.buffer.read()
        send(conn, b"stdin", data)
    elif len(need) == 3 and need[1] == b"env":
        value = os.environ.get(os.fsdecode(need[2]))
        send(conn, b"env", b"0" if value is None else b"1" + os.fsencode(value))
    return data


def _written(root: str, answer: list | None) -> int:
    """Write what the server's run wrote, in order; its exit code. Lost when it went away."""
    if not answer or answer[0] != b"done" or len(answer) != 3 or not answer[1].lstrip(b"-").isdigit():
        raise Lost(root)
    events = unpack(answer[2])
    if events is None:
        raise Lost(root)
    for e in events:
        if e[:1] not in (b"1", b"2"):
            raise Lost(root)
        (sys.stdout if e[:1] == b"1" else sys.stderr).write(e[1:].decode("utf-8", "surrogatepass"))
    return int(answer[1])


def mode() -> str:
    """MEMCLI_SERVE: "off" (no resident path), "manual" (ask a server, start none), else "auto"."""
    if not hasattr(os, "getuid"):  # no unix sockets of one user's own (Windows): no resident path
        return "off"
    value = os.environ.get("MEMCLI_SERVE", "").strip().lower()
    return value if value in ("off", "manual") else "auto"


def start(root: str, idle: float = IDLE_EXIT) -> bool:
    """Start a server for root in the background (`python -I -m memcli --root ROOT serve`) unless one
    listens; False when none was started."""
    if mode() != "auto":
        return False
    conn = connect(root)
    if conn is not None:  # one is listening (it may have declined a request: it stays)
        conn.close()
        return False
    from .procs import module_command, spawn_detached

    try:
        spawn_detached(module_command("memcli", "--root", root, "serve", "--idle-exit", f"{idle:g}s"), cwd="/")
    except OSError:
        return False
    return True
