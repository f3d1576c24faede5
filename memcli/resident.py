"""The client side of the resident path: where a root's `memcli serve` listens, who may answer,
and one exchange with it.

A cold process spends most of a per-turn command importing memcli and compiling its patterns. A
`memcli serve` process (``memcli.serve``) has done that once: it runs the same code for each
request, in the client's environment and working folder, and hands back what the command wrote
to stdout and stderr, in order, and its exit code, which the client writes as its own. When no
server answers, the client runs the command itself, the way it always did. This module is all
the client imports beyond ``memcli.cli.argv``: ``os``, ``sys``, the C socket module and ``memcli.xdg``.

Where: one socket per root, named after a hash of the root's real path, in a folder only this
user can enter: ``$XDG_RUNTIME_DIR/memcli/``, else ``memcli-<uid>/`` in the temp folder
(``$TMPDIR``, else ``/tmp``; there too when the first path is too long for a socket). A lock
file beside the socket keeps it to one server per root.

Who: the client uses a socket only when its folder belongs to this user with no access for
anyone else, the socket belongs to this user too, and (on Linux) the process at the other end
runs as this user (SO_PEERCRED); the server answers only peers of its own user. Another local
user can neither answer in a server's place nor be served.

The exchange, in frames (ten decimal digits of length, then fields: ``pack``):

    client -> ["run", stamp, root, cwd, umask, argv, env, sys.path, stdin]
    server -> ["ready"] or ["declined", why]        (checked before anything runs)
    client -> ["go"]                                (a client that gave up sends nothing)
    server -> ["done", exit code, events]           (events: what was written, in order)

The server runs nothing before the client's "go", so a client that gave up waiting (READY_WAIT)
and ran the command itself never sees it run twice. Requests of the semantic step are one frame
``["json", request]`` answered by ``["json", answer]`` (``memcli.search.remote``).
"""

from __future__ import annotations

import os
import sys

CONNECT_WAIT = 0.5  # seconds to connect (a unix socket connects at once, or not at all)
READY_WAIT = 2.0  # seconds a busy server may take to say whether it runs a request
MAX_FRAME = 64 * 1024 * 1024
_UNIX_PATH_MAX = 100  # bytes of a socket's path that every system accepts
IDLE_EXIT = 600.0  # seconds: how long a server the hook started waits for a request before it exits


# ---------------------------------------------------------------- where


def runtime_folder() -> str:
    """The folder of this user's sockets: $XDG_RUNTIME_DIR/memcli, else the temp folder's
    memcli-<uid>."""
    from .xdg import runtime

    return runtime() or _temp_folder()


def _temp_folder() -> str:
    tmp = os.environ.get("TMPDIR")
    return os.path.join(tmp if tmp and os.path.isabs(tmp) else "/tmp", f"memcli-{os.getuid()}")


def socket_path(root: str) -> str:
    """The socket of the server of a root (given as its real path)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the module: hashlib has the same function
        from hashlib import blake2b
    name = blake2b(os.fsencode(root), digest_size=8).hexdigest() + ".sock"
    path = os.path.join(runtime_folder(), name)
    if len(os.fsencode(path)) > _UNIX_PATH_MAX:
        path = os.path.join(_temp_folder(), name)
    return path


def private_folder(folder: str, create: bool = False) -> str | None:
    """None when folder is a real folder of this user that no one else may enter; else why not.
    ``create`` makes it (mode 0700) and tightens the mode of one this user owns."""
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
    """The user id of the process at the other end of a unix socket (SO_PEERCRED), None where the
    system does not say (there the folder's and the socket's owner are the check)."""
    import _socket

    opt = getattr(_socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    cred = conn.getsockopt(_socket.SOL_SOCKET, opt, 12)  # struct ucred: pid, uid, gid
    return int.from_bytes(cred[4:8], sys.byteorder)


# ---------------------------------------------------------------- frames


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


# ---------------------------------------------------------------- the client


def stamp() -> bytes:
    """Which memcli this process runs: its package folder, its environment (sys.prefix: the
    venv) and its Python version. A server answers only a client of the same (and only while its
    files are as they were when it started)."""
    return os.fsencode(f"{os.path.dirname(os.path.abspath(__file__))}\0{sys.prefix}\0{sys.hexversion}")


def connect(root: str, wait: float = CONNECT_WAIT):
    """A connection to the server of root (its real path), or None: none runs, or the folder, the
    socket or the process answering is not this user's."""
    path = socket_path(root)
    if private_folder(os.path.dirname(path)) is not None or not own_socket(path):
        return None
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(wait)
        conn.connect(path)
        uid = peer_uid(conn)
        if uid is not None and uid != os.getuid():
            conn.close()
            return None
    except OSError:
        conn.close()
        return None
    return conn


