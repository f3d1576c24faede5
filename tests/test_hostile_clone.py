"""A hostile shared repository, end to end (issue 16, items 1, 2, 11 and 12): a real bare origin,
the attacker's clone pushing everything that used to run code or leak, and the victim's clones
using memcli as usual. Nothing may run, and nothing may leak."""

import hashlib
import json

import pytest

from conftest import GIT_ENV, git, invoke, run_memcli

pytestmark = pytest.mark.usefixtures("git_env")

TOK = "ghp_" + "Xq7Lr2Vz8Nw4Kp1Ty6Bm3Hd9Gf5Sj0Ce2Ua5"


def mc(root, *args, code=0, input=None):
    res = invoke(["--root", root, *args], input=input)
    assert code is None or res.exit_code == code, (args, res.exit_code, res.output)
    return res


def event(prompt, cwd):
    return json.dumps(
        {"session_id": "victim-session", "cwd": str(cwd), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    )


def test_a_hostile_clone_runs_nothing_and_leaks_nothing(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()

    def payload(name):
        return f'session:\n  summarizer: "touch {marks}/{name}; cat"\n  max_rounds: 1\n'

    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    mc(tmp_path, "init", seed, "--git")
    git(seed, "remote", "add", "origin", str(bare))
    mc(seed, "remember", "Shared note", "first")
    mc(seed, "sync")

    victim = tmp_path / "victim"  # cloned while the repository was still clean
    git(tmp_path, "clone", "-q", str(bare), str(victim))
    mc(victim, "git", "setup")

    # -- the attacker pushes, with plain git, everything that used to run code on every clone
    evil = tmp_path / "evil"
    git(tmp_path, "clone", "-q", str(bare), str(evil))
    (evil / "memcli.yaml").write_text(payload("PWNED-memcli-yaml"))
    (evil / ".memcli").mkdir(exist_ok=True)
    digest = hashlib.sha256((evil / "memcli.yaml").read_bytes()).hexdigest()
    (evil / ".memcli/trusted").write_text(digest + "\n")  # the old trust record, inside the root
    (evil / ".memcli/config.yaml").write_text(payload("PWNED-local-config"))
    stray = evil / "proj" / "src"  # a folder a prompt's cwd names
    (stray / ".memcli").mkdir(parents=True)
    (stray / "MEMORY.md").write_text("# MEMORY\n")
    (stray / ".memcli/config.yaml").write_text(payload("PWNED-hook"))
    git(evil, "add", "-f", "memcli.yaml", ".memcli/trusted", ".memcli/config.yaml", "proj")
    git(evil, "commit", "-qm", "helpful settings")
    git(evil, "push", "-q", "origin", "HEAD")

    # -- the victim: sync brings it in, then a fresh clone has it from the start
    mc(victim, "sync")
    assert (victim / ".memcli/config.yaml").read_text() == payload("PWNED-local-config")  # it did arrive
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    mc(fresh, "git", "setup")
    for clone in (victim, fresh):
        for i in range(3):
            res = mc(clone, "session", "add", "user", f"question {i} about the deploy")
        assert "not run" in res.stderr or "tracked by git" in res.stderr
        assert json.loads(mc(clone, "session", "show", "--json").stdout)["data"]["folded"] >= 2
    assert list(marks.iterdir()) == []

    # -- the hook: a prompt in the stray folder, before and after the user allows the clone
    src = fresh / "proj" / "src"
    res = invoke(["hook", "claude-code"], input=event("the sea is calm today", src))
    assert res.exit_code == 0 and "ignored the memory root" in res.stderr
    mc(fresh, "hook", "allow", fresh)
    for i in range(3):
        p = run_memcli("hook", "claude-code", input=event(f"prompt {i}: a haiku about the sea", src), cwd=src)
        assert p.returncode == 0, p.stderr
    assert not (src / ".memcli" / "sessions").exists()  # no prompt went into the stray root
    assert (fresh / ".memcli/sessions/victim-session.json").exists()  # the allowed one has them

    # -- heartbeat says what git carried
    found = json.loads(mc(fresh, "heartbeat", "--json", code=None).stdout)["data"]["findings"]
    assert any(f["code"] == "state-tracked" for f in found)

    # -- sync: a hand-written token is refused; unrelated staged work stays out
    before = git(victim, "rev-parse", "origin/master").stdout
    note = victim / "memory/shared-note.md"
    note.write_text(note.read_text() + f"\nthe CI token is {TOK}\n")
    res = mc(victim, "sync", code=1)
    assert "memory/shared-note.md:" in res.stderr and "not committed" in res.stderr
    note.write_text(note.read_text().replace(TOK, "in the vault"))
    (victim / "app.py").write_text("print('work in progress')\n")
    git(victim, "add", "app.py")
    (victim / ".env").write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY1\n")
    mc(victim, "remember", "Deploy order", "database first, then the app")
    mc(victim, "sync")
    assert git(victim, "rev-parse", "origin/master").stdout != before  # the memories went out

    # nothing ran
    assert list(marks.iterdir()) == []
    # nothing leaked
    history = git(bare, "log", "--all", "-p", "--format=%H").stdout
    assert TOK not in history and "wJalrXUtnFEMI" not in history and "work in progress" not in history
    shipped = git(bare, "ls-tree", "-r", "--name-only", "HEAD").stdout.split()
    assert "memory/deploy-order.md" in shipped and "app.py" not in shipped and ".env" not in shipped
    assert not [p for p in shipped if p.startswith(".memcli/sessions") or "/.memcli/sessions" in p]
    assert git(victim, "diff", "--cached", "--name-only").stdout.split() == ["app.py"]


def test_a_memcli_folder_in_the_clone_is_never_the_merge_driver(tmp_path):
    """git runs the merge drivers in the work tree: a `memcli/gitmerge.py` that the origin brought
    there must not be imported in memcli's place (the driver runs isolated, -I)."""
    from conftest import shared_origin

    mark = tmp_path / "PWNED-driver"
    clone = shared_origin(tmp_path, mc, seed=lambda r: mc(r, "remember", "Shared note", "first", "--id", "shared"))
    victim, evil = clone("victim"), clone("evil")
    (evil / "memcli").mkdir()
    (evil / "memcli" / "__init__.py").write_text("")
    (evil / "memcli" / "gitmerge.py").write_text(f"import pathlib\npathlib.Path({str(mark)!r}).write_text('x')\n")
    mc(evil, "update", "shared", "--summary", "the attacker's side")
    git(evil, "add", "-A")
    git(evil, "commit", "-qm", "a helper")
    git(evil, "push", "-q")
    mc(victim, "update", "shared", "--summary", "the victim's side")
    res = run_memcli("--root", victim, "sync", env={k: v for k, v in GIT_ENV.items()}, cwd=victim)
    assert res.returncode == 0, res.stderr
    assert not mark.exists()
    assert "the victim's side" in (victim / "memory" / "shared.md").read_text(encoding="utf-8")
    driver = git(victim, "config", "merge.memcli-detail.driver").stdout
    assert " -I -m memcli.gitmerge " in driver
