"""Sharing a root through real git: a bare origin, clones, the real CLI in subprocesses."""

import json
import sys
from pathlib import Path

import pytest

from conftest import GIT_ENV, git, run_memcli, shared_origin


def mc(root, *args, code=0, input=None):
    p = run_memcli("--root", root, *args, input=input, env=GIT_ENV)
    assert code is None or p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def origin(tmp_path):
    """A bare origin holding one shared memory, and a function that makes a git-ready clone."""
    return shared_origin(
        tmp_path,
        mc,
        lambda seed: mc(seed, "remember", "Shared note", "first", "--body", "alpha\nbeta\n", "-t", "shared"),
    )


def test_init_git_makes_a_root_git_ready(tmp_path):
    r = tmp_path / "notes"
    mc(tmp_path, "init", r, "--git")
    assert {".memcli/", ".memcli-tmp-*"} <= set((r / ".gitignore").read_text().split())
    attrs = git(r, "check-attr", "merge", "MEMORY.md", "memory/x.md", "memory/episodes/2026-01-01.md").stdout
    assert "MEMORY.md: merge: memcli-index" in attrs
    assert "memory/x.md: merge: memcli-detail" in attrs
    assert "memory/episodes/2026-01-01.md: merge: memcli-episode" in attrs
    driver = git(r, "config", "merge.memcli-detail.driver").stdout
    assert driver.startswith(sys.executable) and "-m memcli.gitmerge detail %O %A %B %L %P" in driver
    mc(r, "git", "setup", "--check")
    mc(r, "git", "setup")  # twice: nothing is added twice
    assert (r / ".gitattributes").read_text().count("MEMORY.md merge=memcli-index") == 1


def test_a_fresh_clone_is_reported_until_set_up(origin):
    b = origin("b", setup=False)
    p = mc(b, "heartbeat", "--check", "--json", code=1)
    found = [f for f in json.loads(p.stdout)["data"]["findings"] if f["code"] == "git-drivers-missing"]
    assert found and "git setup" in found[0]["fix"]
    mc(b, "git", "setup", "--check", code=1)
    mc(b, "git", "setup")
    mc(b, "heartbeat", "--check")


