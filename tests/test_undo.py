"""Nothing is lost by a command: `forget` archives and `restore` brings the memory back with its
index line, `forget --purge` deletes; a failed `edit` reopens its kept draft; the paths recall
prints name memories wherever an id is taken; a burst of new notes leaves the pinned and the more
important ones in MEMORY.md; the same title remembered on two clones merges with a warning naming
both. Through the real command line."""

import json
import stat
import sys

import pytest

from conftest import git, run_memcli, shared_origin


def mc(root, *args, code=0, env=None, input=None):
    p = run_memcli("--root", root, *args, env=env, input=input)
    assert code is None or p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    return p


def entry_line(root, mid):
    return next((ln for ln in (root / "MEMORY.md").read_text().splitlines() if f"memory/{mid}.md" in ln), None)


def test_forget_archives_and_restore_brings_back_the_memory_and_its_line(example_root):
    r = example_root
    text = (r / "memory/mysql-charset.md").read_bytes()
    line = entry_line(r, "mysql-charset")
    p = mc(r, "forget", "mysql-charset")  # no --yes: nothing is deleted
    assert p.stdout == "mysql-charset\n"
    assert "moved to memory/archive/mysql-charset.md" in p.stderr and "memcli restore mysql-charset" in p.stderr
    assert not (r / "memory/mysql-charset.md").exists() and entry_line(r, "mysql-charset") is None
    assert (r / "memory/archive/mysql-charset.md").read_bytes() == text
    rows = [
        x for x in json.loads(mc(r, "list", "--all", "--json").stdout)["data"]["memories"] if x["id"] == "mysql-charset"
    ]
    assert rows and rows[0]["archived"] and not rows[0]["indexed"]
    assert mc(r, "recall", "charset double encoding", code=None).stdout.count("mysql-charset.md") == 0
    mc(r, "index", "check")
    # the same id again is refused with the way back named, not silently a second memory
    p = mc(r, "remember", "MySQL charset", "again", "--id", "mysql-charset", code=4)
    assert "memcli restore mysql-charset" in p.stderr
    data = json.loads(mc(r, "restore", "mysql-charset", "--json").stdout)["data"]
    assert data["action"] == "restored" and data["indexed"]
    assert (r / "memory/mysql-charset.md").read_bytes() == text and not (r / "memory/archive/mysql-charset.md").exists()
    assert entry_line(r, "mysql-charset") == line
    mc(r, "index", "check")


def test_forget_of_an_archived_memory_changes_nothing_and_purge_deletes(example_root):
    r = example_root
    mc(r, "forget", "staging-deploy")
    data = json.loads(mc(r, "forget", "staging-deploy", "--json").stdout)
    assert data["data"]["action"] == "unchanged" and "already archived" in data["warnings"][0]
    assert (r / "memory/archive/staging-deploy.md").is_file()
    p = mc(r, "forget", "staging-deploy", "--purge", code=2)  # off a terminal --purge needs --yes
    assert "--yes" in p.stderr and (r / "memory/archive/staging-deploy.md").is_file()
    data = json.loads(mc(r, "forget", "staging-deploy", "--purge", "--yes", "--json").stdout)["data"]
    assert data["action"] == "purged" and data["path"] == "memory/archive/staging-deploy.md"
    assert not (r / "memory/archive/staging-deploy.md").exists()
    assert "no memory with id 'staging-deploy'" in mc(r, "restore", "staging-deploy", code=3).stderr
    # a live memory purged: file and line gone, nothing in the archive
    mc(r, "forget", "never-force-push-main", "--purge", "--yes")
    assert not list((r / "memory").rglob("never-force-push-main.md")) and entry_line(r, "never-force-push-main") is None


def test_forget_refuses_to_overwrite_an_older_archived_copy(example_root):
    r = example_root
    mc(r, "forget", "mysql-charset")
    mc(r, "remember", "MySQL charset again", "utf8mb4", "--id", "mysql-charset", code=4)  # archived: refused
    (r / "memory/mysql-charset.md").write_text((r / "memory/archive/mysql-charset.md").read_text())
    p = mc(r, "forget", "mysql-charset", code=4)
    assert "already exists" in p.stderr and "memcli rename mysql-charset" in p.stderr
    assert (r / "memory/mysql-charset.md").is_file() and (r / "memory/archive/mysql-charset.md").is_file()


def test_the_library_forgets_into_the_archive_too(example_root):
    from memcli import Memory

    m = Memory(example_root)
    assert m.forget("memory/pyenv-shim-slow-startup.md").path == "memory/archive/pyenv-shim-slow-startup.md"
    assert m.restore("memory/archive/pyenv-shim-slow-startup.md").indexed
    assert m.forget("pyenv-shim-slow-startup", purge=True).action == "purged"


