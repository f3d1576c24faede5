"""The semantic step over a socket: a running `memcli serve` (``memcli.serve``) keeps the embedding
model loaded for its root, and a recall asks it (``ask``) instead of loading the model itself.

A cold process spends most of a semantic recall loading numpy and the model; the server loads
them once. The socket, its private folder and the checks on both are ``memcli.resident``'s (the
server runs the per-turn commands over the same socket). A request and its answer are each one
JSON document, in one frame ``["json", document]``:

    {"op": "ping"}                                     -> {"ok": true, "root": ..., "pid": ...}
    {"op": "search", "query": q, "lexical": [[key, relevance, evidence], ...], "limit": n, "best": bool}
                                                       -> {"ok": true, "hits": [[key, score, methods], ...]}

``ask`` is the client: it returns None when no server answers (none running, a stale socket, a
timeout, a malformed answer, a hit that is not a ``memory/**/*.md`` key), and the caller does
the work itself. It imports neither numpy nor the model. In the server's own process (a recall
it runs for a client) ``ask`` calls the server's handler directly (``answer_here``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import resident
from ..paths import MEMORY

ANSWER_TIMEOUT = 30.0  # a first request may embed every memory of a large root

_here = None  # (root's real path, handler) of the server this process is


def answer_here(root, handler) -> None:
    """Make this process answer its own requests for root with handler (the server does)."""
    global _here
    _here = (os.path.realpath(os.fspath(root)), handler)


def socket_path(root: str | os.PathLike) -> Path:
    """The socket of this root's server (``memcli.resident.socket_path``)."""
    return Path(resident.socket_path(os.path.realpath(os.fspath(root))))


def private_folder(folder: Path, create: bool = False) -> str | None:
    """None when folder is a real folder of this user that no one else may enter; else why not."""
    return resident.private_folder(os.fspath(folder), create)


def memory_key(key) -> bool:
    """Whether a server's hit names a memory: a relative `memory/**/*.md` path that stays there."""
    if not isinstance(key, str) or not key.startswith(MEMORY + "/") or not key.endswith(".md"):
        return False
    parts = key.split("/")
    return not (
        "\\" in key or any(p in ("", ".", "..") for p in parts) or any(ord(c) < 32 or ord(c) == 127 for c in key)
    )


def _hits_ok(answer: dict) -> bool:
    hits = answer.get("hits")
    if not isinstance(hits, list):
        return False
    for h in hits:
        if not (
            isinstance(h, list)
            and len(h) == 3
            and memory_key(h[0])
            and isinstance(h[1], (int, float))
            and not isinstance(h[1], bool)
            and isinstance(h[2], list)
            and all(isinstance(m, str) for m in h[2])
        ):
            return False
    return True


def ask(root: str | os.PathLike, request: dict, timeout: float = ANSWER_TIMEOUT) -> dict | None:
    """Send one request to the server of ``root``; None when no server answers properly."""
    real = os.path.realpath(os.fspath(root))
    if _here is not None and _here[0] == real:
        try:
            answer = json.loads(json.dumps(_here[1](request)))
        except Exception:  # the caller does the work itself, as with a server that failed
            return None
    else:
        conn = resident.connect(real)
        if conn is None:
            return None
        try:
            conn.settimeout(timeout)
            resident.send(conn, b"json", json.dumps(request, ensure_ascii=False).encode("utf-8"))
            reply = resident.receive(conn)
            if not reply or len(reply) != 2 or reply[0] != b"json":
                return None
            answer = json.loads(reply[1].decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        finally:
            conn.close()
    if not isinstance(answer, dict) or not answer.get("ok"):
        return None
    if request.get("op") == "search" and not _hits_ok(answer):
        return None
    return answer