def test_a_root_inside_a_repository_that_never_set_up_sharing_is_only_told(tmp_path):
    """A root that merely sits inside a git repository (no memcli lines in .gitattributes) gets the
    set-up suggestion as info: heartbeat --check passes. Once .gitattributes names the drivers,
    a clone without them registered is a warning (the test above)."""
    git(tmp_path, "init", "-q")
    root = tmp_path / "notes"
    mc(tmp_path, "init", str(root))
    p = mc(root, "heartbeat", "--check", "--json")
    found = {f["code"]: f["severity"] for f in json.loads(p.stdout)["data"]["findings"]}
    assert found.get("git-drivers-missing") == "info" and found.get("git-attributes-missing") == "info"


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_two_clones_add_and_update_then_converge(origin):
    a, b = origin("a"), origin("b")
    mc(a, "remember", "From A", "a")
    mc(a, "update", "shared-note", "--summary", "summary from a", "--append", "a line")
    mc(a, "session", "add", "user", "hello from a")
    mc(b, "remember", "From B", "b")
    mc(b, "update", "shared-note", "--summary", "summary from b", "--append", "b line")
    mc(a, "sync")
    mc(b, "sync")
    mc(a, "sync")
    for r in (a, b):
        mc(r, "index", "check")
        mc(r, "heartbeat", "--check")

    def files(r):
        return {p.relative_to(r): p.read_bytes() for p in r.rglob("*.md") if ".git" not in p.parts}

    assert files(a) == files(b)
    body = (a / "memory" / "shared-note.md").read_text()
    assert "a line" in body and "b line" in body
    current = "summary from b" if "summary: summary from b" in body else "summary from a"
    loser = "summary from a" if current == "summary from b" else "summary from b"
    assert f"summary was: {loser}" in body and "summary was: first" in body
    assert "From A" in (a / "MEMORY.md").read_text() and "From B" in (a / "MEMORY.md").read_text()


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_two_machines_merging_the_same_histories_write_the_same_index(origin):
    a, b = origin("a"), origin("b")
    for i in range(3):
        mc(a, "remember", f"A memory {i}", "x", "-i", str(0.3 + i / 10))
        mc(b, "remember", f"B memory {i}", "y", "-i", str(0.35 + i / 10))
    mc(a, "update", "shared-note", "--summary", "changed on a")
    mc(b, "update", "shared-note", "--summary", "changed on b")
    for r in (a, b):
        git(r, "add", "-A")
        git(r, "commit", "-qm", "work")
    git(a, "fetch", "-q", str(b), "HEAD:refs/heads/other")
    git(b, "fetch", "-q", str(a), "HEAD:refs/heads/other")
    git(a, "merge", "-q", "--no-edit", "other")  # plain git, with the registered drivers
    git(b, "merge", "-q", "--no-edit", "other")
    assert (a / "MEMORY.md").read_bytes() == (b / "MEMORY.md").read_bytes()
    assert (a / "memory/shared-note.md").read_bytes() == (b / "memory/shared-note.md").read_bytes()
    assert "<<<<<<<" not in (a / "MEMORY.md").read_text()


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_a_merge_of_two_full_indexes_still_fits(origin):
    """Each clone fills its index; the merged MEMORY.md holds both sides' entries only as far as
    they fit: the lowest-ranked move out (their detail files stay), on both machines alike."""
    a = origin("a")
    (a / "memcli.yaml").write_text("index:\n  max_lines: 10\n")
    mc(a, "sync")
    b = origin("b")
    for i in range(6):
        mc(a, "remember", f"A memory {i}", "x", "-i", str(0.3 + i / 20))
        mc(b, "remember", f"B memory {i}", "y", "-i", str(0.32 + i / 20))
    mc(a, "sync")
    mc(b, "sync")
    mc(a, "sync")
    for r in (a, b):
        assert len((r / "MEMORY.md").read_text().splitlines()) < 10
        mc(r, "index", "check")
        mc(r, "heartbeat", "--check")
        assert len(list((r / "memory").glob("*-memory-*.md"))) == 12
    assert (a / "MEMORY.md").read_bytes() == (b / "MEMORY.md").read_bytes()


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_a_body_conflict_is_a_first_class_state(origin):
    a, b = origin("a"), origin("b")
    (a / "memory/shared-note.md").write_text((a / "memory/shared-note.md").read_text().replace("beta", "beta A"))
    (b / "memory/shared-note.md").write_text((b / "memory/shared-note.md").read_text().replace("beta", "beta B"))
    mc(a, "sync")
    p = mc(b, "sync", "--json", code=1)
    assert json.loads(p.stdout)["data"]["conflicts"] == ["memory/shared-note.md"]
    text = (b / "memory/shared-note.md").read_text()
    assert "<<<<<<< " in text and "\n=======\n" in text and ">>>>>>> " in text
    p = mc(b, "index", "check", code=1)
    assert "memory/shared-note.md:" in p.stdout and "conflict" in p.stdout
    p = mc(b, "heartbeat", "--check", "--json", code=1)
    assert any(f["code"] == "conflict-markers" and f["line"] for f in json.loads(p.stdout)["data"]["findings"])
    p = mc(b, "recall", "beta", "--json", code=None)
    warnings = json.loads(p.stdout)["warnings"]
    line = text.splitlines().index("<<<<<<< ours") + 1
    # one warning for the file (the index and the details layers both keep it), with the file's own line
    assert [w for w in warnings if "shared-note" in w] == [
        f"memory/shared-note.md holds unresolved git conflict markers (line {line}): both sides are shown; "
        "`memcli resolve shared-note --ours|--theirs|--both` (the other side goes to ## History), or edit the "
        "file and delete the marker lines"
    ]
    assert any(h["id"] == "shared-note" for h in json.loads(p.stdout)["data"]["hits"])
    p = mc(b, "update", "shared-note", "--append", "more", code=3)
    assert "memcli resolve shared-note" in p.stderr
    assert (b / "memory/shared-note.md").read_text() == text  # nothing landed on the markers
    mc(b, "sync", code=1)  # still conflicted: nothing committed
    mc(b, "resolve", "shared-note", "--theirs")
    body = (b / "memory/shared-note.md").read_text()
    assert "beta A" in body and "<<<<<<<" not in body
    assert "ours had: beta B" in body.split("## History")[1]
    mc(b, "sync")
    message = git(b, "log", "-1", "--format=%B").stdout
    assert message.startswith("Merge ") and "#" not in message  # no "# Conflicts:" notes in the merge commit
    mc(a, "sync")
    assert (a / "memory/shared-note.md").read_bytes() == (b / "memory/shared-note.md").read_bytes()
    mc(a, "index", "check")


