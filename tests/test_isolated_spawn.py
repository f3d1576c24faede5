"""Every Python process memcli starts runs isolated: a `memcli/` package, a `json.py` or a
`pickle.py` that a repository (or the folder a turn runs in) carries never runs in it.

Each spawn site gets a planted package that leaves a mark when imported: git's merge driver
(through real merges from a bare origin), background reflection, and the worker pools the
heartbeat and the search cache start."""

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import git, invoke, shared_origin

pytestmark = pytest.mark.usefixtures("git_env")


def plant(folder: Path, marks: Path) -> None:
    """Modules that leave a mark in ``marks`` when anything imports them from ``folder``."""

    def payload(name):
        return f"open({str(marks / name)!r}, 'w').close()\n"

    pkg = folder / "memcli"
    pkg.mkdir(parents=True, exist_ok=True)
    for name in ("__init__", "__main__", "gitmerge", "cli"):
        (pkg / f"{name}.py").write_text(payload(f"memcli.{name}"))
    for name in ("json", "pickle", "socket", "shlex", "yaml"):
        (folder / f"{name}.py").write_text(payload(name))


def mc(root, *args, code=0, input=None):
    res = invoke(["--root", root, *args], input=input)
    assert code is None or res.exit_code == code, (args, res.exit_code, res.output)
    return res


def test_24_01_the_merge_driver_runs_isolated_from_the_work_tree(tmp_path, monkeypatch):
    """git runs the driver in the work tree; a clone that commits memcli/ and json.py runs
    nothing, on `sync` and on a plain `git pull`, and the memories still merge key by key."""
    marks = tmp_path / "marks"
    marks.mkdir()
    clone = shared_origin(tmp_path, mc, seed=lambda r: mc(r, "remember", "Deploy", "blue green", "--tag", "ops"))
    victim, evil = clone("victim"), clone("evil")
    plant(evil, marks)
    mc(evil, "update", "deploy", "--summary", "blue green, with a canary")
    git(evil, "add", "-A")
    git(evil, "commit", "-qm", "tools")
    git(evil, "push", "-q", "origin", "HEAD")

    monkeypatch.chdir(victim)  # as a user runs it: in the work tree
    mc(victim, "update", "deploy", "--tag", "release")
    res = mc(victim, "sync")
    assert (victim / "memcli" / "gitmerge.py").exists()  # the planted package did arrive
    assert sorted(p.name for p in marks.iterdir()) == []
    text = (victim / "memory/deploy.md").read_text()
    assert "canary" in text and "release" in text, text  # both sides merged by the real driver
    assert "synced" in res.stderr or res.exit_code == 0

    # a plain git pull runs the same driver
    git(evil, "pull", "-q", "--ff-only", "origin", "master")
    mc(evil, "update", "deploy", "--importance", "0.9")
    git(evil, "commit", "-qam", "more")
    git(evil, "push", "-q", "origin", "HEAD")
    mc(victim, "update", "deploy", "--title", "Deploy order")
    git(victim, "commit", "-qam", "mine")
    git(victim, "pull", "-q", "--no-rebase", "origin", "master")
    assert sorted(p.name for p in marks.iterdir()) == []
    text = (victim / "memory/deploy.md").read_text()
    assert "Deploy order" in text and "0.9" in text
    driver = git(victim, "config", "merge.memcli-detail.driver").stdout
    assert " -I -m memcli.gitmerge " in driver, driver


def _wait_for_children(timeout=60.0) -> list:
    """The exit codes of the background reflections this process started."""
    from memcli.usecases import reflect

    deadline, codes = time.monotonic() + timeout, []
    for child in list(reflect._SPAWNED):
        if isinstance(child, int):  # a pid
            while not os.waitpid(child, os.WNOHANG)[0] and time.monotonic() < deadline:
                time.sleep(0.05)
            codes.append(0)
        else:
            codes.append(child.wait(max(0.1, deadline - time.monotonic())))
    return codes


