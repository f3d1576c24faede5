"""`memcli sync` against real git (issue 16, items 3, 10, 11, 12): a failed merge driver stops
it with nothing pushed, a memory one side forgot and the other changed is listed again, secrets
are never committed, and only memcli's own files are."""

import json

import pytest

from conftest import git, invoke, shared_origin

pytestmark = pytest.mark.usefixtures("git_env")


def mc(root, *args, code=0):
    """memcli in this process (git still runs the merge drivers as processes)."""
    res = invoke(["--root", root, *args])
    assert code is None or res.exit_code == code, (args, res.exit_code, res.output)
    return res


@pytest.fixture
def origin(tmp_path):
    """A bare origin holding one shared memory, and a function that makes a git-ready clone."""
    return shared_origin(
        tmp_path,
        mc,
        lambda seed: mc(seed, "remember", "Shared note", "first", "--body", "alpha\nbeta\n", "-t", "shared"),
    )


TOK = "ghp_" + "Zq8Lr2Vx7Nw4Kp1Ty6Bm3Hd9Gf5Sj0Ce2Ua7"  # a GitHub token's shape, 36 characters after ghp_


def remote_head(repo):
    return git(repo, "ls-remote", "origin", "HEAD").stdout.split()[0]


def test_03_a_failed_merge_driver_stops_sync_and_pushes_nothing(origin):
    a, b = origin("a"), origin("b")
    mc(a, "update", "shared-note", "--summary", "from a", "--append", "line from a")
    mc(a, "sync")
    mc(b, "update", "shared-note", "--summary", "from b", "--append", "line from b")
    pushed = remote_head(b)
    p = mc(b, "sync", "--command", "/nonexistent/memcli", "--json", code=1)  # git cannot start the driver
    data = json.loads(p.stdout)["data"]
    assert "memory/shared-note.md" in data["driver_failed"] and not data["pushed"]
    assert any("merge driver" in w for w in json.loads(p.stdout)["warnings"])
    assert remote_head(b) == pushed  # nothing pushed
    assert not data["merging"] and git(b, "status", "--porcelain").stdout == ""  # back to before the merge
    assert "line from a" not in (b / "memory/shared-note.md").read_text()  # theirs not settled as ours
    p = mc(b, "sync", "--command", "/nonexistent/memcli", code=1)
    assert "the merge driver failed on memory/shared-note.md" in p.stderr
    mc(b, "sync")  # with the driver working, both sides are kept
    body = (b / "memory/shared-note.md").read_text()
    assert "line from a" in body and "line from b" in body


def test_03_a_conflicted_file_left_as_our_side_is_never_settled(origin):
    """A merge found in progress (git's own `pull` with a broken driver): the file is byte for byte
    our side, so sync does not add it as merged."""
    a, b = origin("a"), origin("b")
    mc(a, "update", "shared-note", "--append", "line from a")
    mc(a, "sync")
    mc(b, "update", "shared-note", "--append", "line from b")
    git(b, "commit", "-qam", "b's change")
    git(b, "fetch", "-q")
    git(b, "-c", "merge.memcli-detail.driver=false", "merge", "--no-edit", "origin/master", check=False)
    p = mc(b, "sync", "--json", code=1)
    data = json.loads(p.stdout)["data"]
    assert data["driver_failed"] == ["memory/shared-note.md"] and data["merging"] and not data["pushed"]
    assert "memory/shared-note.md" in git(b, "diff", "--name-only", "--diff-filter=U").stdout
    git(b, "merge", "--abort")  # the way out the message gives; then sync merges with the drivers
    mc(b, "sync")
    body = (b / "memory/shared-note.md").read_text()
    assert "line from a" in body and "line from b" in body


def test_10_a_memory_forgotten_on_one_side_and_updated_on_the_other_is_indexed(origin):
    a, b = origin("a"), origin("b")
    mc(a, "forget", "shared-note", "--yes")
    mc(a, "sync")
    mc(b, "update", "shared-note", "--summary", "still needed")
    mc(b, "sync")
    assert "→ memory/shared-note.md" in (b / "MEMORY.md").read_text()
    codes = [f["code"] for f in json.loads(mc(b, "heartbeat", "--json").stdout)["data"]["findings"]]
    assert "detail-not-indexed" not in codes
    mc(a, "sync")  # and the other clone gets it back, listed
    assert "→ memory/shared-note.md" in (a / "MEMORY.md").read_text()


