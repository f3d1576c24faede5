"""Many processes writing one root at once lose nothing.

The workload and its checks live in benchmarks/stress.py (which also runs the full counts);
here it runs at a size that fits CI, in both of its modes, and the root it leaves is checked
again with memcli's own parsers. The lock is tested on its own: a writer that cannot get it
in time exits 3 and changes nothing."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.store import details as dfile
from memcli.store.index import IndexDoc
from tests.conftest import child_env

REPO = Path(__file__).resolve().parent.parent


def _stress():
    spec = importlib.util.spec_from_file_location("memcli_stress", REPO / "benchmarks" / "stress.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


stress = _stress()


def memcli(root, *args, timeout=60):
    env = child_env()
    return subprocess.run(
        [sys.executable, "-m", "memcli", "--root", str(root), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def reparse(root: Path) -> dict:
    """Every file of the root read back with memcli's parsers; returns counts."""
    details = [dfile.parse(p.read_text(encoding="utf-8"), p.stem) for p in (root / "memory").glob("*.md")]
    index = IndexDoc.parse((root / "MEMORY.md").read_text(encoding="utf-8"))
    for p in (root / ".memcli").rglob("*.json"):
        json.loads(p.read_text(encoding="utf-8"))
    assert not list(root.rglob(".memcli-tmp-*"))
    return {"details": len(details), "entries": len(index.entries)}


def assert_report(rep):
    assert rep.tracebacks == [], rep.tracebacks[0]
    assert rep.problems == [], rep.problems[:10]
    assert rep.lost == 0
    for kind, w in rep.writers.items():
        assert w["attempted"] > 0 and w["failed"] == 0, (kind, w)


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path):
    """Workers in separate processes, each running its operations through memcli's entry point;
    the index has room for every memory, so every remembered one must also be listed."""
    root = tmp_path / "mem"
    rep = stress.run(root, remember=(6, 12), scope=(4, 25), session=(3, 10), update=(3, 6), readers=2, max_lines=500)
    assert_report(rep)
    counts = reparse(root)
    assert rep.writers["remember"]["ok"] == 72 and counts["details"] == 73 and counts["entries"] == 73
    assert rep.writers["scope"]["refused"] > 0  # the contested key was really contested
    assert sum(r["runs"] for r in rep.readers.values()) >= 7
    check = memcli(root, "scope", "check", "--json")
    collisions = json.loads(check.stdout)["data"]["collisions"]
    assert check.returncode == 1 and {c["key"] for c in collisions} == {"contested"}
    assert len(collisions) == rep.writers["scope"]["refused"]


@pytest.mark.slow
def test_concurrent_cli_processes_lose_nothing(tmp_path):
    """Every operation a fresh `python -m memcli` process; the index is small, so remembering
    demotes entries while other processes write."""
    root = tmp_path / "mem"
    rep = stress.run(
        root, remember=(4, 6), scope=(2, 4), session=(2, 3), update=(2, 2), readers=1, cli=True, max_lines=12
    )
    assert_report(rep)
    counts = reparse(root)
    index = IndexDoc.parse((root / "MEMORY.md").read_text(encoding="utf-8"))
    assert counts["details"] == 25 and index.line_count() == 11  # full: index.max_lines is 12
    assert memcli(root, "index", "check").returncode == 0


@pytest.mark.stress
def test_full_counts(tmp_path):
    """The counts of the stress benchmark: 16x50 remember, 8x100 scope set, 4x50 session add,
    4x25 update, with readers throughout."""
    rep = stress.run(tmp_path / "mem")
    assert_report(rep)
    reparse(tmp_path / "mem")


# ---------------------------------------------------------------- the lock

WRITES = [
    ("remember", "Blocked", "never written"),
    ("update", "kept", "--append", "never appended"),
    ("update", "kept", "--summary", "never summarised"),
    ("forget", "kept", "--yes"),
    ("index", "rebuild"),
    ("scope", "set", "k", "v", "--agent", "A"),
    ("scope", "start", "a task"),
    ("scope", "end"),
    ("session", "add", "user", "never added"),
    ("session", "clear"),
]


def tree(root: Path) -> dict:
    """Every file's bytes, except the lock and the caches that readers refresh."""
    skip = (".memcli/lock", ".memcli/trace.jsonl", ".memcli/search")
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not str(p.relative_to(root)).startswith(skip) and "cache" not in p.name
    }


def make_root(tmp_path, lock_timeout: str) -> Path:
    from memcli.usecases.init import init_root

    root = tmp_path / "mem"
    init_root(root)
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write(f"\nlock_timeout: {lock_timeout}\n")
    assert memcli(root, "remember", "Kept", "the one memory", "--id", "kept").returncode == 0
    assert memcli(root, "session", "add", "user", "hello").returncode == 0
    assert memcli(root, "scope", "set", "k", "old", "--agent", "A").returncode == 0
    index = root / "MEMORY.md"  # a drifted line: heartbeat --fix and index rebuild have work to do
    index.write_text(index.read_text(encoding="utf-8").replace("the one memory", "drifted"), encoding="utf-8")
    return root


@pytest.fixture
def locked_root(tmp_path):
    return make_root(tmp_path, "300ms")


@pytest.mark.slow
def test_lock_timeout_exits_3_and_writes_nothing(locked_root):
    root = locked_root
    heartbeat = "heartbeat" in memcli(root, "--help").stdout
    writes = WRITES + ([("heartbeat", "--fix")] if heartbeat else [])
    before = tree(root)
    fd = os.open(root / ".memcli" / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        for argv in writes:
            t = time.monotonic()
            p = memcli(root, *argv)
            waited = time.monotonic() - t
            assert p.returncode == 3, (argv, p.returncode, p.stderr)
            lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
            assert len(lines) == 1 and "lock" in lines[0] and "Traceback" not in p.stderr, (argv, p.stderr)
            assert waited >= 0.3, (argv, waited)
            assert tree(root) == before, f"{argv}: a write that did not get the lock changed a file"
        # readers do not need the lock
        for argv in [
            ("list",),
            ("show", "kept"),
            ("recall", "the one memory"),
            ("index", "check"),
            ("context", "memory"),
            ("scope", "show"),
            ("session", "show"),
        ]:
            p = memcli(root, *argv)
            assert p.returncode in ((0, 1) if argv[0] == "index" else (0,)), (argv, p.stderr)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert memcli(root, "remember", "After the lock", "written").returncode == 0


def test_writer_waits_for_a_short_lock(tmp_path):
    """A lock held for less than lock_timeout is waited for, not failed on."""
    root = make_root(tmp_path, "10s")
    fd = os.open(root / ".memcli" / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    p = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(root), "remember", "Waited", "ok"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not waiting_for_the_lock(p.pid, root / ".memcli" / "lock"):
            assert p.poll() is None, "the writer did not wait for the lock"
            assert time.monotonic() < deadline, "the writer never reached the lock"
            time.sleep(0.01)
        assert not (root / "memory/waited.md").exists()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert (root / "memory/waited.md").is_file()


def waiting_for_the_lock(pid: int, lock: Path) -> bool:
    """The process holds the lock file open and sleeps: it is between two tries of the lock
    (it opens the file right before its first try). Without /proc: once it has run for a second."""
    proc = Path(f"/proc/{pid}")
    if not proc.is_dir():
        return time.monotonic() - _started.setdefault(pid, time.monotonic()) >= 1.0
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        fds = [os.readlink(f) for f in (proc / "fd").iterdir()]
    except OSError:
        return False
    return state == "S" and os.path.realpath(lock) in fds


_started: dict = {}
