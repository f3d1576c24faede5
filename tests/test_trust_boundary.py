"""Nothing that arrived from someone else runs a command here (issue 16, items 1 and 2): trust
lives in the user's state folder, never in the root; a `.memcli/` file git brought is never
believed; the agent hook uses only roots the user chose and never a command from a root's files."""

import json
import os
import shutil

import pytest

from conftest import git, invoke, run_memcli
from memcli.config import user_config_path
from memcli.paths import LOCAL_CONFIG
from memcli.settings_guard import is_trusted, load_config, trust
from memcli.core import Memory
from memcli.usecases.init import init_root


@pytest.fixture
def records():
    from memcli import trust as records

    return records


def cli(*args, input=None):
    """memcli in this process, answering like a finished process."""
    from types import SimpleNamespace

    res = invoke([str(a) for a in args], input=input)
    return SimpleNamespace(returncode=res.exit_code, stdout=res.stdout, stderr=res.stderr)


def trusted_setting(*args, **kw):
    from memcli.settings_guard import trusted_setting

    return trusted_setting(*args, **kw)


def summarizer(marker, where):
    """A configuration whose summarizer leaves `marker` behind when it runs, folding every round."""
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(f'session:\n  summarizer: "touch {marker}; cat"\n  max_rounds: 1\n', encoding="utf-8")


def two_turns(root, config=None):
    mem = Memory(root, config=config)
    for text in ("first question about deploys", "second question about deploys"):
        mem.session("s").add("user", text)


# ---------------------------------------------------------------- item 1: trust outside the root


def test_01_trust_is_recorded_outside_the_root(root, tmp_path, records):
    marker = tmp_path / "RAN"
    summarizer(marker, root / "memcli.yaml")
    res = trust(root)
    assert not (root / ".memcli" / "trusted").exists()
    assert res["record"].startswith(str(records.state_home())) and os.path.isfile(res["record"])
    assert is_trusted(root) and load_config(root)["session.summarizer"] == f"touch {marker}; cat"
    two_turns(root)
    assert marker.exists()  # an existing user's `memcli trust` still works
    # the same bytes in another folder (a copy, a clone) are not trusted
    other = tmp_path / "copy"
    shutil.copytree(root, other)
    assert not is_trusted(other) and load_config(other)["session.summarizer"] is None


def test_01_xdg_state_home_holds_the_records(root, tmp_path, monkeypatch, records):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert records.state_home() == tmp_path / "state" / "memcli"
    (root / "memcli.yaml").write_text('session:\n  summarizer: "cat"\n', encoding="utf-8")
    trust(root)
    assert list((tmp_path / "state" / "memcli" / "trust").iterdir())


def test_01_a_trust_file_inside_the_root_is_never_believed(root, tmp_path):
    """`.memcli/trusted`, as older versions wrote it and as a repository can carry it."""
    marker = tmp_path / "PWNED"
    summarizer(marker, root / "memcli.yaml")
    import hashlib

    digest = hashlib.sha256((root / "memcli.yaml").read_bytes()).hexdigest()
    (root / ".memcli" / "trusted").write_text(digest + "\n")
    cfg = load_config(root)
    assert cfg["session.summarizer"] is None
    assert "no longer read" in cfg.warnings[0] and "memcli trust" in cfg.warnings[0]
    two_turns(root)
    assert not marker.exists()


@pytest.fixture
def repo_root(tmp_path):
    """A root that is a git work tree."""
    r = tmp_path / "repo"
    init_root(r)
    git(r, "init", "-q")
    return r


def test_01_a_tracked_local_config_is_never_believed(repo_root, tmp_path):
    marker = tmp_path / "PWNED"
    summarizer(marker, repo_root / LOCAL_CONFIG)
    assert load_config(repo_root)["session.summarizer"]  # untracked: the user's own file
    git(repo_root, "add", "-f", LOCAL_CONFIG)
    cfg = load_config(repo_root)
    assert cfg["session.summarizer"] is None and cfg["session.max_rounds"] == 5  # none of it is read
    assert any("tracked by git" in w and "git rm -r --cached .memcli" in w for w in cfg.warnings)
    two_turns(repo_root)
    assert not marker.exists()


def test_01_a_tracked_local_config_cannot_switch_the_secret_check_off(repo_root):
    (repo_root / LOCAL_CONFIG).write_text("write:\n  secrets: allow\n", encoding="utf-8")
    git(repo_root, "add", "-f", LOCAL_CONFIG)
    assert load_config(repo_root)["write.secrets"] == "refuse"