def test_10_heartbeat_fix_lists_a_memory_missing_from_the_index(tmp_path):
    r = tmp_path / "r"
    mc(tmp_path, "init", r)
    mc(r, "remember", "Plain note", "an ordinary one")
    index = r / "MEMORY.md"
    index.write_text("".join(ln for ln in index.read_text().splitlines(True) if "plain-note" not in ln))
    found = json.loads(mc(r, "heartbeat", "--json").stdout)["data"]["findings"]
    assert [f["code"] for f in found if f["path"] == "memory/plain-note.md"] == ["detail-not-indexed"]
    mc(r, "heartbeat", "--fix")
    assert "→ memory/plain-note.md" in index.read_text()
    found = json.loads(mc(r, "heartbeat", "--json").stdout)["data"]["findings"]
    assert not [f for f in found if f["code"] == "detail-not-indexed"]


def test_11_sync_never_commits_a_secret(origin):
    a = origin("a")
    mc(a, "remember", "Deploy notes", "how we deploy")
    path = a / "memory/deploy-notes.md"
    path.write_text(path.read_text() + f"\ntoken for the bot: {TOK}\n")  # written by hand
    before = remote_head(a)
    p = mc(a, "sync", "--json", code=1)
    data = json.loads(p.stdout)["data"]
    line = path.read_text().splitlines().index(f"token for the bot: {TOK}") + 1
    assert data["secrets"] == [{"path": "memory/deploy-notes.md", "line": line, "kind": data["secrets"][0]["kind"]}]
    assert not data["committed"] and not data["pushed"] and remote_head(a) == before
    assert git(a, "log", "--all", "-p").stdout.count(TOK) == 0
    p = mc(a, "sync", code=1)
    assert f"memory/deploy-notes.md:{line}:" in p.stderr and "not committed" in p.stderr
    path.write_text(path.read_text().replace(TOK, "(in the vault)"))
    mc(a, "sync")
    assert "memory/deploy-notes.md" in git(a, "ls-files").stdout


def test_11_secrets_allowed_by_the_users_own_configuration(origin):
    a = origin("a")
    (a / ".memcli").mkdir(exist_ok=True)
    (a / ".memcli/config.yaml").write_text("write:\n  secrets: allow\n")
    (a / "memory/key.md").write_text(f"---\nid: key\ntitle: Key\nsummary: k\n---\n{TOK}\n")
    mc(a, "sync")
    assert "memory/key.md" in git(a, "ls-files").stdout


def test_11_a_committed_secrets_allow_does_not_let_sync_push_secrets(origin):
    a = origin("a")
    (a / "memcli.yaml").write_text("write:\n  secrets: allow\n")
    mc(a, "sync")  # someone else's memcli.yaml, pushed
    b = origin("b")
    (b / "memory/key.md").write_text(f"---\nid: key\ntitle: Key\nsummary: k\n---\n{TOK}\n")
    p = mc(b, "sync", "--json", code=1)
    assert json.loads(p.stdout)["data"]["secrets"][0]["path"] == "memory/key.md"


def test_11_sync_commits_only_what_the_one_write_check_lets_in(origin):
    """A hand edit sync is about to commit passes the same check as every write: a control
    character (an escape sequence for the reader's terminal) stops it like a secret does."""
    a = origin("a")
    mc(a, "remember", "Deploy notes", "how we deploy")
    path = a / "memory/deploy-notes.md"
    path.write_text(path.read_text() + "see \x1b]8;;https://x.example\x1b\\here\x1b]8;;\x1b\\\n")
    line = len(path.read_text().splitlines())
    before = remote_head(a)
    p = mc(a, "sync", "--json", code=1)
    data = json.loads(p.stdout)["data"]
    assert data["refused"] == [{"path": "memory/deploy-notes.md", "line": line, "kind": "control character U+001B"}]
    assert data["secrets"] == [] and not data["committed"] and remote_head(a) == before
    p = mc(a, "sync", code=1)
    assert f"memory/deploy-notes.md:{line}: control character U+001B: not committed" in p.stderr
    path.write_text(path.read_text().replace("\x1b", ""))
    mc(a, "sync")
    assert remote_head(a) != before


