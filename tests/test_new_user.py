"""What a new user meets in the first hour, through the real CLI: the install command an extra
needs, paths as typed, a broken memcli.yaml, watch, an interrupted edit, the recall panel on a
terminal, a conflicted memory in recall, a scope's episode, import's messages, the docs' promises."""

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

from memcli.core import Memory
from tests.conftest import ROOT_DIR, child_env, on_terminal, run_memcli


def mc(root, *args, code=0, **kw):
    r = run_memcli("--root", root, *args, **kw)
    assert code is None or r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
    return r


# ---------------------------------------------------------------- the extras, named for the install


def _env_without_mcp(folder: Path, marker: str | None) -> Path:
    """A virtual environment at `folder` holding this one's packages but the mcp extra's (each linked),
    with the file pipx or `uv tool` leaves in the environments they make: its python."""
    import typer

    venv.create(folder, with_pip=False)
    site = Path(typer.__file__).parent.parent
    (target,) = folder.glob("lib/python*/site-packages")
    for entry in site.iterdir():
        if not entry.name.startswith(("mcp", "_mcp")) and not (target / entry.name).exists():
            (target / entry.name).symlink_to(entry)
    if marker == "pipx":
        (folder / "pipx_metadata.json").write_text('{"main_package": {"package": "memcli-md"}}\n')
    elif marker == "uv":
        (folder / "uv-receipt.toml").write_text(
            f'[tool]\nrequirements = [{{ name = "memcli-md", path = "{WHEEL}" }}]\n'
        )
    return folder / "bin" / "python"


def _needs(extra: str) -> list:
    """The extra's requirements as pyproject.toml declares them (shell-quoted)."""
    import shlex

    text = (ROOT_DIR / "pyproject.toml").read_text(encoding="utf-8")
    listed = re.search(rf"^{extra} = \[(.*?)\]", text, re.M | re.S)[1]
    return [shlex.quote(r) for r in re.findall(r'"([^"]+)"', listed)]


WHEEL = "/home/me/dist/memcli_md-1.0-py3-none-any.whl"