def test_01_a_committed_secrets_allow_needs_trust(root):
    (root / "memcli.yaml").write_text("write:\n  secrets: allow\n", encoding="utf-8")
    cfg = load_config(root)
    assert cfg["write.secrets"] == "refuse" and "write.secrets: allow" in cfg.warnings[0]
    trust(root)
    assert load_config(root)["write.secrets"] == "allow"
    (root / "memcli.yaml").write_text("write:\n  secrets: redact\n", encoding="utf-8")  # tightening: no trust
    assert load_config(root)["write.secrets"] == "redact" and load_config(root).warnings == ()


def test_01_untracked_local_config_asks_git_once_per_change_of_the_index(repo_root, monkeypatch):
    from memcli.store import committed_state as tracked

    calls = []
    real = tracked._ask_git
    monkeypatch.setattr(tracked, "_ask_git", lambda root: calls.append(root) or real(root))
    monkeypatch.setattr(tracked, "_memo", {})
    (repo_root / LOCAL_CONFIG).write_text("index:\n  max_lines: 30\n", encoding="utf-8")
    git(repo_root, "add", "-A")  # an index, without the local configuration (.gitignore)
    assert load_config(repo_root)["index.max_lines"] == 30 and len(calls) == 1
    monkeypatch.setattr(tracked, "_memo", {})  # a new process: the answer kept in .git/memcli/ is used
    (repo_root / LOCAL_CONFIG).write_text('session:\n  summarizer: "cat"\n', encoding="utf-8")
    assert load_config(repo_root)["session.summarizer"] == "cat" and len(calls) == 1
    git(repo_root, "add", "-f", LOCAL_CONFIG)  # the index changed: git is asked again
    assert load_config(repo_root)["session.summarizer"] is None and len(calls) == 2


def test_01_one_gate_for_every_setting_that_runs_a_command(root, monkeypatch):
    assert trusted_setting(root, "session.summarizer") == (None, None)
    cmd, warning = trusted_setting(root, "session.summarizer", committed="echo c")
    assert cmd is None and "not run" in warning
    assert trusted_setting(root, "session.summarizer", "echo c", "echo u", None) == ("echo u", None)
    assert trusted_setting(root, "session.summarizer", "echo c", "echo u", "echo l") == ("echo l", None)
    # the hook: no command from the root's files, trusted or not; the user's own file still counts
    assert trusted_setting(root, "session.summarizer", "echo c", None, "echo l", root_commands=False) == (None, None)
    assert trusted_setting(root, "session.summarizer", "echo c", "echo u", "echo l", root_commands=False) == (
        "echo u",
        None,
    )
    monkeypatch.setenv("MEMCLI_SUMMARIZER", "echo e")
    assert trusted_setting(root, "session.summarizer", "echo c", "echo u", "echo l") == ("echo e", None)


def test_01_trust_through_the_command_line(root):
    (root / "memcli.yaml").write_text('session:\n  summarizer: "cat"\n', encoding="utf-8")
    res = invoke(["--root", root, "trust", "--json"])
    data = json.loads(res.stdout)["data"]
    assert res.exit_code == 0 and data["commands"] == {"session.summarizer": "cat"}
    assert not (root / ".memcli" / "trusted").exists() and os.path.isfile(data["record"])


# ---------------------------------------------------------------- item 2: the hook's roots


def event(prompt, cwd, session="s1"):
    return json.dumps({"session_id": session, "cwd": str(cwd), "hook_event_name": "UserPromptSubmit", "prompt": prompt})


@pytest.fixture
def stray(tmp_path):
    """proj/src holds a MEMORY.md and a .memcli/config.yaml whose summarizer leaves a marker."""
    src = tmp_path / "proj" / "src"
    init_root(src)
    summarizer(tmp_path / "PWNED", src / LOCAL_CONFIG)
    return src


def test_02_the_hook_ignores_a_root_the_user_did_not_allow(stray, tmp_path):
    for i in range(2):
        r = run_memcli("hook", "claude-code", input=event(f"question number {i} about deploys", stray), cwd=stray)
        assert r.returncode == 0 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and "ignored the memory root" in r.stderr and "hook allow" in r.stderr
    assert not (tmp_path / "PWNED").exists()
    assert not (stray / ".memcli" / "sessions").exists()  # no prompt was written into it


