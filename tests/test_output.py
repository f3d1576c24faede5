"""The human (piped) output of recall, list and heartbeat, compared whole; and the per-turn
commands through `memcli.cli.main` in this process (the entry point agents call every turn)."""

import json

import pytest

from memcli import Memory
from tests.conftest import invoke

EXPIRED_FIX = (
    "`memcli heartbeat --fix` moves it to memory/archive/ (kept, listed by `list --all`), or set a later --expires"
)


@pytest.fixture
def notes(root, cli):
    # the two 0.5 notes list newest first, then by id: written in this order, a clock second ticking
    # between them does not change the listing
    assert (
        cli("remember", "Old token", "rotated in 2020", "--expires", "2020-01-01", "--id", "old-token").exit_code == 0
    )
    assert (
        cli(
            "remember",
            "MySQL charset double encoding",
            "set utf8mb4 on the connection",
            "-t",
            "mysql",
            "--body",
            "Use SET NAMES utf8mb4 after connecting.\n",
            "--id",
            "mysql-charset",
        ).exit_code
        == 0
    )
    assert (
        cli(
            "remember",
            "Deploy to staging",
            "make release, then ./deploy.sh staging",
            "-t",
            "deploy",
            "--type",
            "procedure",
            "-i",
            "0.8",
            "--pin",
            "--id",
            "staging-deploy",
        ).exit_code
        == 0
    )
    return root


def test_recall_output(notes, cli):
    hit = cli.json("recall", "utf8mb4")["data"]["hits"][0]
    res = cli("recall", "utf8mb4")
    assert (res.exit_code, res.stderr) == (0, "") and hit["sure"] != "weak"
    assert res.stdout == (
        "## MySQL charset double encoding\n"
        f"<!-- memory/mysql-charset.md · {hit['layer']} · words: utf8mb4 · {hit['sure']} {hit['score']:.2f} -->\n"
        "set utf8mb4 on the connection\n"
        "#mysql\n"
        "\n"
        "Use SET NAMES utf8mb4 after connecting.\n"
    )
    res = cli("recall", "kubernetes pod autoscaler")  # no informative word shared
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", "nothing found for 'kubernetes pod autoscaler'\n")
    weak = cli("recall", "kubernetes staging cluster")  # staging shared: a candidate, said to be no answer
    assert weak.exit_code == 0 and "· weak " in weak.stdout
    assert weak.stderr == "no sure answer for 'kubernetes staging cluster': candidates that relate\n"


def test_list_output(notes, cli):
    res = cli("list")
    assert (res.exit_code, res.stderr) == (0, "")
    assert res.stdout == (
        "id\ttitle\ttype\timportance\tflags\ttags\n"
        "staging-deploy\tDeploy to staging\tprocedure\t0.8\tpinned,indexed\t#deploy\n"
        "mysql-charset\tMySQL charset double encoding\tnote\t0.5\tindexed\t#mysql\n"
        "old-token\tOld token\tnote\t0.5\tindexed\t\n"
    )
    (notes / "memory" / "bad name.md").write_text("x")
    res = cli("list", "--tag", "mysql")
    assert res.stdout == (
        "id\ttitle\ttype\timportance\tflags\ttags\n"
        "mysql-charset\tMySQL charset double encoding\tnote\t0.5\tindexed\t#mysql\n"
    )
    assert res.stderr == (
        "memcli: warning: skipped memory/bad name.md: the file name is not a valid id "
        "(letters, digits, '-', '_', '.'); rename it\n"
    )