def test_24_02_background_reflection_runs_isolated_from_the_working_folder(root, tmp_path, monkeypatch):
    """`reflect.on_fold` starts `memcli reflect --background`: a project folder holding
    memcli/__main__.py (where Claude Code's hook or a user runs memcli) runs nothing."""
    marks = tmp_path / "marks"
    marks.mkdir()
    project = tmp_path / "project"
    plant(project, marks)
    conf = Path(os.environ["HOME"]) / ".config/memcli/config.yaml"
    conf.parent.mkdir(parents=True)
    conf.write_text("reflect:\n  on_fold: true\nsession:\n  max_rounds: 1\n")
    monkeypatch.chdir(project)
    for i in range(3):
        mc(root, "session", "add", "user", f"we always deploy with blue green, step {i}")
    from memcli.usecases import reflect

    assert reflect._SPAWNED, "no background reflection was started"
    codes = _wait_for_children()
    reflect._SPAWNED.clear()
    assert sorted(p.name for p in marks.iterdir()) == []
    assert codes and set(codes) == {0}


def test_24_02_the_background_command_line_is_isolated(root):
    from memcli.procs import python_command

    assert python_command("-m", "memcli")[:2] == [sys.executable, "-I"]


def test_24_02_an_isolated_interpreter_still_finds_the_installed_memcli(tmp_path):
    """-I ignores PYTHONPATH, the user's site-packages and the working folder; memcli is found
    where it is installed (an editable install's finder is a .pth file in site-packages)."""
    import subprocess

    from memcli.procs import python_command

    marks = tmp_path / "marks"
    marks.mkdir()
    plant(tmp_path / "cwd", marks)
    p = subprocess.run(
        python_command("-c", "import memcli, json; print(memcli.__file__)"),
        cwd=tmp_path / "cwd",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "cwd")},
    )
    assert p.returncode == 0, p.stderr
    assert Path(p.stdout.strip()).parent.name == "memcli" and str(tmp_path) not in p.stdout
    assert list(marks.iterdir()) == []


def _with_a_thread(fn):
    """fn() while a second thread runs (as under `memcli watch`), which makes the pools spawn."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        return fn()
    finally:
        stop.set()
        t.join()


def test_24_02_the_heartbeats_worker_pool_runs_isolated(tmp_path, monkeypatch):
    from memcli.heartbeat import cache

    marks = tmp_path / "marks"
    marks.mkdir()
    folder = tmp_path / "clone"
    plant(folder, marks)
    (folder / "memory").mkdir()
    jobs = []
    for i in range(cache.PARALLEL_MIN):
        p = folder / "memory" / f"n{i}.md"
        p.write_text(f"---\nid: n{i}\ntitle: Note {i}\nsummary: s\n---\nbody {i}\n")
        jobs.append((f"memory/n{i}.md", str(p), "detail"))
    monkeypatch.chdir(folder)
    monkeypatch.setattr(cache, "_workers", lambda n: 2)
    records = _with_a_thread(lambda: cache._inspect_all(jobs))
    assert len(records) == len(jobs) and records[0][0][0] == "Note 0"
    assert sorted(p.name for p in marks.iterdir()) == []


def test_24_02_the_search_caches_worker_pool_runs_isolated(tmp_path, monkeypatch):
    from memcli.search import segments
    from memcli.search.ranker import SearchDoc

    marks = tmp_path / "marks"
    marks.mkdir()
    folder = tmp_path / "clone"
    plant(folder, marks)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(segments, "PARALLEL_MIN", 4)
    monkeypatch.setattr(segments, "CHUNK", 2)
    items = [(f"k{i}", "fp", SearchDoc(f"k{i}", f"title {i}", body=f"body words {i}")) for i in range(8)]
    built = _with_a_thread(lambda: list(segments.segments(iter(items), 0, 0, len(items), 2)))
    assert len(built) == 4
    assert sorted(p.name for p in marks.iterdir()) == []


def test_24_01_a_driver_an_older_version_registered_is_reported_until_set_up_again(tmp_path):
    root = tmp_path / "r"
    mc(tmp_path, "init", root, "--git")
    git(root, "config", "merge.memcli-detail.driver", f"{sys.executable} -m memcli.gitmerge detail %O %A %B %L %P")
    found = json.loads(mc(root, "heartbeat", "--json", code=None).stdout)["data"]["findings"]
    assert [f["code"] for f in found if f["code"].startswith("git-")] == ["git-driver-unisolated"]
    mc(root, "git", "setup")
    found = json.loads(mc(root, "heartbeat", "--json", code=None).stdout)["data"]["findings"]
    assert not [f for f in found if f["code"].startswith("git-")]
