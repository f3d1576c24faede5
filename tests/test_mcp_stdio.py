"""`memcli mcp`'s stdio transport in a real process: Ctrl-C while the client keeps stdin open, and
stdin closed while an answer is still being worked out."""

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import child_env

pytest.importorskip("mcp")

INIT = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def start(root):
    return subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )


def send(p, *messages):
    p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    p.stdin.flush()


def test_ctrl_c_stops_the_server_while_stdin_is_open(example_root):
    p = start(example_root)
    try:
        send(p, *INIT)
        assert json.loads(p.stdout.readline())["id"] == 1  # serving, stdin still open
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        code = p.wait(timeout=20)
        assert code == 130 and time.monotonic() - t0 < 20
        assert "interrupted" in p.stderr.read().decode()
    finally:
        p.kill()
        p.wait()


def test_an_answer_in_flight_is_sent_after_stdin_closes(example_root):
    p = start(example_root)
    try:
        send(
            p,
            *INIT,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": "mysql charset"}},
            },
        )
        p.stdin.close()  # the client is done asking, and still reads
        out, err = p.stdout.read(), p.stderr.read()
        p.wait(timeout=60)
    finally:
        p.kill()
        p.wait()
    answers = {m["id"]: m for m in map(json.loads, out.decode().splitlines()) if "id" in m}
    assert p.returncode == 0, err.decode()
    assert answers[2]["result"]["structuredContent"]["hits"][0]["id"] == "mysql-charset"