def test_list_on_an_80_column_terminal_keeps_ids_whole(notes, cli, monkeypatch):
    from rich.cells import cell_len

    monkeypatch.setattr("memcli.render.is_tty", lambda stream=None: True)
    monkeypatch.setenv("COLUMNS", "80")
    long_id = "postgres-pool-exhausted-at-peak-高峰期"
    assert (
        cli(
            "remember",
            "Postgres connection pool exhausted under load at the monthly peak",
            "close sessions in a finally block; pool_size 10 + max_overflow 20 per worker",
            "-t",
            "postgres",
            "-t",
            "sqlalchemy",
            "-t",
            "performance",
            "--id",
            long_id,
        ).exit_code
        == 0
    )
    res = cli("list")
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["id", "title", "type", "imp.", "flags", "tags"]  # the flags column is named
    for mid in (long_id, "staging-deploy", "mysql-charset", "old-token"):
        assert any(ln.startswith(f" {mid} ") for ln in lines), mid  # whole, never cut
    assert all(cell_len(ln) <= 80 for ln in lines), [cell_len(ln) for ln in lines]
    assert len(lines) == 5 and "…" in res.stdout  # one line a memory: the title and tags gave way
    assert "📌★" in res.stdout and res.stderr == "flags: 📌 pinned · ★ in MEMORY.md (indexed)\n"


def test_show_on_a_terminal_has_expires_and_aliases(notes, cli, monkeypatch):
    monkeypatch.setattr("memcli.render.is_tty", lambda stream=None: True)
    monkeypatch.setenv("COLUMNS", "80")
    assert cli("update", "old-token", "-a", "旧令牌", "-a", "legacy token").exit_code == 0
    out = cli("show", "old-token").stdout
    assert "aliases: 旧令牌, legacy token" in out and "expires 2020-01-01" in out


def test_heartbeat_output(notes, cli):
    expired = f"warning expired memory/old-token.md:12 old-token expired on 2020-01-01 (fix: {EXPIRED_FIX})\n"
    res = cli("heartbeat")
    assert (res.exit_code, res.stdout) == (0, expired)
    assert res.stderr == "heartbeat: 0 errors, 1 warning, 0 info in 4 files; 1 fixable with `memcli heartbeat --fix`\n"
    res = cli("heartbeat", "--fix", "--dry-run")
    assert res.stdout == (
        "would archive old-token (expired 2020-01-01): memory/old-token.md -> "
        "memory/archive/old-token.md and drop its index line\n" + expired
    )
    assert res.stderr == "heartbeat: 0 errors, 1 warning, 0 info in 4 files\n"
    res = cli("heartbeat", "--fix", "--check")
    assert res.exit_code == 0
    assert res.stdout == (
        "archived old-token (expired 2020-01-01): memory/old-token.md -> memory/archive/old-token.md\n"
    )
    assert res.stderr == "heartbeat: all clear (4 files)\n"


# ---------------------------------------------------------------- the per-turn commands, in process


def test_per_turn_commands_through_main(example_root):
    base = ["--root", str(example_root), "--session", "chat", "--scope", "task"]
    res = invoke(base + ["should-recall", "还记得上次 charset 的坑吗"])
    assert (res.exit_code, res.stdout) == (0, "explicit\n")
    assert invoke(base + ["should-recall", "write a haiku"]).exit_code == 1
    res = invoke(base + ["recall", "charset", "--json"])
    env = json.loads(res.stdout)
    assert res.exit_code == 0 and env["command"] == "recall" and env["data"]["hits"][0]["layer"] == "index"
    res = invoke(base + ["remember", "Turn note", "from main", "-t", "turn", "-i", "0.9"])
    assert (res.exit_code, res.stdout) == (0, "turn-note\n")
    d = Memory(example_root).get("turn-note")
    assert (d.type, d.importance, d.tags) == ("note", 0.9, ("turn",))
    res = invoke(base + ["scope", "set", "draft", "v1", "--agent", "Writer"])
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "draft set by Writer\n")
    res = invoke(base + ["scope", "set", "draft", "v2", "--agent", "Editor"])
    assert res.exit_code == 4 and "belongs to agent 'Writer'" in res.stderr
    res = invoke(base + ["session", "add", "user", "-"], input="部署到测试环境\n")
    assert (res.exit_code, res.stderr) == (0, "session chat: 1 turn\n")
    assert Memory(example_root).session("chat").show()["turns"][0]["text"] == "部署到测试环境\n"
    assert Memory(example_root).scope("task").get("draft")["value"] == "v1"
