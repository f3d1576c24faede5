"""Nothing memcli reads or writes lies outside the root: ids and links with '..', absolute
paths, backslashes, drive letters and NUL are refused; symlinks that lead out of the root are
neither read nor written through. Outside files keep their bytes and mtimes, and their content
never appears on stdout."""

from __future__ import annotations

import json
import os

import pytest

from memcli.store import details as dfile


MARK = "OUTSIDE-SECRET-7f3a"


def outside_files(tmp_path):
    """Files outside the root: a valid memory, a plain text file, and a session-shaped JSON."""
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    files = {
        "memory.md": f"---\ntitle: Deploy {MARK}\nsummary: deploy {MARK}\ntags: [deploy]\n---\ndeploy {MARK}\n",
        "passwd": f"root:x:0:0:{MARK}:/root:/bin/sh\n",
        "MEMORY.md": f"# Memory\n\n- **Deploy {MARK}**: deploy {MARK} | #deploy | → memory/deploy.md\n",
        "session.json": json.dumps(
            {
                "version": 1,
                "name": "default",
                "summary": MARK,
                "turns": [{"role": "user", "text": f"deploy {MARK}", "time": "2026"}],
            }
        ),
        "scope.json": json.dumps(
            {
                "version": 1,
                "name": "default",
                "task": MARK,
                "keys": {"deploy": {"value": MARK, "agent": "A", "time": "t"}},
            }
        ),
        "config.yaml": f"{MARK}: 1\n",
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    old = 1_600_000_000
    for p in out.rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))
    return out


def state(folder) -> dict:
    """Bytes and mtime of every file below folder (and the listing itself)."""
    res = {}
    for dirpath, dirs, names in os.walk(folder):
        for n in names + dirs:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            data = open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else None
            res[os.path.relpath(p, folder)] = (data, st.st_mtime_ns)
    return res


READS = [
    ("list",),
    ("list", "--all"),
    ("show", "evil"),
    ("show", "deploy"),
    ("recall", "deploy"),
    ("recall", "deploy", "--deep"),
    ("recall", MARK),
    ("recall", MARK, "--deep"),
    ("should-recall", "deploy again"),
    ("context", "deploy"),
    ("index", "check"),
    ("session", "show"),
    ("scope", "show"),
    ("scope", "check"),
]
WRITES = [
    ("update", "evil", "--append", "through the link"),
    ("update", "evil", "--summary", "new"),
    ("forget", "evil", "--yes"),
    ("remember", "Evil", "new", "--id", "evil"),
    ("remember", "Fresh note", "s"),
    ("update", "deploy", "--append", "more"),
    ("index", "rebuild"),
    ("session", "add", "user", "hello"),
    ("scope", "set", "k", "v", "--agent", "A"),
    ("scope", "start", "task"),
    ("session", "clear"),
    ("scope", "end"),
]


def run_all(cli, commands):
    results = []
    for argv in commands:
        res = cli(*argv)
        assert "Traceback" not in res.output, (argv, res.output)
        assert MARK not in res.stdout, (argv, res.stdout)
        if res.exit_code not in (0, 1):
            errors = [ln for ln in res.stderr.splitlines() if ln.startswith("memcli: error:")]
            assert len(errors) == 1, (argv, res.stderr)
        results.append((argv, res.exit_code, res.stderr))
    return results


def with_deploy(cli):
    assert cli("remember", "Deploy steps", "make release then deploy", "-t", "deploy", "--id", "deploy").exit_code == 0


# ---------------------------------------------------------------- ids and links


