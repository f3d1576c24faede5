"""The write and read commands through the real CLI, one temp root per test."""

import json
import os

import pytest

from memcli import __version__
from memcli.store.details import parse
from tests.conftest import Cli, run_memcli


def lines(root):
    return (root / "MEMORY.md").read_text(encoding="utf-8").split("\n")[:-1]


def test_version():
    res = Cli(None)("--version", root=False)
    assert res.exit_code == 0 and res.stdout.strip() == f"memcli {__version__}"


def test_envelope_contract(cli):
    env = cli.json("remember", "Use uv for installs", "faster than pip", code=0)
    assert set(env) == {"version", "command", "ok", "data", "warnings", "error"}
    assert env["version"] == 1 and env["command"] == "remember" and env["ok"] is True and env["error"] is None
    assert env["data"]["id"] == "use-uv-for-installs" and env["data"]["indexed"] is True
    bad = cli.json("show", "no-such-id", code=3)
    assert bad["ok"] is False and bad["data"] == {"candidates": []}
    assert set(bad["error"]) == {"code", "message"} and bad["error"]["code"] == "not_found"


def test_remember_writes_detail_and_index_line(cli, root):
    res = cli(
        "remember",
        "MySQL charset double encoding",
        "set utf8mb4 on the connection, not only the table",
        "-t",
        "mysql",
        "-t",
        "charset",
        "-a",
        "中文乱码",
        "--type",
        "lesson",
        "-i",
        "0.8",
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "mysql-charset-double-encoding"
    d = parse((root / "memory/mysql-charset-double-encoding.md").read_text(), "mysql-charset-double-encoding")
    assert d.tags == ("mysql", "charset") and d.aliases == ("中文乱码",) and d.type == "lesson" and d.importance == 0.8
    assert d.created and d.created == d.updated and d.created.endswith("Z")
    assert (
        "- **MySQL charset double encoding**: set utf8mb4 on the connection, not only the table"
        " | #mysql #charset | → memory/mysql-charset-double-encoding.md"
    ) in lines(root)
    shown = cli("show", "mysql-charset-double-encoding")
    assert shown.exit_code == 0 and "utf8mb4" in shown.stdout and shown.stdout.startswith("---\n")
    assert cli("index", "check").exit_code == 0


def test_chinese_title_keeps_chinese_id(cli, root):
    res = cli("remember", "数据库迁移前先备份", "先 pg_dump 再跑 alembic", "-t", "数据库")
    assert res.stdout.strip() == "数据库迁移前先备份"
    assert (root / "memory/数据库迁移前先备份.md").is_file()
    assert cli("show", "数据库迁移前先备份").exit_code == 0


def test_existing_id_refused(cli):
    assert cli("remember", "Same", "one").exit_code == 0
    res = cli("remember", "Same", "two")
    assert res.exit_code == 4 and "already exists" in res.stderr
    assert cli("remember", "Other", "x", "--id", "same").exit_code == 4


@pytest.mark.parametrize(
    "title, code, words",
    [
        ("", 2, "title"),
        ("   ", 2, "title"),
        ("x" * 300, 2, "300 characters"),
    ],
)
def test_bad_titles(cli, title, code, words):
    res = cli("remember", title, "s")
    assert res.exit_code == code and words in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("bad_id", ["../../x", "/etc/passwd", "a/b", ".hidden", "a\\b"])
def test_unsafe_ids_refused_everywhere(cli, root, bad_id):
    for args in (
        ("remember", "T", "--id", bad_id),
        ("show", bad_id),
        ("update", bad_id, "-s", "x"),
        ("forget", bad_id, "--yes"),
    ):
        res = cli(*args)
        assert res.exit_code == 3, (args, res.output)
        assert "invalid id" in res.stderr
    assert sorted(os.listdir(root / "memory")) == ["archive", "episodes"]


def test_memory_symlink_out_of_root_refused(tmp_path, root):
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "memory").rename(tmp_path / "old-memory")
    (root / "memory").symlink_to(outside)
    res = Cli(root)("remember", "Escape", "x")
    assert res.exit_code == 3 and "outside" in res.stderr
    assert os.listdir(outside) == []