def test_12_sync_commits_only_memclis_files(tmp_path):
    """The root is a folder of a larger repository; work elsewhere, staged or not, stays out."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "remote", "add", "origin", str(bare))
    (repo / "README").write_text("project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "start")
    root = repo / "notes"
    mc(repo, "init", root, "--git")
    mc(root, "remember", "Release steps", "tag, then push")
    (repo / "app.py").write_text("print('work in progress')\n")
    git(repo, "add", "app.py")  # staged elsewhere in the repository
    (root / ".env").write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY1\n")
    (root / "scratch.txt").write_text("not a memory\n")
    p = mc(root, "sync", "--json")
    data = json.loads(p.stdout)["data"]
    assert data["pushed"] and sorted(data["left_alone"]) == [".env", "scratch.txt"]
    assert "not memcli's files, left for you to commit: " in mc(root, "sync").stderr
    pushed = git(repo, "ls-tree", "-r", "--name-only", "origin/master").stdout.split()
    assert "notes/memory/release-steps.md" in pushed and "notes/MEMORY.md" in pushed
    assert "app.py" not in pushed and "notes/.env" not in pushed and "notes/scratch.txt" not in pushed
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["app.py"]  # still staged
    assert not any(t.startswith("notes/.memcli/") for t in pushed)


def test_12_staged_work_elsewhere_stops_a_merge_with_a_clear_error(origin):
    a, b = origin("a"), origin("b")
    mc(a, "remember", "From a", "a")
    mc(a, "sync")
    mc(b, "remember", "From b", "b")
    (b / "app.py").write_text("x = 1\n")
    git(b, "add", "app.py")
    before = remote_head(b)
    p = mc(b, "sync", code=3)
    assert "app.py" in p.stderr and "staged outside memcli's files" in p.stderr
    assert remote_head(b) == before
    assert git(b, "diff", "--cached", "--name-only").stdout.split() == ["app.py"]


def test_state_tracked_by_git_is_reported_and_never_committed(origin):
    a = origin("a")
    (a / ".memcli").mkdir(exist_ok=True)
    (a / ".memcli/config.yaml").write_text("index:\n  max_lines: 30\n")
    git(a, "add", "-f", ".memcli/config.yaml")
    git(a, "commit", "-qm", "force-added local state")
    (a / ".memcli/config.yaml").write_text("index:\n  max_lines: 20\n")
    p = mc(a, "sync", "--json")
    assert any(".memcli/ is tracked" in w for w in json.loads(p.stdout)["warnings"])
    assert git(a, "status", "--porcelain", "--", ".memcli").stdout.strip() == "M .memcli/config.yaml"
    found = json.loads(mc(a, "heartbeat", "--json").stdout)["data"]["findings"]
    f = [x for x in found if x["code"] == "state-tracked"]
    assert f and "git rm -r --cached .memcli" in f[0]["fix"]
    git(a, "rm", "-r", "-q", "--cached", ".memcli")
    git(a, "commit", "-qm", "stop tracking local state")
    found = json.loads(mc(a, "heartbeat", "--json").stdout)["data"]["findings"]
    assert not [x for x in found if x["code"] == "state-tracked"]


def test_11_the_scan_reads_no_file_outside_the_root(origin, tmp_path):
    """A symlink is committed as its target's name: the scan reads that, never the file it leads to."""
    a = origin("a")
    outside = tmp_path / "private.txt"
    outside.write_text(f"{TOK}\n")
    (a / "memory/link.md").symlink_to(outside)
    data = json.loads(mc(a, "sync", "--json").stdout)["data"]
    assert data["secrets"] == [] and data["pushed"]


def test_31_sync_says_what_it_dropped_from_a_remote_index_and_why(origin):
    """A remote MEMORY.md of 10,000 entries pointing at files nobody committed: the merged index
    keeps the memories that exist, and sync says in one line how many lines went, which, and why."""
    from conftest import run_memcli

    victim, evil = origin("victim"), origin("evil")
    index = (evil / "MEMORY.md").read_text(encoding="utf-8")
    ghosts = "".join(f"- **Ghost {i}**: nothing here | → memory/ghost-{i}.md\n" for i in range(10_000))
    (evil / "MEMORY.md").write_text(index + ghosts, encoding="utf-8")
    git(evil, "commit", "-qam", "an index of memories that do not exist")
    git(evil, "push", "-q", "origin", "HEAD")
    mc(victim, "remember", "Cache rule", "clear the cache after a deploy")
    r = run_memcli("--root", victim, "sync")
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if "dropped" in ln]
    assert len(said) == 1 and len(r.stderr.splitlines()) == 4, r.stderr  # committed, merged, pushed
    assert "dropped 10,000 line(s) of the merged MEMORY.md" in said[0] and "neither side" in said[0]
    assert "ghost-0, ghost-1, ghost-2 and 9,997 more" in said[0]
    lines = (victim / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert {ln.split("→ memory/")[1][:-3] for ln in lines if "→" in ln} == {"shared-note", "cache-rule"}
    data = json.loads(mc(victim, "sync", "--json").stdout)["data"]
    assert data["code"] == 0 and not any("dropped" in w for w in data["warnings"])  # said once, when it happened