def test_heartbeat_fix_rebuilds_a_conflicted_index(root):
    mc(root, "remember", "One", "first")
    mc(root, "remember", "Two", "second")
    lines = (root / "MEMORY.md").read_text().splitlines()
    ones = [ln for ln in lines if "**One**" in ln or "**Two**" in ln]
    rest = [ln for ln in lines if ln not in ones]
    conflicted = rest + ["<<<<<<< HEAD", ones[0], "=======", ones[1], ">>>>>>> other"]
    (root / "MEMORY.md").write_text("\n".join(conflicted) + "\n")
    p = mc(root, "remember", "Three", "third", code=3)
    assert "heartbeat --fix" in p.stderr
    p = mc(root, "index", "check", code=1)
    assert "MEMORY.md:" in p.stdout and "conflict" in p.stdout
    p = mc(root, "recall", "first", "--json", code=None)
    out = json.loads(p.stdout)
    assert any(w.startswith("skipped MEMORY.md") for w in out["warnings"])
    assert all(h["layer"] != "index" for h in out["data"]["hits"])
    mc(root, "heartbeat", "--fix")
    text = (root / "MEMORY.md").read_text()
    assert "<<<<<<<" not in text and "**One**" in text and "**Two**" in text
    mc(root, "index", "check")
    mc(root, "remember", "Three", "third")