def test_body_sources(cli, root, tmp_path):
    f = tmp_path / "body.md"
    f.write_text("line one\nline two\n", encoding="utf-8")
    assert cli("remember", "From file", "s", "--body-file", f).exit_code == 0
    assert "line two" in (root / "memory/from-file.md").read_text()
    assert cli("remember", "From stdin", "s", "--body", "-", input="piped text\n").exit_code == 0
    assert "piped text" in (root / "memory/from-stdin.md").read_text()
    assert cli("remember", "Summary from stdin", "-", input="the summary\n").exit_code == 0
    assert "summary: the summary" in (root / "memory/summary-from-stdin.md").read_text()


@pytest.mark.parametrize(
    "content, words",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        ("caf\xe9".encode("latin-1"), "not UTF-8"),
        (b"x" * 1_000_001, "larger than 1 MB"),
    ],
)
def test_bad_body_files_refused(cli, root, tmp_path, content, words):
    f = tmp_path / "body.bin"
    f.write_bytes(content)
    res = cli("remember", "Bad body", "s", "--body-file", f)
    assert res.exit_code == 2 and words in res.stderr
    assert not (root / "memory/bad-body.md").exists()


def test_body_with_its_own_frontmatter_never_makes_a_second_block(cli, root, tmp_path):
    f = tmp_path / "note.md"
    f.write_text("---\ntags: [imported]\ncustom: kept\n---\nthe body\n")
    assert cli("remember", "Imported", "s", "--body-file", f).exit_code == 0
    text = (root / "memory/imported.md").read_text()
    assert text.count("\n---\n") == 1 and text.startswith("---\n")
    d = parse(text, "imported")
    assert d.tags == ("imported",) and d.extra == {"custom": "kept"} and d.body == "the body\n"


def test_update_keeps_history(cli, root):
    cli("remember", "Deploy", "run make deploy", "-t", "ops")
    res = cli("update", "deploy", "--summary", "run ./deploy.sh", "--tag", "release", "--append", "Added step.")
    assert res.exit_code == 0, res.output
    d = parse((root / "memory/deploy.md").read_text(), "deploy")
    assert d.summary == "run ./deploy.sh" and d.tags == ("ops", "release")
    assert "## History" in d.body and "summary was: run make deploy" in d.body and "Added step." in d.body
    cli("update", "deploy", "--summary", "third")
    d = parse((root / "memory/deploy.md").read_text(), "deploy")
    assert d.body.count("## History") == 1 and "summary was: run ./deploy.sh" in d.body
    assert any("third" in ln for ln in lines(root))
    assert cli("update", "deploy", "--title", "Deploy to prod").exit_code == 0
    d = parse((root / "memory/deploy.md").read_text(), "deploy")
    assert d.title == "Deploy to prod" and "Deploy" in d.aliases


def test_forget_purge_needs_yes_off_a_terminal(cli, root):
    cli("remember", "Temp", "x")
    res = cli("forget", "temp", "--purge")
    assert res.exit_code == 2 and "--yes" in res.stderr
    assert (root / "memory/temp.md").exists()
    res = cli("forget", "temp", "--purge", "--yes")
    assert res.exit_code == 0 and "deleted memory/temp.md and its index line" in res.stderr
    assert not (root / "memory/temp.md").exists() and not any("temp.md" in ln for ln in lines(root))
    assert not (root / "memory/archive/temp.md").exists()


def test_unknown_id_suggests_close_ones(cli):
    cli("remember", "MySQL charset", "x")
    res = cli("show", "mysql-charst")
    assert res.exit_code == 3 and "mysql-charset" in res.stderr