BAD_IDS = [
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "..\\..\\x",
    "C:\\x",
    "c:x",
    "C:",
    "x\x00y",
    ".hidden",
    "..",
    ".",
    "memory/../../x",
    "~/x",
    "a\nb",
    "\u202e",
    "x" * 81,
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_ids_are_refused_by_every_command(cli, root, tmp_path, bad):
    with_deploy(cli)
    out = outside_files(tmp_path)
    before = state(out), state(root / "memory")
    for argv in [
        ("show", bad),
        ("update", bad, "--append", "x"),
        ("forget", bad, "--yes"),
        ("edit", bad),
        ("remember", "Title", "s", "--id", bad),
    ]:
        res = cli(*argv)
        assert "Traceback" not in res.output
        assert res.exit_code in (2, 3), (argv, res.output)
        assert len(res.stderr.strip().splitlines()) == 1, (argv, res.stderr)
    assert (state(out), state(root / "memory")) == before


@pytest.mark.parametrize("name", ["../escape", "/tmp/escape", "a/b", "..", "c:x", "x\x00"])
def test_bad_session_and_scope_names_are_refused(cli, root, tmp_path, name):
    for argv in [
        ("--session", name, "session", "add", "user", "x"),
        ("--scope", name, "scope", "set", "k", "v", "--agent", "A"),
        ("--session", name, "recall", "x"),
        ("--scope", name, "context", "x"),
    ]:
        res = cli(*argv)
        assert "Traceback" not in res.output
        assert res.exit_code == 3, (argv, res.output)
    assert not (tmp_path / "escape.json").exists() and not (root / "escape.json").exists()
    assert not os.path.exists("/tmp/escape.json")


@pytest.mark.parametrize(
    "link",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "memory/../../outside/memory.md",
        "../outside/memory.md",
        "C:\\Windows\\x.md",
        "c:x.md",
        "memory/..\\x.md",
        "memory/.hidden.md",
        "memory/a\x00b.md",
        "\\\\server\\share\\x.md",
        "file:///etc/passwd",
        "memory/../MEMORY.md",
    ],
)
def test_index_links_outside_the_root_are_reported_never_followed(cli, root, tmp_path, link):
    with_deploy(cli)
    out = outside_files(tmp_path)
    before = state(out)
    index = root / "MEMORY.md"
    text = index.read_text(encoding="utf-8") + f"- **Deploy outside**: deploy | #deploy | → {link}\n"
    index.write_text(text, encoding="utf-8")
    check = cli("index", "check", "--json")
    assert check.exit_code == 1
    assert any(
        words in p["message"]
        for p in json.loads(check.stdout)["data"]["problems"]
        for words in ("not memory/<id>.md", "invalid id", "binary data")
    )
    results = run_all(cli, READS + WRITES)
    assert state(out) == before
    assert all(code != 0 for argv, code, _ in results if argv[:2] == ("show", "evil"))


def test_passwd_never_appears(cli, root):
    """The real /etc/passwd, through an index line and a symlink: never read into the output."""
    if not os.path.exists("/etc/passwd"):
        pytest.skip("no /etc/passwd here")
    with_deploy(cli)
    (root / "memory/passwd.md").symlink_to("/etc/passwd")
    with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- **Passwd**: root | → /etc/passwd\n- **Passwd2**: root | → memory/passwd.md\n")
    first = open("/etc/passwd", encoding="utf-8", errors="replace").readline().strip()
    for argv in READS + [("show", "passwd"), ("recall", "root"), ("recall", "root", "--deep")]:
        res = cli(*argv)
        assert "Traceback" not in res.output
        assert first not in res.stdout, argv


# ---------------------------------------------------------------- symlinks


@pytest.mark.parametrize("target", ["memory.md", "passwd"])
def test_symlinked_detail_file_is_neither_read_nor_written(cli, root, tmp_path, target):
    with_deploy(cli)
    out = outside_files(tmp_path)
    before = state(out)
    (root / "memory/evil.md").symlink_to(out / target)
    with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- **Evil link**: deploy | #deploy | → memory/evil.md\n")
    results = run_all(cli, READS + WRITES)
    codes = {" ".join(a): c for a, c, _ in results}
    assert codes["show evil"] == 3
    assert codes["update evil --append through the link"] == 3
    assert codes["remember Evil new --id evil"] in (3, 4)
    listing = cli("list", "--json")
    data = json.loads(listing.stdout)["data"]
    assert "evil" not in [m["id"] for m in data["memories"]]
    assert any("evil" in p for p in data["problems"])
    assert state(out) == before
    assert (root / "memory/evil.md").is_symlink() or not (root / "memory/evil.md").exists()


def test_symlinked_detail_file_inside_the_root_is_fine(cli, root):
    """A link to another file inside the root is read; an update replaces the link, not the target."""
    with_deploy(cli)
    (root / "memory/alias.md").symlink_to(root / "memory/deploy.md")
    assert cli("show", "alias").exit_code == 0
    before = (root / "memory/deploy.md").read_bytes()
    assert cli("update", "alias", "--append", "note on the alias").exit_code == 0
    assert (root / "memory/deploy.md").read_bytes() == before


@pytest.mark.parametrize(
    "folder",
    ["memory", ".memcli", "memory/episodes", "memory/archive", ".memcli/sessions", ".memcli/scopes", ".memcli/search"],
)
def test_symlinked_folder_out_of_the_root(cli, root, tmp_path, folder):
    with_deploy(cli)
    assert cli("session", "add", "user", "deploy today").exit_code == 0
    assert cli("scope", "set", "plan", "deploy", "--agent", "A").exit_code == 0
    out = outside_files(tmp_path)
    ext = out / "folder"
    ext.mkdir()
    for name in ("deploy.md", "evil.md", "2026-01-01.md"):
        (ext / name).write_text((out / "memory.md").read_text(encoding="utf-8"), encoding="utf-8")
    (ext / "default.json").write_text((out / "session.json").read_text(encoding="utf-8"), encoding="utf-8")
    before = state(out)
    target = root / folder
    import shutil

    if target.exists():
        shutil.rmtree(target)
    target.symlink_to(ext)
    results = run_all(cli, READS + WRITES)
    assert state(out) == before
    writes = {" ".join(argv): code for argv, code, _ in results if argv in WRITES}
    if folder == "memory":
        assert all(code == 3 for cmd, code in writes.items() if cmd.startswith(("remember", "update"))), writes
    if folder == ".memcli":
        assert all(code == 3 for code in writes.values()), writes