@pytest.mark.parametrize(
    "tool, mcp, semantic",
    [
        (None, "pip install 'memcli-md[mcp]'", "pip install 'memcli-md[semantic]'"),
        (
            "pipx",
            f"pipx inject memcli-md {' '.join(_needs('mcp'))}",
            f"pipx inject memcli-md {' '.join(_needs('semantic'))}",
        ),
        (
            "uv",
            f"uv tool install --with {' --with '.join(_needs('mcp'))} {WHEEL}",
            f"uv tool install --with {' --with '.join(_needs('semantic'))} {WHEEL}",
        ),
    ],
)
def test_a_missing_extra_names_the_command_for_the_way_memcli_was_installed(root, tmp_path, tool, mcp, semantic):
    python = _env_without_mcp(tmp_path / "env", tool)

    def run(*args):
        return subprocess.run(
            [str(python), "-m", "memcli", "--root", str(root), *args],
            capture_output=True,
            text=True,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    got = run("mcp")
    assert got.returncode == 3 and got.stderr.strip() == f"memcli: error: `memcli mcp` needs the mcp extra: {mcp}"
    got = run("recall", "deploy", "--layer", "semantic")
    assert got.returncode == 2, got.stderr
    assert got.stderr.strip() == f"memcli: error: --layer semantic needs the semantic extra: {semantic}"


def test_the_template_names_the_distribution_and_the_safety_page(root):
    text = (root / "memcli.yaml").read_text(encoding="utf-8")
    assert "pip install 'memcli-md[semantic]'" in text and "memcli[" not in text
    assert "(docs/safety.md)" in text and "README" not in text
    helped = run_memcli("trust", "--help", env={"COLUMNS": "200"}).stdout
    assert "(docs/safety.md)" in helped and "README" not in helped
    assert (ROOT_DIR / "docs" / "safety.md").is_file()


# ---------------------------------------------------------------- paths as the user typed them


def test_show_takes_the_memory_file_as_typed_and_refuses_one_outside_the_root(tmp_path):
    work = tmp_path / "proj"
    store = work / "store"
    Memory.init(store)
    mc(store, "remember", "Deploy staging", "run make deploy", "--id", "deploy-staging")
    for typed in (
        "store/memory/deploy-staging.md",
        "./store/memory/deploy-staging.md",
        str(store / "memory" / "deploy-staging.md"),
        "deploy-staging.md",
        "memory/deploy-staging.md",
    ):
        got = run_memcli("--root", "store", "--json", "show", typed, cwd=work)
        assert got.returncode == 0, (typed, got.stderr)
        assert json.loads(got.stdout)["data"]["id"] == "deploy-staging"
    mc(store, "forget", "deploy-staging")
    got = run_memcli("--root", "store", "restore", "store/memory/archive/deploy-staging.md", cwd=work)
    assert got.returncode == 0, got.stderr
    (tmp_path / "outside.md").write_text("---\ntitle: Outside\n---\nnot a memory of the root\n")
    for typed in ("outside.md", "../outside.md", str(tmp_path / "outside.md"), "store/memory/../../../outside.md"):
        got = run_memcli("--root", "store", "show", typed, cwd=work)
        assert got.returncode == 3 and not got.stdout and "memcli: error: " in got.stderr, (typed, got.stdout)
        assert "outside" in got.stderr or typed == "outside.md", got.stderr  # said as what it is


def test_update_takes_the_memory_file_as_typed_as_show_does(tmp_path):
    work = tmp_path / "proj"
    store = work / "store"
    Memory.init(store)
    mc(store, "remember", "Deploy staging", "run make deploy", "--id", "deploy-staging")
    for i, typed in enumerate(("deploy-staging.md", "store/memory/deploy-staging.md", "memory/deploy-staging.md")):
        got = run_memcli("--root", "store", "update", typed, "--summary", f"run make deploy ({i})", cwd=work)
        assert got.returncode == 0, (typed, got.stderr)
    assert Memory(store).get("deploy-staging").summary == "run make deploy (2)"
    got = run_memcli("--root", "store", "update", "../outside.md", "--summary", "x", cwd=work)
    assert got.returncode == 3 and "outside" in got.stderr, got.stderr


# ---------------------------------------------------------------- a broken memcli.yaml


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("index:\n  max_lines: [oops\n", 3, "did not find expected ',' or ']'"),
        ("index:\n  max_lines: lots\n", None, "index.max_lines must be a whole number of at least 1, got 'lots'"),
    ],
)
def test_a_broken_memcli_yaml_is_a_heartbeat_finding_with_the_rest_of_the_audit(root, text, line, message):
    Memory(root).remember("Deploy staging", "run make deploy")
    (root / "memory" / "loose.md").write_text("# Loose\n\nno frontmatter\n")
    (root / "memcli.yaml").write_text(text)
    mc(root, "list", code=3)  # every other command stops on it
    data = json.loads(mc(root, "--json", "heartbeat").stdout)["data"]
    found = {f["code"]: f for f in data["findings"]}
    assert found["config-broken"]["severity"] == "error" and found["config-broken"]["path"] == "memcli.yaml"
    assert found["config-broken"]["line"] == line and message in found["config-broken"]["message"]
    assert "frontmatter-missing" in found  # the rest of the audit
    before = {p.name: p.read_bytes() for p in (root / "memory").iterdir() if p.is_file()}
    index = (root / "MEMORY.md").read_bytes()
    fixed = mc(root, "heartbeat", "--fix", "--check", code=1)
    assert "no repair was made: the configuration cannot be read" in fixed.stderr
    assert (root / "MEMORY.md").read_bytes() == index
    assert {p.name: p.read_bytes() for p in (root / "memory").iterdir() if p.is_file()} == before
    event = json.dumps({"prompt": "what did we do last time", "cwd": str(root)})
    hook = run_memcli("--root", root, "hook", "claude-code", input=event)
    assert hook.returncode == 0, hook.stderr


# ---------------------------------------------------------------- an interrupted edit