def test_02_an_allowed_root_gets_prompts_but_never_runs_its_own_commands(stray, tmp_path):
    (stray / "memcli.yaml").write_text(f'session:\n  summarizer: "touch {tmp_path}/PWNED2; cat"\n', encoding="utf-8")
    trust(stray)  # even a trusted memcli.yaml names no command for the hook
    assert cli("hook", "allow", stray).returncode == 0
    for i in range(3):
        r = cli("hook", "claude-code", input=event(f"question number {i} about deploys", stray))
        assert r.returncode == 0 and r.stderr == "", r.stderr
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()
    data = json.loads(cli("--root", stray, "--session", "s1", "session", "show", "--json").stdout)["data"]
    assert data["folded"] == 2 and "question number 0" in data["summary"]  # folded, extractively
    # the user's own configuration may name one
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(f'session:\n  summarizer: "touch {tmp_path}/MINE; cat"\n', encoding="utf-8")
    cli("hook", "claude-code", input=event("question number 3 about deploys", stray))
    assert (tmp_path / "MINE").exists() and not (tmp_path / "PWNED").exists()


def test_02_a_stray_root_inside_an_allowed_one_is_passed_over(tmp_path):
    mine = tmp_path / "notes"
    init_root(mine)
    inner = mine / "vendor" / "pkg"
    init_root(inner)
    assert cli("hook", "allow", mine).returncode == 0
    r = cli("hook", "claude-code", input=event("the sea is calm today", inner))
    assert r.returncode == 0 and "ignored the memory root" in r.stderr and str(inner) in r.stderr
    assert (mine / ".memcli" / "sessions" / "s1.json").exists()
    assert not (inner / ".memcli" / "sessions").exists()


def test_02_root_and_memcli_root_are_the_users_choice(stray, tmp_path, monkeypatch):
    r = cli("--root", stray, "hook", "claude-code", input=event("the sea is calm today", tmp_path))
    assert r.returncode == 0 and r.stderr == ""
    monkeypatch.setenv("MEMCLI_ROOT", str(stray))
    r = cli("hook", "claude-code", input=event("the sky is grey today", tmp_path))
    assert r.returncode == 0 and r.stderr == ""
    data = json.loads((stray / ".memcli" / "sessions" / "s1.json").read_text())
    assert len(data["turns"]) + data["folded"] == 2 and not (tmp_path / "PWNED").exists()


def test_02_allow_deny_and_list(stray, tmp_path, records):
    assert json.loads(cli("hook", "list", "--json").stdout)["data"]["roots"] == []
    r = cli("hook", "allow", stray)
    assert r.returncode == 0 and "records every prompt" in r.stderr
    assert json.loads(cli("hook", "allow", stray, "--json").stdout)["data"]["added"] is False
    assert cli("hook", "list").stdout.split() == [str(stray.resolve())]
    assert records.hook_roots() == [str(stray.resolve())]
    assert not any(p.is_relative_to(stray) for p in records.state_home().rglob("*"))
    r = cli("hook", "deny", stray, "--json")
    assert json.loads(r.stdout)["data"]["removed"] is True and records.hook_roots() == []
    r = cli("hook", "allow", tmp_path)
    assert r.returncode == 3 and "not a memory root" in r.stderr


def test_a_state_file_git_brought_cannot_make_recall_read_outside_the_root(root, tmp_path):
    """.memcli/semantic/index.json names the vectors file: only a file of that folder is read."""
    np = pytest.importorskip("numpy")
    from memcli.search.semantic import FORMAT, EmbeddingCache

    outside = tmp_path / "outside.npy"
    np.save(outside, np.zeros((1, 2, 4), dtype=np.float32))
    folder = root / ".memcli" / "semantic"
    folder.mkdir(parents=True)
    for name in (str(outside), "../../../outside.npy"):
        (folder / "index.json").write_text(
            json.dumps({"format": FORMAT, "model": "m", "vectors": name, "keys": ["memory/x.md"], "fps": ["1"]})
        )
        cache = EmbeddingCache(folder, "m")
        assert cache._read() is False and cache.vectors is None


def test_01_a_committed_symlink_for_the_local_state_folder_is_never_believed(repo_root, tmp_path):
    """`.memcli` committed as a link to a folder of the repository: its config.yaml came with it."""
    marker = tmp_path / "PWNED"
    shutil.rmtree(repo_root / ".memcli")
    (repo_root / "shared").mkdir()
    (repo_root / "shared" / "config.yaml").write_text(
        f'session:\n  summarizer: "touch {marker}; cat"\n  max_rounds: 1\nwrite:\n  secrets: allow\n', encoding="utf-8"
    )
    os.symlink("shared", repo_root / ".memcli")
    git(repo_root, "add", "-f", "shared", ".memcli")
    cfg = load_config(repo_root)
    assert cfg["session.summarizer"] is None and cfg["write.secrets"] == "refuse"
    assert any("tracked by git" in w for w in cfg.warnings)