@pytest.mark.parametrize(
    "name",
    [
        "MEMORY.md",
        "memcli.yaml",
        ".memcli/lock",
        ".memcli/trace.jsonl",
        ".memcli/sessions/default.json",
        ".memcli/scopes/default.json",
        ".memcli/index-cache.json",
    ],
)
@pytest.mark.parametrize("dangling", [False, True])
def test_symlinked_file_out_of_the_root(cli, root, tmp_path, name, dangling):
    """A root file that is a symlink out: not read, not written through, no file created outside."""
    with_deploy(cli)
    out = outside_files(tmp_path)
    src = {
        "MEMORY.md": "MEMORY.md",
        "memcli.yaml": "config.yaml",
        ".memcli/sessions/default.json": "session.json",
        ".memcli/scopes/default.json": "scope.json",
    }.get(name, "passwd")
    target = out / ("missing-" + src if dangling else src)
    before = state(out)
    link = root / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    run_all(cli, READS + WRITES)
    assert state(out) == before, f"{name} -> {target}: something outside changed"


def test_root_that_is_a_symlink_works(tmp_path):
    from typer.testing import CliRunner

    from memcli.cli.typer_app import app

    real = tmp_path / "real"
    link = tmp_path / "link"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(real)], catch_exceptions=False).exit_code == 0
    link.symlink_to(real)
    around = state(tmp_path / "real")

    def run(*argv):
        res = runner.invoke(app, ["--root", str(link), *argv], catch_exceptions=False)
        assert "Traceback" not in res.output
        return res

    assert run("remember", "Through the link", "works", "-t", "link").exit_code == 0
    assert (real / "memory/through-the-link.md").is_file()
    assert run("show", "through-the-link").exit_code == 0
    assert run("recall", "through the link").exit_code == 0
    assert run("update", "through-the-link", "--append", "more").exit_code == 0
    assert run("index", "check").exit_code == 0
    assert link.is_symlink() and set(os.listdir(tmp_path)) == {"real", "link", "home", "work"}
    assert state(tmp_path / "real") != around


def test_root_found_through_a_symlinked_working_folder(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from memcli.cli.typer_app import app

    real = tmp_path / "real"
    assert CliRunner().invoke(app, ["init", str(real)], catch_exceptions=False).exit_code == 0
    (tmp_path / "link").symlink_to(real)
    (real / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "link" / "sub")
    res = CliRunner().invoke(app, ["remember", "From a linked folder", "s"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert (real / "memory/from-a-linked-folder.md").is_file()


def test_hostile_frontmatter_id_does_not_redirect_writes(cli, root, tmp_path):
    """The frontmatter's id is not a path: the file name decides where writes go."""
    out = outside_files(tmp_path)
    before = state(out)
    (root / "memory/note.md").write_text(
        "---\nid: ../../outside/memory\ntitle: Note\nsummary: s\n---\nbody\n", encoding="utf-8"
    )
    assert cli("update", "note", "--append", "more").exit_code == 0
    assert cli("index", "rebuild").exit_code == 0
    assert state(out) == before
    d = dfile.parse((root / "memory/note.md").read_text(encoding="utf-8"), "note")
    assert d.id == "note" and "more" in d.body
    assert "→ memory/note.md" in (root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["other", "../../outside/x", "/tmp/x"])
def test_state_file_name_field_does_not_redirect_writes(cli, root, name):
    """A session or scope file's own "name" is not a path: writes go back to the file it came from."""
    for sub, argv in (
        ("scopes", ("scope", "set", "k2", "v", "--agent", "A")),
        ("sessions", ("session", "add", "user", "hello")),
    ):
        folder = root / ".memcli" / sub
        folder.mkdir(parents=True, exist_ok=True)
        body = {"keys": {}} if sub == "scopes" else {"turns": []}
        (folder / "default.json").write_text(json.dumps({**body, "name": name}), encoding="utf-8")
        res = cli(*argv)
        assert res.exit_code == 0, res.output
        assert sorted(os.listdir(folder)) == ["default.json"]
        assert json.loads((folder / "default.json").read_text(encoding="utf-8"))["name"] == "default"