def test_an_interrupted_edit_is_not_saved_by_the_next_one_unasked(root, tmp_path):
    mc(root, "remember", "Deploy staging", "run make deploy", "--id", "deploy-staging")
    before = (root / "memory/deploy-staging.md").read_text()
    interrupted = tmp_path / "interrupted.sh"  # types a line, then the person presses Ctrl-C
    interrupted.write_text('#!/bin/sh\necho "half a thought" >> "$1"\nkill -INT $PPID\nsleep 5\n')
    interrupted.chmod(0o755)
    got = mc(root, "edit", "deploy-staging", env={"EDITOR": str(interrupted)}, code=130)
    (draft,) = (root / ".memcli/edits").glob("deploy-staging-*.md")
    assert "half a thought" in draft.read_text() and "interrupted" in got.stderr
    unchanged = {"EDITOR": "true"}  # an editor closed without a change
    got = mc(root, "edit", "deploy-staging", env=unchanged, code=2)
    assert f"left a draft (.memcli/edits/{draft.name})" in got.stderr and "--reuse-draft" in got.stderr
    assert "--new-draft" in got.stderr
    assert (root / "memory/deploy-staging.md").read_text() == before
    got = mc(root, "--json", "edit", "deploy-staging", "--new-draft", env=unchanged)
    assert json.loads(got.stdout)["data"]["action"] == "unchanged" and draft.is_file()
    assert (root / "memory/deploy-staging.md").read_text() == before
    assert "edit-draft-kept" not in mc(root, "heartbeat").stdout  # an editor may be open on a fresh one
    os.utime(draft, (draft.stat().st_mtime - 7200, draft.stat().st_mtime - 7200))
    said = mc(root, "heartbeat", "--check", code=1).stdout
    assert f"warning edit-draft-kept .memcli/edits/{draft.name} a draft of deploy-staging left by an edit" in said
    code, shown = on_terminal(["--root", root, "edit", "deploy-staging"], b"n\n", env=unchanged)
    assert code == 0 and "go on with it? [y/N]" in shown and "the earlier draft stays in" in shown, shown
    assert (root / "memory/deploy-staging.md").read_text() == before and draft.is_file()
    code, shown = on_terminal(["--root", root, "edit", "deploy-staging"], b"y\n", env=unchanged)
    assert code == 0 and "reopening the draft" in shown, shown
    assert "half a thought" in (root / "memory/deploy-staging.md").read_text() and not draft.exists()


# ---------------------------------------------------------------- the recall panel on a terminal

GRPC_BODY = """The inventory gRPC client used the default 1 s deadline.

Raise it to 5 s in config/inventory.yaml:

    grpc:
      deadline: 5s

Then restart the checkout service so it picks the setting up.
Confirmed on staging."""


def test_the_recall_panel_shows_the_body_and_cuts_a_long_path_with_an_ellipsis(root):
    mc(root, "remember", "gRPC inventory deadline exceeded", "Inventory calls time out under load.", "--id",
       "grpc-inventory-deadline-exceeded-under-load", "--body", GRPC_BODY)  # fmt: skip
    code, shown = on_terminal(["--root", root, "recall", "grpc inventory deadline"], b"", cols=80)
    assert code == 0, shown
    top = next(line for line in shown.splitlines() if "gRPC inventory deadline exceeded" in line)
    assert re.search(r"memory/grpc-inventory-de\S*… · index · \d\.\d\d", top), top
    flat = " ".join(" ".join(line.strip(" │\r") for line in shown.splitlines()).split())  # wrapped lines joined
    for said in ("Inventory calls time out under load.", "Raise it to 5 s in config/inventory.yaml:",
                 "deadline: 5s", "Then restart the checkout service", "Confirmed on staging."):  # fmt: skip
        assert said in flat, (said, shown)
    piped = mc(root, "recall", "grpc inventory deadline").stdout
    assert "memory/grpc-inventory-deadline-exceeded-under-load.md" in piped  # the whole path where it fits


# ---------------------------------------------------------------- a conflicted memory in recall


def test_a_memory_with_conflict_markers_stays_in_recall_with_its_warning(root):
    mc(root, "remember", "Shared note", "the release train leaves on beta", "--id", "shared-note", "--body", "beta")
    path = root / "memory/shared-note.md"
    text = path.read_text().replace("\nbeta\n", "\n<<<<<<< ours\nbeta A\n=======\nbeta B\n>>>>>>> theirs\n")
    path.write_text(text)
    line = text.splitlines().index("<<<<<<< ours") + 1
    for layer in ([], ["--layer", "index"], ["--layer", "details"]):
        got = json.loads(mc(root, "--json", "recall", "release train beta", *layer).stdout)
        assert [h["id"] for h in got["data"]["hits"]][:1] == ["shared-note"], (layer, got)
        assert [w for w in got["warnings"] if "shared-note" in w] == [
            f"memory/shared-note.md holds unresolved git conflict markers (line {line}): both sides are shown; "
            "`memcli resolve shared-note --ours|--theirs|--both` (the other side goes to ## History), or edit the "
            "file and delete the marker lines"
        ]
    said = mc(root, "recall", "release train beta")
    assert "## Shared note" in said.stdout and "unresolved git conflict markers" in said.stderr
    mc(root, "update", "shared-note", "--append", "more", code=3)  # nothing lands on the markers
    assert path.read_text() == text


# ---------------------------------------------------------------- a scope's episode