def _editor(path, script):
    """An editor: a Python script given the draft's path as `p` and its text as `t`; what it leaves in
    `t` is saved (exit with `sys.exit(n)` to fail)."""
    path.write_text(
        f"#!{sys.executable}\nimport re, sys\np = sys.argv[1]\nt = open(p, encoding='utf-8').read()\n"
        f"{script}\nopen(p, 'w', encoding='utf-8').write(t)\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {"EDITOR": str(path)}


def test_a_failed_edit_reopens_its_kept_draft(example_root, tmp_path):
    r = example_root
    bad = _editor(
        tmp_path / "bad.py",
        "t = re.sub('(?m)^importance: .*', 'importance: lots', t)\nt += 'my careful new paragraph\\n'",
    )
    p = mc(r, "edit", "mysql-charset", env=bad, code=2)
    assert "your text is kept in .memcli/edits/" in p.stderr
    drafts = sorted((r / ".memcli/edits").glob("mysql-charset-*.md"))
    assert len(drafts) == 1
    mc(r, "update", "mysql-charset", "--append", "a line added meanwhile")
    # the second edit opens the kept draft (the paragraph is there), brought up to the file's change
    fix = _editor(
        tmp_path / "fix.py",
        "'my careful new paragraph' in t or sys.exit(7)\nt = t.replace('importance: lots', 'importance: 0.9')",
    )
    mc(r, "edit", "mysql-charset", env=fix, code=2)  # not reopened unasked: the draft is named
    p = mc(r, "edit", "mysql-charset", "--reuse-draft", env=fix)
    assert "reopening the draft" in p.stderr
    text = (r / "memory/mysql-charset.md").read_text()
    assert "importance: 0.9" in text and "my careful new paragraph" in text and "a line added meanwhile" in text
    assert not list((r / ".memcli/edits").iterdir())  # done: the draft and its base are gone
    # a third edit starts afresh from the file
    p = mc(r, "edit", "mysql-charset", env=_editor(tmp_path / "noop.py", ""))
    assert "reopening" not in p.stderr


def test_a_reopened_draft_shows_an_overlapping_change_between_markers(example_root, tmp_path):
    r = example_root
    ours = _editor(
        tmp_path / "ours.py",
        "t = re.sub('(?m)^summary: .*', 'summary: OURS', t)\nt = re.sub('(?m)^importance: .*', 'importance: x', t)",
    )
    mc(r, "edit", "mysql-charset", env=ours, code=2)
    mc(r, "update", "mysql-charset", "--summary", "THEIRS")
    keep = _editor(tmp_path / "keep.py", "")  # the person looks and saves nothing yet
    p = mc(r, "edit", "mysql-charset", "--reuse-draft", env=keep, code=None)
    assert p.returncode != 0 and "1 place where both differ" in p.stderr
    draft = next((r / ".memcli/edits").glob("mysql-charset-*.md")).read_text()
    assert "<<<<<<< your draft" in draft and "summary: OURS" in draft and "summary: THEIRS" in draft
    assert "summary: THEIRS" in (r / "memory/mysql-charset.md").read_text()  # the file keeps its change
    settle = _editor(
        tmp_path / "settle.py",
        "t = re.sub(r'<<<<<<< your draft\\n(.*?)=======\\n.*?>>>>>>> the file now\\n', r'\\1', t, flags=re.S)\n"
        "t = t.replace('importance: x', 'importance: 0.8')",
    )
    mc(r, "edit", "mysql-charset", "--reuse-draft", env=settle)
    text = (r / "memory/mysql-charset.md").read_text()
    assert "summary: OURS" in text and "importance: 0.8" in text and "<<<<<<<" not in text


def test_paths_recall_prints_are_taken_wherever_an_id_is(example_root):
    r = example_root
    path = "memory/postgres-pool-exhaustion.md"
    assert path in mc(r, "recall", "postgres connection pool exhausted").stdout
    assert "Postgres connection pool" in mc(r, "show", path).stdout
    assert "Postgres connection pool" in mc(r, "show", "./" + path).stdout
    mc(r, "update", path, "--append", "checked again")
    mc(r, "outcome", "memory/staging-deploy.md", "success")
    mc(r, "rename", path, "pg-pool")
    assert (r / "memory/pg-pool.md").is_file()
    mc(r, "forget", "memory/pg-pool.md")
    mc(r, "restore", "memory/archive/pg-pool.md")
    assert entry_line(r, "pg-pool")
    edit = {"EDITOR": "true"}
    mc(r, "edit", "memory/pg-pool.md", env=edit)
    # anything else that is not an id is still refused, and nothing outside memory/ is reached
    for bad in ("memory/../MEMORY.md", "memory/sub/x.md", "/etc/passwd.md", "notes/pg-pool.md"):
        p = mc(r, "show", bad, code=None)
        assert p.returncode == 3 and "invalid id" in p.stderr and "Traceback" not in p.stderr, (bad, p.stderr)


def _burst(r, rank):
    from memcli import Memory

    (r / "memcli.yaml").write_text(f"index:\n  rank: {rank}\n")
    m = Memory(r)
    old = "2020-01-01T00:00:00Z"  # long before any day this runs
    m.remember("Pinned rule", "always", pinned=True, importance=0.9, now=old)
    for i in range(20):
        m.remember(f"Important {i}", "keep me", importance=0.9, now=old)
    for i in range(10):
        m.remember(f"Minor {i}", "old and minor", importance=0.2, now=old)
    said = []
    for i in range(8):  # a burst of new low-importance notes, each through the command line (31 + 8 > 35 lines)
        p = mc(r, "remember", f"Burst note {i}", "low", "-i", "0.2", "--json")
        said += json.loads(p.stdout)["warnings"]
    return said


@pytest.mark.parametrize("rank", ["importance", "activity"])
def test_a_burst_of_new_notes_keeps_pinned_and_important_ones_listed(tmp_path, rank):
    r = tmp_path / "r"
    mc(tmp_path, "init", r)
    said = _burst(r, rank)
    index = (r / "MEMORY.md").read_text()
    assert "Pinned rule" in index and all(f"Important {i}**" in index for i in range(20)), index
    moved = [mid for w in said if "moved out of MEMORY.md" in w for mid in w.rsplit(": ", 1)[1].split(", ")]
    assert moved and len(moved) == len(set(moved)), said  # each demoted line is named once
    assert not [m for m in moved if m.startswith(("important-", "pinned-"))]
    listed = {ln.split("memory/")[1][:-3] for ln in index.splitlines() if "→ memory/" in ln}
    assert not set(moved) & listed
    mc(r, "index", "check")
    assert not json.loads(mc(r, "heartbeat", "--fix", "--json").stdout)["data"]["applied"]


def test_a_note_with_no_room_says_it_is_not_listed(tmp_path):
    r = tmp_path / "r"
    mc(tmp_path, "init", r)
    (r / "memcli.yaml").write_text("index:\n  max_lines: 6\n  rank: activity\n")  # room for one entry
    mc(r, "remember", "Weighty", "w", "-i", "0.9")
    p = mc(r, "remember", "Slight", "s", "-i", "0.1")
    assert "slight is not listed in MEMORY.md" in p.stderr and "--pin" in p.stderr
    assert entry_line(r, "weighty") and not entry_line(r, "slight")


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_the_same_title_on_two_clones_merges_with_a_warning_naming_both(tmp_path):
    def mci(root, *args):
        return mc(root, *args)

    clone = shared_origin(tmp_path, mci)
    a, b = clone("a"), clone("b")
    mc(a, "remember", "Deploy notes", "use the blue pipeline", "-t", "deploy", "--body", "from a\n")
    mc(a, "sync")
    mc(b, "remember", "Deploy notes", "ask ops before deploying", "-t", "ops", "--body", "from b\n")
    p = mc(b, "sync", "--json")
    warnings = json.loads(p.stdout)["warnings"]
    said = [w for w in warnings if "remembered on both sides" in w]
    assert len(said) == 1 and "use the blue pipeline" in said[0] and "ask ops before deploying" in said[0], warnings
    assert "memory/deploy-notes.md" in said[0]
    text = (b / "memory/deploy-notes.md").read_text()
    assert "from a" in text and "from b" in text and "<<<<<<<" not in text
    assert "use the blue pipeline" in text and "ask ops before deploying" in text  # the other summary in History
    mc(a, "sync")
    assert (a / "memory/deploy-notes.md").read_text() == text
    assert [ln for ln in (a / "MEMORY.md").read_text().splitlines() if "deploy-notes" in ln] == [
        ln for ln in (b / "MEMORY.md").read_text().splitlines() if "deploy-notes" in ln
    ]
    assert "remembered on both sides" not in mc(b, "sync").stderr  # said once, by the merge
    assert git(a, "status", "--porcelain").stdout == ""
    for r in (a, b):
        mc(r, "index", "check")
