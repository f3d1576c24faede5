"""The resident path: a running `memcli serve` runs the per-turn commands of its root for the
real CLI in other processes, with the output they would print themselves, and only for its own
user, root and environment; it sees what other processes change in the root, a root replaced
by another folder included; and without one (or when it says no) the command runs in its own
process as before. A per-turn command run in its own process starts one."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli import resident
from memcli.search import remote
from tests.conftest import ROOT_DIR, run_memcli, start_server, stop_server as stop

SECRET = "token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def served(root) -> int:
    answer = remote.ask(root, {"op": "ping"}, timeout=5)
    return -1 if answer is None else answer["served"]


def server_stamp() -> bytes:
    """The stamp of the memcli a server in a test runs (the installed one, which may not be the
    checkout this process imported)."""
    code = "import sys; from memcli import resident; sys.stdout.buffer.write(resident.stamp())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout


def normalised(text: str, root) -> str:
    text = text.replace(str(root), "ROOT")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", text)
    return re.sub(r'"ms": [0-9.e-]+', '"ms": 0', text)


def event(root, prompt, name="UserPromptSubmit", **fields):
    return json.dumps({"session_id": "s-1", "cwd": str(root), "hook_event_name": name, "prompt": prompt, **fields})


# (command line, stdin, whether a server runs it): the per-turn commands, their errors, and lines
# that are Typer's (never sent to a server)
LINES = [
    (["recall", "charset"], None, True),
    (["recall", "charset", "--json"], None, True),
    (["recall", "zzzz-not-there"], None, True),
    (["recall", "charset", "-k", "2", "--layer", "index", "--json"], None, True),
    (["recall", "charset", "--layer", "no-such-layer"], None, True),
    (["recall", "alembic", "--layer", "details"], None, True),
    (["should-recall", "上次那个方案"], None, True),
    (["should-recall", "hello", "--json"], None, True),
    (["context", "charset"], None, True),
    (["context", "--budget", "5"], None, True),
    (["context", "--json"], None, True),
    (["session", "add", "user", "deploy it like last time"], None, True),
    (["--session", "s2", "session", "add", "assistant", "done", "--json"], None, True),
    (["session", "add", "nobody", "hi"], None, True),
    (["remember", "Served note", "a summary", "-t", "x"], None, True),
    (["remember", "Secret inside", "--body", SECRET], None, True),
    (["remember", "Bad importance", "s", "-i", "7", "--json"], None, True),
    (["scope", "set", "plan", "ship friday", "--agent", "Planner"], None, True),
    (["recall", "--bogus", "x"], None, False),  # a usage error: said by the client's own run
    (["recall", "--help"], None, False),  # help: printed by the client's own run
    (["--version"], None, False),
    (["session"], None, False),  # a group without its command: the help
    (["session", "show"], None, False),  # not a per-turn command
    (["recall", "-"], "charset", True),  # stdin: the server asks the client for it
    (["remember", "Piped note", "-", "--json"], "the summary, piped", True),
    (["remember", "Filed note", "s", "--body-file", "body.txt"], None, True),  # in the client's folder
    (["hook", "claude-code"], "EVENT:上次那个 charset 的方案是怎么做的?", True),
    (["hook", "claude-code", "--json"], "EVENT:write a haiku", True),
    (["hook", "claude-code"], "not json", False),  # broken input: no root to check, said here
    (["hook", "claude-code"], "EVENT:SessionStart:", True),  # the whole turn is served
    (["hook", "claude-code"], "EVENT:Stop:The charset fix was SET NAMES utf8mb4.", True),
    (["hook", "claude-code"], "EVENT:SessionEnd:", True),
    (["hook", "claude-code", "--bogus"], "EVENT:hello", False),  # one line, exit 1: the client's own run
]


def run_lines(root, mode: str) -> list:
    out = []
    for args, data, _ in LINES:
        if data is not None and data.startswith("EVENT:"):
            name, _, said = data[6:].partition(":")
            known = name in ("SessionStart", "Stop", "SessionEnd")
            data = event(root, "", name, last_assistant_message=said) if known else event(root, data[6:])
        before = served(root) if mode != "off" else None
        r = run_memcli("--root", root, *args, input=data, env={"MEMCLI_SERVE": mode}, cwd=root)
        ran = None if before is None else served(root) - before
        out.append((args, r.returncode, normalised(r.stdout, root), normalised(r.stderr, root), ran))
    return out


def test_the_same_lines_give_the_same_output_with_and_without_a_server(example_root, tmp_path):
    (example_root / "body.txt").write_text("The body, from a file.\n", encoding="utf-8")
    template = tmp_path / "template"
    shutil.copytree(example_root, template)
    assert run_memcli("hook", "allow", example_root).returncode == 0
    alone = run_lines(example_root, "off")
    shutil.rmtree(example_root)
    shutil.copytree(template, example_root)
    run_memcli(
        "--root", example_root, "recall", "warm", env={"MEMCLI_SERVE": "off"}
    )  # the plugin cache, as a first run
    proc = start_server(example_root)
    try:
        with_server = run_lines(example_root, "manual")
    finally:
        assert stop(proc) == 0
    for (args, *a, _), (_, *b, ran), (_, _, expected) in zip(alone, with_server, LINES):
        assert a == b, args
        assert ran == (1 if expected else 0), (args, ran)
    codes = {tuple(args): code for args, code, *_ in alone}
    assert codes[("recall", "zzzz-not-there")] == 1 and codes[("session", "add", "nobody", "hi")] == 2
    assert codes[("remember", "Secret inside", "--body", SECRET)] != 0
    assert not Path(resident.socket_path(str(example_root.resolve()))).exists()


def test_files_changed_behind_the_servers_back_are_seen(example_root):
    root = example_root
    proc = start_server(root)
    manual = {"MEMCLI_SERVE": "manual"}
    try:
        run_memcli("--root", root, "recall", "warm", env={"MEMCLI_SERVE": "off"})
        assert run_memcli("--root", root, "recall", "quasimodo", env=manual).returncode == 1
        scans = remote.ask(root, {"op": "ping"})["scans"]
        assert run_memcli("--root", root, "recall", "quasimodo", env=manual).returncode == 1
        assert remote.ask(root, {"op": "ping"})["scans"] == scans  # nothing changed: no file was stat-ed
        n = served(root)
        # an editor writes a new memory and edits another in place; git rewrites the index
        (root / "memory" / "bells.md").write_text(
            "---\ntitle: Bell tower\nsummary: the quasimodo schedule\ntype: fact\n---\n\nRing at noon.\n",
            encoding="utf-8",
        )
        detail = next(p for p in (root / "memory").glob("*.md") if "charset" in p.read_text(encoding="utf-8"))
        with open(detail, "a", encoding="utf-8") as f:
            f.write("\nThe zyxwvut driver setting matters too.\n")
        index = (root / "MEMORY.md").read_text(encoding="utf-8")
        (root / "MEMORY.md").write_text(index.replace("MySQL", "MariaDB", 1), encoding="utf-8")
        found = run_memcli("--root", root, "recall", "quasimodo", "--json", env=manual)
        assert found.returncode == 0 and json.loads(found.stdout)["data"]["hits"][0]["id"] == "bells"
        edited = run_memcli("--root", root, "recall", "zyxwvut", "--json", env=manual)
        assert edited.returncode == 0 and json.loads(edited.stdout)["data"]["hits"][0]["id"] == detail.stem
        renamed = run_memcli("--root", root, "recall", "MariaDB", "--layer", "index", env=manual)
        assert renamed.returncode == 0 and "MariaDB" in renamed.stdout
        assert served(root) == n + 3
        assert remote.ask(root, {"op": "ping"})["scans"] == scans + 1
    finally:
        stop(proc)


def settled(followed, root) -> tuple:
    """(what the followed files say, what a scan says), once they agree or ten seconds passed:
    watchdog reports a change from its own threads, a moment after it is made."""
    from memcli.store import layout

    deadline = time.monotonic() + 10
    while True:
        want = list(layout.scan_detail_files(root).items())
        got = list(followed.detail_files().items())
        if got == want or time.monotonic() > deadline:
            return got, want
        select.select([followed], [], [], 0.05)


def test_followed_files_are_the_scan_after_every_kind_of_change(example_root):
    from memcli.store import layout
    from memcli.store.watcher import Followed

    root = example_root.resolve()
    followed = Followed(root)
    try:
        assert followed.detail_files() == layout.scan_detail_files(root) and followed.scans == 1
        assert followed.detail_files() == layout.scan_detail_files(root) and followed.scans == 1
        some = sorted((root / "memory").glob("*.md"))
        changes = [
            lambda: (root / "memory" / "new-one.md").write_text("---\ntitle: N\n---\n", encoding="utf-8"),
            lambda: some[0].open("a", encoding="utf-8").close(),  # opened, nothing written: no change
            lambda: os.utime(some[1], ns=(1, 1)),  # the old time put back: ctime moves
            lambda: some[2].write_bytes(some[2].read_bytes()),  # rewritten, same bytes
            lambda: os.replace(root / "memory" / "new-one.md", some[3]),  # a rename-save
            lambda: some[4].unlink(),
            lambda: (root / "memory" / "episodes").mkdir(exist_ok=True),
            lambda: (root / "memory" / "episodes" / "2026-12-01.md").write_text("## x\n", encoding="utf-8"),
            lambda: os.chmod(some[5], 0o600),
        ]
        for change in changes:
            change()
            got, want = settled(followed, root)
            assert got == want, change  # the scan's order too
        assert "memory/episodes/2026-12-01.md" in followed.detail_files()
        scans = followed.scans
        from memcli.store.fs import atomic_write

        with open(some[6], "a", encoding="utf-8") as f:  # in place, then saved the way memcli saves
            f.write("more\n")
        atomic_write(some[7], some[7].read_text(encoding="utf-8") + "saved\n")
        atomic_write(root / "memory" / "episodes" / "2026-12-01.md", "## y\n")
        got, want = settled(followed, root)
        assert got == want
        assert followed.scans == scans  # stat-ed again, not scanned
        os.rename(root / "memory", root / "old-memory")  # memory/ made again: followed anew
        shutil.copytree(root / "old-memory", root / "memory")
        (root / "memory" / "later.md").write_text("---\ntitle: L\n---\n", encoding="utf-8")
        got, want = settled(followed, root)
        assert got == want and "memory/later.md" in dict(got)
        (root / "memory" / "later.md").write_text("---\ntitle: Later\n---\n", encoding="utf-8")
        got, want = settled(followed, root)
        assert got == want
    finally:
        followed.close()
    assert followed.detail_files() is None  # closed: the caller scans


def test_a_server_answers_only_its_root_its_umask_and_its_environment(example_root, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(example_root, other)
    proc = start_server(example_root)
    try:
        run_memcli("--root", example_root, "recall", "warm", env={"MEMCLI_SERVE": "off"})
        conn = resident.connect(str(example_root.resolve()))  # its socket, a request for another root
        resident.send(
            conn,
            b"run",
            server_stamp(),
            os.fsencode(str(example_root.resolve())),
            os.fsencode(str(tmp_path)),
            b"%d" % 0o022,
            resident.pack(b"--root", os.fsencode(str(other)), b"recall", b"charset"),
            resident.pack(*(f"{k}={v}".encode() for k, v in resident.settings().items())),
            resident.pack(*map(os.fsencode, sys.path)),
        )
        assert resident.receive(conn) == [b"declined", b"the command is for another root"]
        conn.close()
        n = served(example_root)
        mine = run_memcli("--root", example_root, "recall", "charset", env={"MEMCLI_SERVE": "manual"})
        assert served(example_root) == n + 1
        masked = subprocess.run(
            [sys.executable, "-m", "memcli", "--root", str(example_root), "recall", "charset"],
            capture_output=True,
            text=True,
            env={**os.environ, "MEMCLI_SERVE": "manual"},
            preexec_fn=lambda: os.umask(0o077),
        )
        assert served(example_root) == n + 1 and (masked.returncode, masked.stdout) == (mine.returncode, mine.stdout)
        state = tmp_path / "other-state"  # the user's trust records and hook roots elsewhere: not this server's
        elsewhere = run_memcli(
            "--root", example_root, "recall", "charset", env={"MEMCLI_SERVE": "manual", "XDG_STATE_HOME": str(state)}
        )
        assert served(example_root) == n + 1 and (elsewhere.returncode, elsewhere.stdout) == (0, mine.stdout)
    finally:
        stop(proc)


def test_each_client_is_served_with_its_own_session_scope_and_folder(example_root, tmp_path):
    """The names and the root a client's environment gives, and the folder it works in, are values
    of its request: two clients with other ones, one after the other, each get their own."""
    inner = example_root / "memory"
    proc = start_server(example_root)
    try:
        run_memcli("--root", example_root, "recall", "warm", env={"MEMCLI_SERVE": "off"})
        n = served(example_root)
        for name in ("alpha", "beta"):
            env = {"MEMCLI_SERVE": "manual", "MEMCLI_SESSION": name, "MEMCLI_SCOPE": f"task-{name}"}
            assert run_memcli("session", "add", "user", f"turn of {name}", env=env, cwd=inner).returncode == 0
            env["MEMCLI_ROOT"] = str(example_root)
            assert run_memcli("scope", "set", "k", name, "--agent", "A", env=env, cwd=tmp_path).returncode == 0
        assert served(example_root) == n + 4
    finally:
        stop(proc)
    for name in ("alpha", "beta"):
        turns = json.loads((example_root / ".memcli" / "sessions" / f"{name}.json").read_text(encoding="utf-8"))
        assert [t["text"] for t in turns["turns"]] == [f"turn of {name}"]
        scope = run_memcli("--root", example_root, "--scope", f"task-{name}", "scope", "get", "k")
        assert scope.stdout.strip() == name


def test_the_client_reads_stdin_only_when_the_command_does(example_root):
    """A served recall whose stdin stays open and empty does not wait for it; `recall -` is served,
    its query read from stdin when the server asks for it."""
    proc = start_server(example_root)
    try:
        run_memcli("--root", example_root, "recall", "warm", env={"MEMCLI_SERVE": "off"})
        n = served(example_root)
        held, kept = os.pipe()  # stdin open, nothing written, never closed while the client runs
        try:
            waited = subprocess.run(
                [sys.executable, "-m", "memcli", "--root", str(example_root), "recall", "charset"],
                stdin=held,
                capture_output=True,
                env={**os.environ, "MEMCLI_SERVE": "manual"},
                timeout=30,
            )
        finally:
            os.close(held)
            os.close(kept)
        assert waited.returncode == 0 and b"charset" in waited.stdout.lower()
        piped = run_memcli("--root", example_root, "recall", "-", input="charset", env={"MEMCLI_SERVE": "manual"})
        assert piped.returncode == 0 and "charset" in piped.stdout.lower()
        assert served(example_root) == n + 2
    finally:
        stop(proc)


@pytest.mark.skipif(os.getuid() != 0, reason="acting as another user needs root")
def test_another_user_is_never_served(example_root):
    proc = start_server(example_root)
    path = resident.socket_path(str(example_root.resolve()))
    body = resident.pack(b"json", b'{"op": "ping"}')
    frame = b"%010d" % len(body) + body
    folders = [os.path.dirname(path), os.environ["XDG_RUNTIME_DIR"]]
    try:
        for folder in folders:
            os.chmod(folder, 0o755)
        os.chmod(path, 0o777)  # as if anyone could connect: the peer's credentials still say no
        child = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                f"""
