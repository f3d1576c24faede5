"""`memcli serve`'s socket cannot be squatted: it lives in a folder only this user can enter, the
client checks the folder's and the socket's owner and mode before use, and accepts only
`memory/**/*.md` keys from a server."""

import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from memcli import resident
from memcli.search import remote as serve
from memcli.usecases.init import init_root
from tests.conftest import start_server, stop_server as stop


class Rogue:
    """A process-local server that answers every request with a canned JSON line."""

    def __init__(self, path, answer):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.answer = answer
        self.asked = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                resident.receive(conn)
                self.asked += 1
                resident.send(conn, b"json", json.dumps(self.answer).encode())

    def close(self):
        self.sock.close()


@pytest.fixture
def long_root(tmp_path):
    """A root whose .memcli/serve.sock would be too long for a socket (over ~89 bytes)."""
    r = tmp_path / ("a-rather-long-folder-name-for-notes-" * 3) / "mem"
    init_root(r)
    return r


SEARCH = {"op": "search", "query": "q", "lexical": [], "limit": 5, "threshold": 0.35}


def test_14_the_socket_is_in_a_private_folder_never_a_shared_one(long_root, monkeypatch):
    runtime = os.environ["XDG_RUNTIME_DIR"]
    path = serve.socket_path(long_root)
    assert path.parent == Path(runtime) / "memcli"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("TMPDIR", "/t")
    assert serve.socket_path(long_root).parent == Path(f"/t/memcli-{os.getuid()}")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/r" + "x" * 100)  # too long for a socket: this user's temp folder
    assert serve.socket_path(long_root).parent == Path(f"/t/memcli-{os.getuid()}")
    monkeypatch.delenv("TMPDIR")
    assert serve.socket_path(long_root).parent == Path(f"/tmp/memcli-{os.getuid()}")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    proc = start_server(long_root)
    try:
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        assert stat.S_ISSOCK(os.lstat(path).st_mode) and stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        assert serve.ask(long_root, {"op": "ping"}, timeout=5)["root"] == str(long_root.resolve())
    finally:
        assert stop(proc) == 0


def test_14_a_folder_others_may_enter_is_not_used(root):
    path = serve.socket_path(root)
    path.parent.mkdir(parents=True)
    os.chmod(path.parent, 0o777)  # anyone could have put the socket there
    rogue = Rogue(path, {"ok": True, "hits": [["memory/x.md", 1.0, ["embedding"]]], "root": "x", "pid": 1})
    try:
        assert serve.ask(root, SEARCH) is None and serve.ask(root, {"op": "ping"}) is None
        assert rogue.asked == 0  # nothing was sent to it
        os.chmod(path.parent, 0o700)
        assert serve.ask(root, {"op": "ping"}) is not None  # the same server, in a private folder
    finally:
        rogue.close()


def test_14_a_folder_or_socket_of_another_user_is_not_used(root, monkeypatch):
    path = serve.socket_path(root)
    path.parent.mkdir(parents=True, mode=0o700)
    rogue = Rogue(path, {"ok": True, "root": "x", "pid": 1})
    try:
        assert serve.ask(root, {"op": "ping"}) is not None
        me = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: me + 4242)  # as another user sees them
        assert serve.ask(root, {"op": "ping"}) is None
        assert "another user" in serve.private_folder(path.parent)
        from memcli.core import Memory
        from memcli.serve import Resident

        with pytest.raises(RuntimeError, match="not a private folder"):
            Resident(Memory(root)).lock()
    finally:
        rogue.close()


@pytest.mark.parametrize(
    "key",
    [
        ".memcli/sessions/default.json",
        "memory/../.memcli/trace.jsonl",
        "/etc/passwd",
        "memory/x.txt",
        "MEMORY.md",
        "memory//x.md",
        "memory/\x1b[31mx.md",
        7,
    ],
)
def test_14_only_memory_keys_are_accepted_from_a_server(root, key):
    path = serve.socket_path(root)
    path.parent.mkdir(parents=True, mode=0o700)
    rogue = Rogue(path, {"ok": True, "hits": [["memory/fine.md", 0.9, ["embedding"]], [key, 0.8, ["embedding"]]]})
    try:
        assert serve.ask(root, SEARCH) is None  # the caller does the work itself
        rogue.answer = {
            "ok": True,
            "hits": [["memory/fine.md", 0.9, ["embedding"]], ["memory/archive/old.md", 0.5, ["bm25f"]]],
        }
        assert serve.ask(root, SEARCH)["hits"][1][0] == "memory/archive/old.md"
    finally:
        rogue.close()