def test_sync_offline_commits_only_and_never_commits_state_or_temp_files(tmp_path):
    r = tmp_path / "solo"
    mc(tmp_path, "init", r, "--git")
    git(r, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    mc(r, "remember", "Kept", "k")
    (r / "memory" / ".memcli-tmp-dead.tmp").write_text("torn")
    (r / ".gitignore").write_text("")  # even without the ignore lines
    p = mc(r, "sync", "--json")
    data = json.loads(p.stdout)["data"]
    assert data["offline"] and data["committed"] and not data["pushed"]
    tracked = git(r, "ls-files").stdout.split()
    assert "memory/kept.md" in tracked
    assert not [t for t in tracked if t.startswith(".memcli/") or Path(t).name.startswith(".memcli-tmp-")]
    assert (r / "memory" / ".memcli-tmp-dead.tmp").exists() and (r / ".memcli").is_dir()


def test_sync_refuses_to_commit_a_file_with_markers(tmp_path):
    r = tmp_path / "solo"
    mc(tmp_path, "init", r, "--git")
    mc(r, "remember", "Note", "n")
    path = r / "memory" / "note.md"
    path.write_text(path.read_text() + "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n")
    p = mc(r, "sync", code=1)
    assert "memory/note.md" in p.stderr
    assert git(r, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0  # nothing committed
    mc(r, "resolve", "note", "--both")
    mc(r, "sync")
    assert "memory/note.md" in git(r, "ls-files").stdout


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_forget_on_one_side_and_update_on_the_other_keeps_the_update(origin):
    a, b = origin("a"), origin("b")
    mc(a, "forget", "shared-note", "--yes")
    mc(b, "update", "shared-note", "--summary", "still needed")
    mc(a, "sync")
    p = mc(b, "sync", "--json")
    assert any("forgotten on one side" in w for w in json.loads(p.stdout)["warnings"])
    assert "still needed" in (b / "memory/shared-note.md").read_text()
    mc(b, "index", "check")


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_drivers_through_the_command_line(origin):
    """`git setup --command CMD` registers `CMD merge …`: the Typer commands git then runs."""
    a, b = origin("a"), origin("b")
    for r in (a, b):
        mc(r, "git", "setup", "--command", f"{sys.executable} -m memcli")
        assert " -m memcli merge index %O %A %B %P" in git(r, "config", "merge.memcli-index.driver").stdout
    mc(a, "remember", "Only on A", "a")
    mc(a, "update", "shared-note", "--append", "from a")
    mc(b, "remember", "Only on B", "b")
    mc(b, "update", "shared-note", "--append", "from b")
    mc(a, "sync")
    mc(b, "sync")
    text = (b / "MEMORY.md").read_text()
    assert "Only on A" in text and "Only on B" in text
    body = (b / "memory/shared-note.md").read_text()
    assert "from a" in body and "from b" in body and "<<<<<<<" not in body


def test_library_reconciles_the_index_and_resolves_a_memory(root):
    """The same through the library: Memory.reconcile_index, the repair plan, Memory.resolve."""
    from memcli import Memory
    from memcli.errors import UsageError
    from memcli.heartbeat import plan
    from memcli.store.markers import ConflictError

    mem = Memory(root)
    mem.remember("One", "first")
    mem.remember("Two", "second")
    lines = (root / "MEMORY.md").read_text().splitlines()
    ones = [ln for ln in lines if "**One**" in ln or "**Two**" in ln]
    rest = [ln for ln in lines if ln not in ones]
    (root / "MEMORY.md").write_text(
        "\n".join(rest + ["<<<<<<< HEAD", ones[0], "=======", ones[1], ">>>>>>> other"]) + "\n"
    )
    assert [a.kind for a in plan(mem.audit())] == ["rebuild-index"]
    assert any(p.path == "MEMORY.md" and "conflict" in p.message for p in mem.check_index())
    assert mem.reconcile_index() is True
    assert mem.reconcile_index() is False  # deterministic: nothing left to change
    assert mem.check_index() == []
    path = root / "memory" / "one.md"
    path.write_text(path.read_text() + "<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> b\n")
    with pytest.raises(ConflictError):
        mem.update("one", append="more")
    res = mem.resolve("one", "ours", now="2026-02-03T00:00:00Z")
    assert res["kept_in_history"] == 1
    text = path.read_text()
    assert "mine" in text and "2026-02-03" in text and "theirs had: yours" in text
    with pytest.raises(UsageError):
        mem.resolve("one", "ours")  # nothing left to settle
    mem.update("one", append="more")


def test_resolve_keeps_no_history_of_the_updated_time(root):
    """A memory merged by plain git (a clone without memcli's drivers): its `updated:` lines and its
    body conflict. Settling it keeps the other side's text in History, not its timestamp."""
    from memcli import Memory

    mem = Memory(root)
    mem.remember("One", "first", body="common\n")
    path = root / "memory" / "one.md"
    text = path.read_text()
    updated = next(ln for ln in text.splitlines() if ln.startswith("updated: "))
    text = text.replace(updated, f"<<<<<<< HEAD\n{updated}\n=======\nupdated: 2026-02-02T11:00:00Z\n>>>>>>> other")
    path.write_text(text.replace("common\n", "common\n<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> other\n"))
    res = mem.resolve("one", "ours", now="2026-02-03T00:00:00Z")
    history = path.read_text().split("## History")[1]
    assert res["kept_in_history"] == 1 and "theirs had: yours" in history and "updated" not in history
    assert updated in path.read_text()


def test_resolve_passes_the_settled_file_through_the_write_check(root):
    """Plain git (a clone without memcli's drivers) leaves the other side's text unchecked in the
    file: settling it, whichever side is kept (the other goes into History), is refused when it
    holds a secret, and the file stays as it was; under `write.secrets: redact` it is redacted."""
    key = "AKIAIOSFODNN7EXAMPLQ"
    mc(root, "remember", "Deploy key", "where the key is", "--id", "deploy-key")
    path = root / "memory" / "deploy-key.md"
    text = path.read_text() + f"<<<<<<< HEAD\nvault\n=======\n{key}\n>>>>>>> b\n"
    path.write_text(text)
    for side in ("--theirs", "--ours"):
        r = mc(root, "resolve", "deploy-key", side, code=4)
        assert "secret" in r.stderr and path.read_text() == text
    config = root / "memcli.yaml"
    config.write_text(config.read_text() + "\nwrite:\n  secrets: redact\n")
    r = mc(root, "resolve", "deploy-key", "--theirs")
    assert "redacted" in r.stderr and key not in path.read_text() and "<<<<<<<" not in path.read_text()


def test_init_adds_the_temp_files_to_an_existing_gitignore(tmp_path):
    r = tmp_path / "notes"
    r.mkdir()
    (r / ".gitignore").write_text("*.pyc\n.memcli/\n")
    mc(tmp_path, "init", r)
    assert (r / ".gitignore").read_text() == "*.pyc\n.memcli/\n.memcli-tmp-*\n"