import os, socket
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect({path!r})
try:
    s.sendall({frame!r})
    print("answered" if s.recv(100) else "closed")
except OSError:  # closed before the request was read
    print("closed")
""",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
        )
        assert child.returncode == 0, child.stderr
        assert child.stdout.strip() == "closed"  # never an answer
        for folder in folders:
            os.chmod(folder, 0o700)
        assert served(example_root) == 0 and remote.ask(example_root, {"op": "ping"})["pid"] == proc.pid
    finally:
        stop(proc)


def test_a_client_never_uses_a_socket_others_may_reach(example_root):
    proc = start_server(example_root)
    path = resident.socket_path(str(example_root.resolve()))
    try:
        os.chmod(os.path.dirname(path), 0o755)
        assert resident.connect(str(example_root.resolve())) is None
        r = run_memcli("--root", example_root, "recall", "charset", env={"MEMCLI_SERVE": "manual"})
        assert r.returncode == 0
        os.chmod(os.path.dirname(path), 0o700)
        assert served(example_root) == 0  # it ran in its own process
    finally:
        stop(proc)


def test_idle_exit_and_a_second_server(example_root):
    proc = start_server(example_root, "--idle-exit", "1s")
    second = run_memcli("--root", example_root, "serve")
    assert second.returncode == 4 and "already answers" in second.stderr
    assert proc.wait(30) == 0
    assert not os.path.exists(resident.socket_path(str(example_root.resolve())))


def test_memcli_serve_command(example_root):
    env = dict(os.environ, PYTHONPATH=str(ROOT_DIR))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(example_root), "serve", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "serving" in proc.stderr.readline()
        assert remote.ask(example_root, {"op": "ping"})["pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert json.loads(out)["data"]["stopped_by"] == "SIGTERM"
    bad = run_memcli("--root", example_root, "serve", "--idle-exit", "soon")
    assert bad.returncode == 2 and "--idle-exit" in bad.stderr, bad.stderr


def test_the_hook_starts_a_server_for_its_root(example_root):
    """MEMCLI_SERVE unset: the hook answers the first prompt itself and starts a server, isolated
    (-I, working in /), that answers the next; the server exits when its runtime folder goes."""
    assert run_memcli("hook", "allow", example_root).returncode == 0
    env = {"MEMCLI_SERVE": "auto"}
    first = run_memcli(
        "hook", "claude-code", input=event(example_root, "上次那个 charset 的方案?"), env=env, cwd=example_root
    )
    assert first.returncode == 0 and "charset" in first.stdout.lower()
    deadline = time.time() + 30
    while served(example_root) < 0 and time.time() < deadline:
        time.sleep(0.1)
    pid = remote.ask(example_root, {"op": "ping"})["pid"]
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert cmdline[:7] == [
            sys.executable.encode(),
            b"-I",
            b"-m",
            b"memcli",
            b"--root",
            os.fsencode(str(example_root.resolve())),
            b"serve",
        ]
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        again = run_memcli(
            "hook", "claude-code", input=event(example_root, "上次那个 charset 的方案?"), env=env, cwd=example_root
        )
        assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
        assert served(example_root) == 1
    finally:
        shutil.rmtree(os.environ["XDG_RUNTIME_DIR"])  # its socket is gone: it stops
        deadline = time.time() + 30
        while os.path.exists(f"/proc/{pid}") and time.time() < deadline:
            try:
                if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                    break
            except OSError:
                break
            time.sleep(0.2)
        alive = os.path.exists(f"/proc/{pid}") and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        if alive:
            os.kill(pid, signal.SIGTERM)
        assert not alive


def test_a_per_turn_command_starts_a_server_for_its_root(example_root):
    """MEMCLI_SERVE unset: a shell script's first recall runs in its own process and starts a server
    for the root (isolated, working in /), which answers its next commands; a command that is not
    per-turn starts none."""
    env = {"MEMCLI_SERVE": "auto"}
    assert run_memcli("--root", example_root, "list", env=env).returncode == 0
    time.sleep(0.5)
    assert served(example_root) < 0  # none started by a listing
    first = run_memcli("--root", example_root, "recall", "charset", env=env)
    assert first.returncode == 0
    deadline = time.time() + 30
    while served(example_root) < 0 and time.time() < deadline:
        time.sleep(0.1)
    pid = remote.ask(example_root, {"op": "ping"})["pid"]
    try:
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        again = run_memcli("--root", example_root, "recall", "charset", env=env)
        assert (again.returncode, again.stdout) == (first.returncode, first.stdout) and served(example_root) == 1
    finally:
        os.kill(pid, signal.SIGTERM)


def test_frames():
    assert resident.unpack(resident.pack(b"", b"a:b", "é".encode())) == [b"", b"a:b", "é".encode()]
    for bad in (b"3:ab", b"x:a", b":", b"-1:", b"2a:ab"):
        assert resident.unpack(bad) is None


def test_declined_when_the_code_or_the_interpreter_differs(example_root):
    from memcli.core import Memory
    from memcli.serve import Resident

    server = Resident(Memory(example_root))
    env, cwd, mask = resident.settings(), str(example_root), b"%d" % server.umask
    assert server._declines(server.stamp, server.root, mask, env, sys.path, cwd) in (None, "other plugins")
    assert server._declines(b"elsewhere", server.root, mask, env, sys.path, cwd) == "another memcli"
    assert server._declines(server.stamp, server.root, mask, {**env, "HOME": "/elsewhere"}, sys.path, cwd) == (
        "another environment (HOME)"
    )
    assert server.code_watch is not None and not server.code_watch()
    server.code_watch = lambda: True  # as if a file of memcli changed after it started
    assert server._declines(server.stamp, server.root, mask, env, sys.path, cwd) == "memcli changed on disk"
    assert server.stopping
    server.stopping, server.code_watch = False, None  # where inotify is missing: a stat of each file
    server.code = {**server.code, next(iter(server.code)): (0, 0, 0)}
    assert server._declines(server.stamp, server.root, mask, env, sys.path, cwd) == "memcli changed on disk"


def test_a_change_under_followed_folders_is_seen(tmp_path):
    from memcli.store.watcher import changed

    (tmp_path / "a").mkdir()
    watch = changed([tmp_path / "a"])
    try:
        assert not watch()
        (tmp_path / "b.py").write_text("x")  # elsewhere
        assert not select.select([watch], [], [], 0.3)[0] and not watch()
        (tmp_path / "a" / "c.py").write_text("x")
        assert select.select([watch], [], [], 10)[0]
        assert watch() and watch()  # it stays changed
    finally:
        watch.close()


def _search_cache_behind(root) -> tuple:
    """(added, changed, removed) a details recall would sync into the root's search cache now."""
    from memcli.search.cache import SearchCache
    from memcli.store import layout

    stats = SearchCache(root / ".memcli" / "search").sync(layout.detail_files(root), lambda key: None)
    return stats.added, stats.changed, stats.removed


