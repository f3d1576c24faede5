"""A full disk or an unwritable folder: every write command exits 3 with one line, leaves the
previous files byte for byte and leaves no temp file behind. Read commands keep working.

The failures are simulated by patching the calls an atomic write makes (tests run as root, so a
read-only chmod would not stop them)."""

from __future__ import annotations

import errno
import os

import pytest

from memcli.store import fs
from memcli.store.fs import TMP_PREFIX

# Local state that read commands may legitimately refresh (caches, the trace log, the lock file).
VOLATILE = (
    ".memcli/search/",
    ".memcli/trace.jsonl",
    ".memcli/index-cache.json",
    ".memcli/heartbeat-cache.json",
    ".memcli/lock",
)


def snapshot(root) -> dict:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            if rel.startswith(VOLATILE):
                continue
            with open(p, "rb") as f:
                out[rel] = f.read()
    return out


def temp_files(root) -> list:
    return [os.path.join(d, n) for d, _, names in os.walk(root) for n in names if n.startswith(TMP_PREFIX)]


def _raiser(code):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    return fail


class _FailingFile:
    """What os.fdopen returns when the disk fills up during the write."""

    def __init__(self, fd):
        self.fd = fd

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self.fd)

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _nth_replace_fails(n):
    """os.replace works n-1 times, then the disk is full: a failure between two renames."""
    real = os.replace
    calls = {"n": 0}

    def replace(src, dst, *a, **kw):
        calls["n"] += 1
        if calls["n"] == n and TMP_PREFIX in os.path.basename(str(src)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *a, **kw)

    return replace


FAULTS = {
    "rename ENOSPC": lambda m: m.setattr(os, "replace", _raiser(errno.ENOSPC)),
    "second rename ENOSPC": lambda m: m.setattr(os, "replace", _nth_replace_fails(2)),
    "fsync ENOSPC": lambda m: m.setattr(os, "fsync", _raiser(errno.ENOSPC)),
    "write ENOSPC": lambda m: m.setattr(os, "fdopen", lambda fd, *a, **kw: _FailingFile(fd)),
    # every temp file of a write is made by tempfile.mkstemp (store/fs.py)
    "mkstemp ENOSPC": lambda m: m.setattr(fs.tempfile, "mkstemp", _raiser(errno.ENOSPC)),
    "read-only folder": lambda m: m.setattr(fs.tempfile, "mkstemp", _raiser(errno.EROFS)),
    "permission denied": lambda m: m.setattr(fs.tempfile, "mkstemp", _raiser(errno.EACCES)),
}

WRITES = [
    ("remember", "A new lesson", "keep it short", "-t", "new"),
    ("update", "deploy-steps", "--summary", "run ./deploy.sh prod"),
    ("update", "deploy-steps", "--append", "Check the dashboard afterwards."),
    ("update", "deploy-steps", "--title", "Deploy to production"),
    ("forget", "deploy-steps", "--yes"),
    ("index", "rebuild"),
    ("session", "add", "user", "the fourth turn"),
    ("session", "clear"),
    ("scope", "start", "another task"),
    ("scope", "set", "draft", "v2", "--agent", "Writer"),
    ("scope", "set", "plan", "mine now", "--agent", "Intruder", "--force"),
    ("scope", "end"),
]


@pytest.fixture
def busy_root(cli, root):
    """A root with memories, an index line that drifted, a full session and a scope."""
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write("\nsession.max_rounds: 3\n")
    assert cli("remember", "Deploy steps", "make release", "-t", "deploy", "--id", "deploy-steps").exit_code == 0
    assert cli("remember", "Charset lesson", "utf8mb4 on the connection", "-t", "mysql").exit_code == 0
    for i in range(3):
        assert cli("session", "add", "user", f"turn {i}").exit_code == 0
    assert cli("scope", "start", "write the article").exit_code == 0
    assert cli("scope", "set", "plan", "outline first", "--agent", "Planner").exit_code == 0
    index = root / "MEMORY.md"
    index.write_text(
        index.read_text(encoding="utf-8").replace("utf8mb4 on the connection", "drifted"), encoding="utf-8"
    )
    return root