class Lost(Exception):
    """The server took the request and stopped before answering: the command may have run."""


def run(root: str, argv: list, stdin: bytes | None) -> tuple[int, list] | None:
    """Have the server of root run a command line: (exit code, [(stream, text or None)...]), the
    stream 1 or 2 and None for a flush; None when no server runs it (the caller runs it).
    Raises Lost when the server took it and went away."""
    conn = connect(root)
    if conn is None:
        return None
    try:
        conn.settimeout(READY_WAIT)
        mask = os.umask(0o022)
        os.umask(mask)
        send(
            conn,
            b"run",
            stamp(),
            os.fsencode(root),
            os.fsencode(os.getcwd()),
            b"%d" % mask,
            pack(*map(os.fsencode, argv)),
            pack(*(os.fsencode(k) + b"=" + os.fsencode(v) for k, v in os.environ.items())),
            pack(*map(os.fsencode, sys.path)),
            b"" if stdin is None else b"1" + stdin,
        )
        reply = receive(conn)
        if not reply or reply[0] != b"ready":
            return None
        send(conn, b"go")
    except OSError:
        conn.close()
        return None
    try:
        conn.settimeout(None)  # committed: the command takes as long as it takes
        answer = receive(conn)
    except OSError:
        answer = None
    finally:
        conn.close()
    if not answer or answer[0] != b"done" or len(answer) != 3 or not answer[1].lstrip(b"-").isdigit():
        raise Lost(root)
    events = unpack(answer[2])
    if events is None:
        raise Lost(root)
    out = []
    for e in events:
        kind, text = e[:1], e[1:]
        if kind not in (b"1", b"2", b"F", b"G"):
            raise Lost(root)
        out.append(
            (1 if kind in (b"1", b"F") else 2, None if kind in (b"F", b"G") else text.decode("utf-8", "surrogatepass"))
        )
    return int(answer[1]), out


def find_root(explicit: str | None) -> str | None:
    """Which root's server to ask: the real path of --root, else of MEMCLI_ROOT, else of the
    nearest folder above the working one with MEMORY.md or memcli.yaml (the way memcli finds a
    root; the server checks the command resolves to its own root before it runs anything)."""
    given = explicit or os.environ.get("MEMCLI_ROOT")
    if given:
        return os.path.realpath(os.path.expanduser(given))
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return None
    while True:
        if os.path.isfile(os.path.join(here, "MEMORY.md")) or os.path.isfile(os.path.join(here, "memcli.yaml")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def mode() -> str:
    """MEMCLI_SERVE: "off" (no resident path: never ask a server, the hook starts none), "manual"
    (ask a running server, start none), else "auto" (the hook starts one for its root)."""
    if not hasattr(os, "getuid"):  # no unix sockets of one user's own (Windows): no resident path
        return "off"
    value = os.environ.get("MEMCLI_SERVE", "").strip().lower()
    return value if value in ("off", "manual") else "auto"


# A process that is itself the server (memcli.serve) sets this: it never asks or starts one.
serving = False


def start(root: str, idle: float = IDLE_EXIT) -> bool:
    """Start a server for root in the background unless one is listening already (or starting):
    `python -I -m memcli.serve --root ROOT --idle-exit SECONDS`, in its own session, working
    in /, with no terminal. False when none was started."""
    if serving or mode() != "auto":
        return False
    conn = connect(root)
    if conn is not None:  # one is listening (it may have declined a request: it stays)
        conn.close()
        return False
    from .procs import module_command, spawn_detached

    try:
        spawn_detached(module_command("memcli.serve", "--root", root, "--idle-exit", f"{idle:g}"), cwd="/")
    except OSError:
        return False
    return True
