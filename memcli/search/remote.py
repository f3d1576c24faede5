"""The semantic step over a socket: a resident process (`memcli serve`, ``search.server``) keeps
the embedding model loaded for one memory root, and a recall asks it (``ask``) instead of loading it.

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
from pathlib import Path

from ..store.layout import MEMORY

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
    if not isinstance(key, str) or not key.startswith(MEMORY + "/") or not key.endswith(".md"):
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


def read_line(conn: socket.socket) -> bytes:
    """One JSON line of the protocol (at most MAX_LINE bytes)."""
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
            answer = json.loads(read_line(conn).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(answer, dict) or not answer.get("ok"):
        return None
    if request.get("op") == "search" and not _hits_ok(answer):
        return None
    return answer
