"""Writers killed with SIGKILL at random moments never leave a torn, empty or half-written file.

A writer loops over remember, update, scope set, session add, forget and index rebuild through
memcli's command-line entry point; it is killed after a random 0-300 ms, 200 times. After every
kill every file still parses and ends where a complete write ends; leftover temp files are
invisible to every command; the lock of a dead writer never blocks the next one."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.core import Memory
from memcli.usecases.init import init_root
from memcli.store import details as dfile
from memcli.store.fs import TMP_PREFIX
from memcli.store.index import IndexDoc
from tests.conftest import invoke, child_env

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

KILLS = 60  # the suite's run; `pytest -m stress` runs the long one (200)
MAX_DELAY = 0.3
SHARED = "shared-note"


def cli(root, *argv):
    res = invoke(["--root", str(root), *map(str, argv)])
    assert "Traceback" not in res.output
    return res


def writer(root: str, seed: int, ready) -> None:
    """Write forever (until killed), through the same entry point as `memcli`."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    from memcli.cli import main

    rng = random.Random(seed)
    mine: list[str] = []
    ready.set()
    for i in range(10**9):
        tag = f"{seed}-{i}"
        op = rng.random()
        if op < 0.35:
            argv = [
                "remember",
                f"Crash note {tag}",
                f"summary {tag}",
                "--id",
                f"c-{tag}",
                "--body",
                f"body {tag}\n" + "filler line\n" * rng.randrange(200) + f"end-c-{tag}\n",
            ]
            mine.append(f"c-{tag}")
        elif op < 0.55:
            argv = ["update", SHARED, "--append", f"append-{tag}"]
        elif op < 0.75:
            argv = ["scope", "set", f"k-{tag}", "v" * rng.randrange(1, 5000), "--agent", f"a{seed % 3}"]
        elif op < 0.9:
            argv = ["session", "add", rng.choice(["user", "assistant"]), f"turn {tag} " + "w " * rng.randrange(300)]
        elif op < 0.96 and mine:
            argv = ["forget", mine.pop(0), "--yes"]
        else:
            argv = ["index", "rebuild"]
        try:
            main(["--root", root, *argv])
        except SystemExit:
            pass


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    init_root(root)
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write("\nlock_timeout: 30s\nsession.max_rounds: 3\n")
    Memory(root).remember("Shared note", "appended to by every writer", id=SHARED, pinned=True, body="Start.\n")
    return root


def verify(root: Path) -> list[str]:
    """Every file complete and parseable; returns the problems found."""
    problems = []
    for p in sorted((root / "memory").glob("*.md")):
        raw = p.read_bytes()
        if not raw:
            problems.append(f"{p.name} is empty")
            continue
        try:
            d = dfile.parse(raw.decode("utf-8"), p.stem)
        except Exception as e:  # noqa: BLE001
            problems.append(f"{p.name}: {e}")
            continue
        last = d.body.rstrip("\n").rsplit("\n", 1)[-1]
        expected = (
            "Start."
            if p.stem == SHARED and "append-" not in d.body
            else "append-"
            if p.stem == SHARED
            else f"end-{p.stem}"
        )
        if not last.startswith(expected):
            problems.append(f"{p.name} ends with {last[-60:]!r}, not a complete write")
    raw = (root / "MEMORY.md").read_bytes()
    text = raw.decode("utf-8")
    if not text.startswith("# ") or not text.endswith("\n"):
        problems.append("MEMORY.md is cut short")
    doc = IndexDoc.parse(text)
    if not any(e.id == SHARED for e in doc.entries):
        problems.append("MEMORY.md lost the pinned entry")
    for sub in ("scopes", "sessions"):
        for p in (root / ".memcli" / sub).glob("*.json"):
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
                assert isinstance(data, dict)
            except Exception as e:  # noqa: BLE001
                problems.append(f".memcli/{sub}/{p.name}: {e}")
    for p in (root / "memory" / "episodes").glob("*.md"):
        t = p.read_bytes().decode("utf-8")
        if not t.startswith("# Episodes") or not t.endswith("\n"):
            problems.append(f"episodes/{p.name} is cut short")
    return problems


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"{TMP_PREFIX}*")]