def test_no_root(tmp_path):
    res = Cli(None)("list", root=False)
    assert res.exit_code == 3 and "memcli init" in res.stderr
    res = Cli(tmp_path / "nowhere")("list")
    assert res.exit_code == 3 and "memcli init" in res.stderr


def test_malformed_config_exit_3(cli, root):
    (root / "memcli.yaml").write_text("index:\n  max_lines: [oops\n")
    res = cli("list")
    assert res.exit_code == 3 and "memcli.yaml line" in res.stderr
    (root / "memcli.yaml").write_text("index:\n  max_line: 10\n")
    res = cli("list")
    assert res.exit_code == 3 and "index.max_line" in res.stderr


def test_broken_detail_file_does_not_stop_the_rest(cli, root):
    cli("remember", "Good one", "fine")
    cli("remember", "Bad one", "will break")
    (root / "memory/bad-one.md").write_text("---\ntitle: [oops\nsummary: x\n---\nbody\n")
    listed = cli("list")
    assert listed.exit_code == 0 and "good-one" in listed.stdout and "memory/bad-one.md:3" in listed.stderr
    assert cli("remember", "Third", "still works").exit_code == 0
    check = cli("index", "check")
    assert check.exit_code == 1 and "memory/bad-one.md:3" in check.stdout
    assert (root / "memory/bad-one.md").read_text().startswith("---\ntitle: [oops")
    res = cli("show", "bad-one")
    assert res.exit_code == 3 and "memory/bad-one.md:3" in res.stderr


def test_hand_written_lines_survive_every_write(cli, root):
    text = (root / "MEMORY.md").read_text()
    text += "\n## Team notes\n- keep this line exactly   as it is\n<!-- and this -->\n"
    (root / "MEMORY.md").write_text(text)
    cli("remember", "One", "a", "-i", "0.2")
    cli("remember", "Two", "b", "-i", "0.9")
    cli("update", "one", "--summary", "aa")
    cli("index", "rebuild")
    out = (root / "MEMORY.md").read_text()
    for kept in ("## Team notes", "- keep this line exactly   as it is", "<!-- and this -->", "# MEMORY"):
        assert kept + "\n" in out
    entry_lines = [ln for ln in out.split("\n") if ln.startswith("- **")]
    assert entry_lines[0].startswith("- **Two**") and entry_lines[1].startswith("- **One**: aa")


def test_index_order_is_pinned_importance_then_newest(cli, root):
    cli("remember", "Low", "x", "-i", "0.1")
    cli("remember", "Pinned low", "x", "-i", "0.1", "--pin")
    cli("remember", "High", "x", "-i", "0.9")
    cli("remember", "Low newer", "x", "-i", "0.1")
    titles = [ln.split("**")[1] for ln in lines(root) if ln.startswith("- **")]
    assert titles[:2] == ["Pinned low", "High"]
    assert set(titles[2:]) == {"Low", "Low newer"}


def test_full_index_demotes_and_names_it(cli, root):
    (root / "memcli.yaml").write_text("index:\n  max_lines: 8\n")
    for i in range(8):
        res = cli("remember", f"Note {i}", "s", "-i", f"0.{i + 1}")
        assert res.exit_code == 0
    assert len(lines(root)) < 8
    assert "note-4" in res.stderr  # the lowest-ranked entry when note-7 arrived
    assert [ln.split("**")[1] for ln in lines(root) if ln.startswith("- **")] == ["Note 7", "Note 6", "Note 5"]
    env = cli.json("remember", "Note top", "s", "-i", "0.95", code=0)
    assert env["data"]["demoted"] and env["warnings"]
    assert len(os.listdir(root / "memory")) == 2 + 9


def test_full_index_refuse_mode(cli, root):
    (root / "memcli.yaml").write_text("index:\n  max_lines: 7\n  on_full: refuse\n")
    codes = [cli("remember", f"Note {i}", "s").exit_code for i in range(4)]
    assert codes[:2] == [0, 0] and codes[-1] == 4
    assert not (root / "memory/note-3.md").exists()