def _in_step(root) -> bool:
    """Whether the root's search cache holds every file of the details layer as it is (read only)."""
    from memcli.search.cache import SearchCache
    from memcli.store import layout

    with SearchCache(root / ".memcli" / "search") as cache:
        return cache.keys() == dict(layout.detail_files(root))


def prepared(root, timeout: float = 15.0) -> None:
    """Wait until the server has done what it does once quiet after a command that wrote."""
    deadline = time.monotonic() + timeout
    while remote.ask(root, {"op": "ping"}, timeout=5)["preparing"]:
        assert time.monotonic() < deadline, "the server never prepared"
        time.sleep(0.02)


def test_after_a_turn_that_wrote_the_server_brings_the_search_cache_up_to_date(example_root):
    """Once it has answered a command that wrote (the hook or session add folding a turn into the
    episode log, remember), or the details layer's files changed under it (another process, an
    editor), the server tokenises what changed, so the next turn's details recall finds the search
    cache in step; a root without a search cache gets none behind its back."""
    root = example_root
    (root / "memcli.yaml").write_text("session:\n  max_rounds: 1\n", encoding="utf-8")
    manual = {"MEMCLI_SERVE": "manual"}
    proc = start_server(root)
    try:
        assert run_memcli("--root", root, "session", "add", "user", "no cache yet", env=manual).returncode == 0
        prepared(root)
        assert not (root / ".memcli" / "search" / "search.sqlite3").exists()
        assert run_memcli("--root", root, "recall", "alembic", "--layer", "details", env=manual).returncode == 0
        for args in (
            ["session", "add", "user", "the quokka turn"],
            ["session", "add", "user", "another turn"],
            ["remember", "Served quokka note", "a summary"],
        ):
            before = served(root)
            assert run_memcli("--root", root, *args, env=manual).returncode == 0
            assert served(root) == before + 1
            prepared(root)
            assert _search_cache_behind(root) == (0, 0, 0), args
        assert list((root / "memory" / "episodes").glob("*.md"))  # the turns were folded
        before = served(root)
        assert run_memcli("--root", root, "session", "add", "user", "a turn of its own").returncode == 0
        (root / "memory" / "edited.md").write_text("---\ntitle: Edited by hand\n---\nthe wombat\n", encoding="utf-8")
        # the kernel tells the server of the edit a moment later: wait until its cache holds the file
        deadline = time.monotonic() + 15
        while not _in_step(root):
            assert time.monotonic() < deadline, "the server never brought the cache up to date"
            prepared(root)
            time.sleep(0.05)
        assert served(root) == before and _search_cache_behind(root) == (0, 0, 0)
    finally:
        stop(proc)
    # the same turn in a process of its own leaves the work to the next recall
    assert run_memcli("--root", root, "session", "add", "user", "a turn alone").returncode == 0
    assert _search_cache_behind(root) != (0, 0, 0)