def test_an_ended_scope_is_found_as_readable_text_not_json(root):
    scope = {"MEMCLI_SCOPE": "rollout"}
    mc(root, "scope", "start", "roll out the payment service to eu-west", env=scope)
    mc(root, "scope", "set", "region", "eu-west-1 first, then eu-central-1", "--agent", "planner", env=scope)
    mc(root, "scope", "set", "rollback", "keep the old task definition\nfor 24h", "--agent", "deployer", env=scope)
    mc(root, "scope", "end", env=scope)
    got = json.loads(mc(root, "--json", "recall", "which region did the payment rollout start with").stdout)
    (hit,) = [h for h in got["data"]["hits"] if h["path"].startswith("memory/episodes/")]
    assert "region: eu-west-1 first, then eu-central-1 (planner)" in hit["snippet"], hit["snippet"]
    assert "Task: roll out the payment service to eu-west" in hit["snippet"]
    assert not any(c in hit["snippet"] for c in ("{", '"value"', "```")), hit["snippet"]
    log = next((root / "memory/episodes").glob("*.md")).read_text()
    assert "- rollback: keep the old task definition\n  for 24h (deployer)" in log  # a later line stays in its key
    assert mc(root, "heartbeat", "--check").returncode == 0


# ---------------------------------------------------------------- import's messages


def test_import_names_three_skipped_ids_and_the_count_and_says_memory_for_one(root, tmp_path):
    mc(root, "remember", "Kept", "already here", "--id", "note-00")
    lines = [{"id": f"note-{i:02d}", "title": f"Note {i}", "summary": "s"} for i in range(30)]
    source = tmp_path / "notes.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in lines[:1] + lines[2:]))  # note-00 is here already
    for i in range(2, 30):
        mc(root, "remember", f"Note {i}", "s", "--id", f"note-{i:02d}")
    (tmp_path / "one.jsonl").write_text(json.dumps(lines[1]) + "\n")
    got = mc(root, "import", str(tmp_path / "one.jsonl"))
    assert "imported 1 memory (jsonl)" in got.stderr, got.stderr
    got = mc(root, "import", str(source))
    warned = [line for line in got.stderr.splitlines() if line.startswith("memcli: warning: skipped")]
    assert len(warned) == 4, got.stderr
    assert warned[:3] == [f"memcli: warning: skipped note-{i:02d}: a memory with this id exists" for i in (0, 2, 3)]
    assert warned[3] == "memcli: warning: skipped 26 more (`memcli --json import` lists every one with its reason)"
    assert "imported 0 memories (jsonl); skipped 29" in got.stderr
    data = json.loads(mc(root, "--json", "import", str(source)).stdout)["data"]
    assert len(data["skipped"]) == 29


# ---------------------------------------------------------------- what the README promises


def test_the_readme_sample_is_what_the_quick_start_prints_on_any_day(tmp_path):
    readme = (ROOT_DIR / "README.md").read_text(encoding="utf-8")
    shown = readme.split("$ memcli --root demo recall 'MySQL中文查不到数据'\n", 1)[1].split("```", 1)[0]
    assert run_memcli("init", "demo", "--example", cwd=tmp_path).returncode == 0
    got = run_memcli("--root", "demo", "recall", "MySQL中文查不到数据", cwd=tmp_path)
    assert got.returncode == 0 and got.stdout == shown, (got.stdout, shown)


def test_the_quick_start_leaves_the_checkout_clean(tmp_path):
    """The quick start makes demo/ in the checkout it runs in; git does not list it as untracked."""
    got = subprocess.run(
        ["git", "-C", str(ROOT_DIR), "check-ignore", "demo/MEMORY.md", "demo/memory/mysql-charset.md"],
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0 and got.stdout.split() == ["demo/MEMORY.md", "demo/memory/mysql-charset.md"], got


def test_the_user_guides_name_no_source_file():
    """The guides speak to users: memcli's modules, tests and benchmark scripts are named in the
    architecture, contributing and evaluation pages (a command a user may run is fine)."""
    source = re.compile(r"`(?:memcli|tests)/[^`]*`|`(?!(?:\.venv/bin/)?python )[\w./-]+\.py\b[^`]*`|`memcli\.[a-z_]+\.")
    named = [
        f"{page.name}:{n}: {m.group()}"
        for page in sorted((ROOT_DIR / "docs" / "guide").glob("*.md"))
        if page.name != "serve.md"  # rewritten with the resident server
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for m in source.finditer(line)
    ]
    assert not named, named