def _one_line_error(res):
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in res.output
    errors = [ln for ln in lines if ln.startswith("memcli: error:")]
    assert len(errors) == 1, res.stderr
    return errors[0]


# Commands that write two files in one step (a detail file and MEMORY.md; the episode log and
# the session or scope): the only ones a failure between two renames can reach.
TWO_FILES = {"remember", "update", "session add", "scope start"}


def _name(argv):
    return " ".join(argv[:2]) + (f" {argv[2]}" if argv[0] == "update" else "")


CASES = [
    pytest.param(fault, argv, id=f"{_name(argv)}-{fault}")
    for argv in WRITES
    for fault in FAULTS
    if fault != "second rename ENOSPC" or argv[0] in TWO_FILES or " ".join(argv[:2]) in TWO_FILES
]


@pytest.mark.parametrize("fault, argv", CASES)
def test_write_fails_cleanly(cli, busy_root, monkeypatch, fault, argv):
    before = snapshot(busy_root)
    with monkeypatch.context() as m:
        FAULTS[fault](m)
        res = cli(*argv)
    assert res.exit_code == 3, (res.exit_code, res.output)
    message = _one_line_error(res)
    assert "cannot write" in message or "cannot create" in message, message
    assert snapshot(busy_root) == before
    assert temp_files(busy_root) == []


def test_failed_write_then_retry_succeeds(cli, busy_root, monkeypatch):
    with monkeypatch.context() as m:
        FAULTS["second rename ENOSPC"](m)
        assert cli("remember", "Retry me", "s").exit_code == 3
    assert not (busy_root / "memory/retry-me.md").exists()
    res = cli("remember", "Retry me", "s")
    assert res.exit_code == 0, res.output
    assert cli("index", "check").exit_code in (0, 1)
    assert "retry-me" in (busy_root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("fault", ["rename ENOSPC", "mkstemp ENOSPC", "read-only folder"])
@pytest.mark.parametrize(
    "argv",
    [
        ("list",),
        ("show", "deploy-steps"),
        ("index", "check"),
        ("recall", "deploy release"),
        ("recall", "deploy release", "--deep"),
        ("should-recall", "like last time"),
        ("context", "deploy"),
        ("session", "show"),
        ("scope", "show"),
        ("scope", "check"),
    ],
)
def test_reads_survive_a_full_disk(cli, busy_root, monkeypatch, fault, argv):
    """Caches and the trace log are extras: a read command still answers, at most with a warning."""
    before = snapshot(busy_root)
    with monkeypatch.context() as m:
        FAULTS[fault](m)
        res = cli(*argv)
    assert "Traceback" not in res.output
    assert res.exit_code in (0, 1), (res.exit_code, res.output)
    assert snapshot(busy_root) == before
    assert temp_files(busy_root) == []


def test_lock_file_cannot_be_created(cli, root, monkeypatch):
    """The state folder cannot be created (disk full): exit 3, one line, nothing written."""
    import shutil

    shutil.rmtree(root / ".memcli")
    before = snapshot(root)
    real_mkdir = os.mkdir

    def mkdir(path, *a, **kw):
        if ".memcli" in str(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_mkdir(path, *a, **kw)

    with monkeypatch.context() as m:
        m.setattr(os, "mkdir", mkdir)
        res = cli("remember", "No room", "s")
    assert res.exit_code == 3, res.output
    _one_line_error(res)
    assert snapshot(root) == before


def test_unusable_search_cache_falls_back(cli, busy_root, monkeypatch):
    """The search cache cannot be opened (read-only, full, corrupt beyond repair): recall still
    answers from the files, with a warning."""
    import sqlite3

    with monkeypatch.context() as m:
        m.setattr(sqlite3, "connect", _raiser_sqlite)
        res = cli("recall", "utf8mb4 connection", "--deep")
    assert res.exit_code == 0, res.output
    assert "charset-lesson" in res.stdout or "Charset lesson" in res.stdout
    assert "search cache" in res.stderr


def _raiser_sqlite(*args, **kwargs):
    import sqlite3

    raise sqlite3.OperationalError("unable to open database file")