def test_a_root_replaced_under_the_server_is_followed_anew(example_root):
    """`mv root root.old && cp -a root.old root`, then an edit in the new folder: the server sees the
    root and memory/ are other folders now (their inodes), not only that they went, and its recall
    reads the new files."""
    root = example_root
    manual = {"MEMCLI_SERVE": "manual"}
    run_memcli("--root", root, "recall", "alembic", "--layer", "details", env={"MEMCLI_SERVE": "off"})
    proc = start_server(root)
    try:
        assert run_memcli("--root", root, "recall", "alembic", "--layer", "details", env=manual).returncode == 0
        old = root.with_name("ex.old")
        os.rename(root, old)
        subprocess.run(["cp", "-a", str(old), str(root)], check=True)
        detail = next(p for p in (root / "memory").glob("*.md") if "charset" in p.read_text(encoding="utf-8"))
        with open(detail, "a", encoding="utf-8") as f:
            f.write("\nThe qwertzuiop collation matters too.\n")
        n = served(root)
        found = run_memcli("--root", root, "recall", "qwertzuiop", "--layer", "details", "--json", env=manual)
        assert served(root) == n + 1  # the server answered
        assert found.returncode == 0 and json.loads(found.stdout)["data"]["hits"][0]["id"] == detail.stem
    finally:
        stop(proc)