@pytest.mark.slow  # two hundred processes in a row
def test_two_hundred_remembers(root):
    cli = Cli(root)
    for i in range(200):
        assert cli("remember", f"Memory number {i}", f"summary {i}", "-i", f"{(i % 10) / 10}").exit_code == 0
    assert len(lines(root)) < 40
    assert len([n for n in os.listdir(root / "memory") if n.endswith(".md")]) == 200
    assert cli("index", "check").exit_code == 0


def test_rebuild_is_deterministic(cli, root):
    for i in range(5):
        cli("remember", f"Item {i}", f"s{i}", "-i", f"0.{i}")
    first = (root / "MEMORY.md").read_bytes()
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text().replace("Item 3", "Drifted"))
    assert cli("index", "check").exit_code == 1
    assert cli("index", "rebuild").exit_code == 0
    assert (root / "MEMORY.md").read_bytes() == first
    assert cli("index", "rebuild").exit_code == 0
    assert (root / "MEMORY.md").read_bytes() == first


def test_example_root_matches_the_example_file(example_root):
    from tests.conftest import ROOT_DIR

    assert (example_root / "MEMORY.md").read_text() == (ROOT_DIR / "MEMORY.example.md").read_text()
    assert len(lines(example_root)) < 40
    assert Cli(example_root)("index", "check").exit_code == 0


def test_init_never_overwrites(tmp_path):
    r = tmp_path / "r"
    Cli(None)("init", r, root=False)
    (r / "MEMORY.md").write_text("# mine\n")
    (r / "memcli.yaml").write_text("# mine\n")
    res = Cli(None)("init", r, root=False)
    assert res.exit_code == 0
    assert (r / "MEMORY.md").read_text() == "# mine\n" and (r / "memcli.yaml").read_text() == "# mine\n"
    assert ".memcli/" in (r / ".gitignore").read_text()


def test_list_filters_and_json(cli):
    cli("remember", "A", "x", "-t", "db", "--type", "fact")
    cli("remember", "B", "x", "-t", "ops")
    env = cli.json("list", "--tag", "db", code=0)
    assert [m["id"] for m in env["data"]["memories"]] == ["a"]
    env = cli.json("list", "--type", "note", code=0)
    assert [m["id"] for m in env["data"]["memories"]] == ["b"]
    plain = cli("list").stdout.splitlines()
    assert plain[0] == "id\ttitle\ttype\timportance\tflags\ttags"
    assert plain[1].split("\t")[:2] in (["a", "A"], ["b", "B"])


def test_edit_runs_editor_and_refreshes_index(cli, root, monkeypatch, tmp_path):
    cli("remember", "Edit me", "old summary")
    script = tmp_path / "ed.py"
    script.write_text(
        "import sys,re\np=sys.argv[1]\nt=open(p).read().replace('old summary','new summary')\nopen(p,'w').write(t)\n"
    )
    import sys

    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    res = cli("edit", "edit-me")
    assert res.exit_code == 0, res.output
    assert any("new summary" in ln for ln in lines(root))


def test_real_process_exit_codes_and_pipes(root):
    r = run_memcli("--root", root, "remember", "Piped", "-", input="from a pipe\n")
    assert r.returncode == 0 and r.stdout == "piped\n"
    r = run_memcli("--root", root, "show", "piped")
    assert "summary: from a pipe" in r.stdout and "\x1b[" not in r.stdout
    r = run_memcli("--root", root, "show", "nope")
    assert r.returncode == 3 and r.stderr.startswith("memcli: error:") and "Traceback" not in r.stderr
    r = run_memcli("--root", root, "list", "--json")
    assert json.loads(r.stdout)["ok"] is True
    r = run_memcli("--root", root, "remember")
    assert r.returncode == 2