@pytest.mark.parametrize(
    "kills", [pytest.param(KILLS, marks=pytest.mark.slow), pytest.param(200, marks=pytest.mark.stress)]
)
def test_sigkill_never_tears_a_file(tmp_path, kills):
    root = make_root(tmp_path)
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(20261130)
    wanted, kills, problems, drift_after_kill = kills, 0, [], 0
    seed = 0
    while kills < wanted:
        children = []
        for _ in range(2):  # two writers at once: one may be killed while holding the lock
            ready = ctx.Event()
            p = ctx.Process(target=writer, args=(str(root), seed, ready), daemon=True)
            seed += 1
            p.start()
            assert ready.wait(10)
            children.append((p, rng.uniform(0, MAX_DELAY)))
        start = time.monotonic()
        for p, delay in sorted(children, key=lambda c: c[1]):
            time.sleep(max(0.0, start + delay - time.monotonic()))
            os.kill(p.pid, signal.SIGKILL)
            p.join(5)
            assert p.exitcode == -signal.SIGKILL
            kills += 1
        found = verify(root)
        problems += [f"after kill {kills}: {x}" for x in found]
        check = Memory(root).check_index()
        if check:
            drift_after_kill += 1
            assert all("differ" in str(c) and "from memory/" in str(c) for c in check), check
    assert problems == [], problems[:10]
    # A crash between the two renames of one write can leave an index line behind its detail
    # file; that is rare, reported by index check, and repaired by the next write.
    assert drift_after_kill <= max(3, wanted // 20), drift_after_kill
    print(
        f"{kills} kills, 0 torn files, {drift_after_kill} kills left an index line behind its file, "
        f"{len(temp_files(root))} temp files left"
    )
    assert (
        cli(root, "remember", "After the crashes", "written", "--id", "after", "--body", "end-after\n").exit_code == 0
    )
    assert cli(root, "index", "check").exit_code == 0, cli(root, "index", "check").output
    assert verify(root) == []


def test_leftover_temp_files_are_invisible(tmp_path):
    root = make_root(tmp_path)
    word = "zanzibarquokka"
    good = f"---\ntitle: {word} note\nsummary: {word}\ntags: [{word}]\n---\n{word} body\n"
    planted = [
        root / "memory" / f"{TMP_PREFIX}a1b2c3.tmp",
        root / "memory" / f"{TMP_PREFIX}d4e5f6.md",
        root / "memory" / "episodes" / f"{TMP_PREFIX}g7h8.tmp",
        root / "memory" / "archive" / f"{TMP_PREFIX}x.md",
        root / f"{TMP_PREFIX}index.tmp",
        root / ".memcli" / "scopes" / f"{TMP_PREFIX}s.tmp",
    ]
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(good, encoding="utf-8")
    (root / f"{TMP_PREFIX}index.tmp").write_text(f"- **{word}**: x | → memory/{word}.md\n", encoding="utf-8")
    for argv in [
        ("list",),
        ("list", "--all"),
        ("recall", word),
        ("recall", word, "--deep"),
        ("context", word),
        ("should-recall", f"the {word} again"),
        ("index", "check"),
        ("index", "rebuild"),
        ("scope", "show"),
        ("session", "show"),
    ]:
        res = cli(root, *argv)
        assert word not in res.stdout and TMP_PREFIX not in res.stdout, (argv, res.stdout)
        assert res.exit_code in (0, 1), (argv, res.output)
    assert cli(root, "index", "check").exit_code == 0
    assert all(p.exists() for p in planted)  # reported by heartbeat, never deleted by a read
    res = cli(root, "recall", word, "--deep")
    assert res.exit_code == 1


def test_stale_lock_of_a_dead_writer_does_not_block(tmp_path):
    """A writer killed while it holds the lock: the kernel releases the flock with the process."""
    root = make_root(tmp_path)
    ctx = multiprocessing.get_context("fork")
    held = ctx.Event()

    def hold():
        with Memory(root).store.lock():
            held.set()
            time.sleep(3600)

    p = ctx.Process(target=hold, daemon=True)
    p.start()
    assert held.wait(10)
    fd = os.open(root / ".memcli" / "lock", os.O_RDWR)
    with pytest.raises(BlockingIOError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # really held
    os.kill(p.pid, signal.SIGKILL)
    p.join(5)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free at once, though the lock file stays
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    assert (root / ".memcli" / "lock").exists()
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write("lock_timeout: 1s\n")
    t = time.monotonic()
    env = child_env()
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", "--root", str(root), "remember", "Next writer", "ok"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert (root / "memory/next-writer.md").is_file()
    assert time.monotonic() - t < 30


@pytest.mark.slow
def test_killed_cli_processes(tmp_path):
    """Real `python -m memcli` writers killed at random moments, start-up included."""
    root = make_root(tmp_path)
    rng = random.Random(7)
    env = child_env()
    for i in range(20):
        argv = rng.choice(
            [
                ["remember", f"Cli note {i}", "s", "--id", f"cli-{i}", "--body", f"b\nend-cli-{i}\n"],
                ["update", SHARED, "--append", f"append-cli-{i}"],
                ["scope", "set", f"k{i}", "v", "--agent", "A"],
                ["session", "add", "user", f"turn {i}"],
            ]
        )
        p = subprocess.Popen(
            [sys.executable, "-m", "memcli", "--root", str(root), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        time.sleep(rng.uniform(0.05, 0.6))
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        assert verify(root) == []
    assert cli(root, "remember", "After", "s", "--body", "end-after\n").exit_code == 0
    assert cli(root, "index", "check").exit_code == 0
