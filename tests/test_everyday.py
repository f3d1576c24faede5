"""stats, search, rename, export / import, list formats, the near-duplicate warning."""

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.core import Memory
from memcli.render import jsonl
from memcli.store.markers import marker_lines
from memcli.usecases.init import init_root
from tests.conftest import examples, run_memcli


# ---------------------------------------------------------------- stats


def test_stats_counts(cli, root):
    cli("remember", "Old habit", "was true once", "--type", "fact", "--expires", "2020-01-01")
    cli("remember", "Current rule", "holds", "--type", "preference")
    old = root / "memory/ancient-note.md"
    old.write_text("---\ntitle: Ancient note\nsummary: untouched for years\nupdated: 2020-01-01T00:00:00Z\n---\nbody\n")
    data = cli.json("stats", code=0)["data"]
    assert data["memories"] == 3 and data["by_type"] == {"fact": 1, "note": 1, "preference": 1}
    assert data["expired"] == 1 and data["stale"] >= 1 and data["archived"] == 0
    assert data["index"]["max_lines"] == 39 and data["index"]["entries"] == 2
    cli("heartbeat", "--fix")
    data = cli.json("stats", code=0)["data"]
    assert data["archived"] == 1 and data["expired"] == 0 and data["memories"] == 2
    assert data["state_bytes"]["heartbeat-cache.json"] > 0
    human = cli("stats").stdout
    assert re.search(r"^index +\d+/39 lines", human, re.M) and "archived   1" in human


# ---------------------------------------------------------------- search


def test_search_literal_regex_and_json(example_root):
    r = run_memcli("--root", example_root, "search", "utf8mb4")
    assert r.returncode == 0
    for line in r.stdout.splitlines():
        path, n, text = line.split(":", 2)
        assert (example_root / path).read_text().splitlines()[int(n) - 1] == text and "utf8mb4" in text.lower()
    assert run_memcli("--root", example_root, "search", "UTF8MB4").returncode == 1  # a capital: case-sensitive
    assert run_memcli("--root", example_root, "search", "UTF8MB4", "-i").returncode == 0
    env = json.loads(run_memcli("--root", example_root, "search", "--regex", r"20\d\d-1[12]", "--json").stdout)
    assert (
        env["ok"]
        and env["data"]["matches"]
        and all(re.search(r"20\d\d-1[12]", m["text"]) for m in env["data"]["matches"])
    )
    assert run_memcli("--root", example_root, "search", "a.c(").returncode == 1  # literal: no regex error
    bad = run_memcli("--root", example_root, "search", "--regex", "a.c(")
    assert bad.returncode == 2 and "regular expression" in bad.stderr
    assert run_memcli("--root", example_root, "search", "上次").returncode in (0, 1)


def test_search_finds_chinese_text(cli):
    cli("remember", "日志统一用 UTC", "服务器日志时间戳一律 UTC")
    assert cli("search", "时间戳").stdout.startswith("memory/")


# ---------------------------------------------------------------- rename


def test_rename_updates_file_index_and_references(cli, root):
    cli("remember", "Deploy steps", "run make deploy", "--id", "deploy")
    cli(
        "remember",
        "Release notes",
        "see the deploy memory",
        "--body",
        "Follow [steps](memory/deploy.md) and [[deploy]] and [[deploy|the steps]]; not memory/deployer.md.",
    )
    idx = root / "MEMORY.md"
    idx.write_text(idx.read_text() + "\nSee also memory/deploy.md\n")
    data = cli.json("rename", "deploy", "deploy-staging", code=0)["data"]
    assert data["references"] == ["release-notes"] and data["index"]
    assert not (root / "memory/deploy.md").exists()
    assert "id: deploy-staging\n" in (root / "memory/deploy-staging.md").read_text()
    body = (root / "memory/release-notes.md").read_text()
    assert "[steps](memory/deploy-staging.md)" in body and "[[deploy-staging]]" in body
    assert "[[deploy-staging|the steps]]" in body and "memory/deployer.md" in body
    text = idx.read_text()
    assert "memory/deploy-staging.md" in text and "memory/deploy.md" not in text
    assert cli("index", "check").exit_code == 0
    assert cli.json("show", "deploy-staging", code=0)["data"]["title"] == "Deploy steps"


def test_rename_keeps_crlf_files_as_they_are(cli, root):
    cli("remember", "Win note", "x", "--id", "win")
    cli("remember", "Other", "x", "--id", "other", "--body", "see memory/win.md")
    for name in ("win", "other"):
        p = root / f"memory/{name}.md"
        p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))
    cli("index", "rebuild")
    assert cli("rename", "win", "windows").exit_code == 0
    moved = (root / "memory/windows.md").read_bytes()
    assert b"id: windows\r\n" in moved and b"\r\r" not in moved and moved.count(b"\n") == moved.count(b"\r\n")
    other = (root / "memory/other.md").read_bytes()
    assert b"see memory/windows.md\r\n" in other and b"\r\r" not in other
    assert cli("index", "check").exit_code == 0


def test_rename_refusals_change_nothing(cli, root):
    cli("remember", "One", "x", "--id", "one")
    cli("remember", "Two", "x", "--id", "two")
    before = {p.name: p.read_text() for p in (root / "memory").glob("*.md")}
    assert cli("rename", "one", "two").exit_code == 4
    assert cli("rename", "nope", "three").exit_code == 3
    assert cli("rename", "one", "../evil").exit_code == 3
    assert cli("rename", "one", "one").exit_code == 2
    (root / "memcli.yaml").write_text("lock_timeout: 0.2s\n")
    from memcli.store.fs import root_lock

    with root_lock(root, 1):
        assert cli("rename", "one", "uno").exit_code == 3  # the lock is held: waits, then gives up
    assert {p.name: p.read_text() for p in (root / "memory").glob("*.md")} == before


def test_rename_an_archived_memory(cli, root):
    cli("remember", "Gone", "expired", "--id", "gone", "--expires", "2020-01-01")
    cli("heartbeat", "--fix")
    assert (root / "memory/archive/gone.md").exists()
    assert cli("rename", "gone", "long-gone").exit_code == 0
    assert (root / "memory/archive/long-gone.md").exists() and not (root / "memory/archive/gone.md").exists()


# ---------------------------------------------------------------- export / import


def _new_root(base: Path, name: str) -> Path:
    return Path(init_root(base / name)["root"])


TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip)
# prose as the write check lets it in: line breaks (CRLF too) and tabs, no other control character,
# no line git would read as a conflict marker
PROSE = (
    st.text(st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\n\t\u2028"), max_size=200)
    .map(lambda s: s.replace("\u2028\t", "\r\n"))
    .filter(lambda s: not marker_lines(s))
)
MEMORY = st.fixed_dictionaries(
    {
        "title": TEXT,
        "summary": PROSE.map(lambda s: s[:60].translate({0x0D: " ", 0x85: " "})),
        "tags": st.lists(st.from_regex(r"[a-z0-9中文]{1,8}", fullmatch=True), max_size=3),
        "aliases": st.lists(TEXT, max_size=2),
        "body": PROSE,
        "type": st.sampled_from(["fact", "preference", "lesson", "procedure", "event", "note"]),
        "importance": st.floats(0, 1).map(lambda x: round(x, 3)),
        "pinned": st.booleans(),
        "expires": st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())),
    }
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(MEMORY, min_size=1, max_size=4))
def test_export_import_round_trip(memories):
    with tempfile.TemporaryDirectory() as tmp:
        a = _new_root(Path(tmp), "a")
        (a / "memcli.yaml").write_text("write:\n  secrets: allow\n")
        m = Memory(a)
        for i, rec in enumerate(memories):
            m.remember(
                rec["title"],
                rec["summary"],
                tags=rec["tags"],
                aliases=rec["aliases"],
                body=rec["body"],
                type=rec["type"],
                importance=rec["importance"],
                pinned=rec["pinned"],
                expires=rec["expires"],
                id=f"m{i}",
            )
        first = m.export()["memories"]
        assert len(first) == len(memories)
        dump = Path(tmp) / "dump.jsonl"
        dump.write_text(jsonl(first), encoding="utf-8")
        b = _new_root(Path(tmp), "b")
        (b / "memcli.yaml").write_text("write:\n  secrets: allow\n")
        res = Memory(b).import_(dump)
        assert sorted(res["imported"]) == sorted(f"m{i}" for i in range(len(memories))) and not res["skipped"]
        assert Memory(b).export()["memories"] == first
        # importing again skips every id: nothing is overwritten
        again = Memory(b).import_(dump)
        assert again["imported"] == [] and len(again["skipped"]) == len(memories)


def test_export_import_through_the_cli(example_root, tmp_path):
    run_memcli("--root", example_root, "update", "release-2026-12", "--expires", "2020-01-01")
    run_memcli("--root", example_root, "heartbeat", "--fix")
    out = run_memcli("--root", example_root, "export")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 10
    assert [json.loads(ln)["id"] for ln in out.stdout.splitlines() if json.loads(ln)["archived"]] == ["release-2026-12"]
    assert all(json.loads(ln)["id"] for ln in out.stdout.splitlines())
    other = tmp_path / "other"
    run_memcli("init", other)
    r = run_memcli("--root", other, "import", "-", input=out.stdout)
    assert r.returncode == 0 and "imported 10 memories (jsonl)" in r.stderr
    assert run_memcli("--root", other, "export").stdout == out.stdout
    assert (other / "memory/archive/release-2026-12.md").exists()
    assert run_memcli("--root", other, "index", "check").returncode == 0


def test_import_markdown_folder(root, tmp_path):
    notes = tmp_path / "notes"
    (notes / "ops").mkdir(parents=True)
    (notes / ".hidden").mkdir()
    (notes / "Deploy Checklist.md").write_text("# Deploy checklist\n\nRun the smoke tests first.\n\n- then tag\n")
    (notes / "ops" / "pager.md").write_text("Who is on call: see the rota.\n")
    (notes / "ops" / "kept.md").write_text(
        "---\ntitle: Kept with frontmatter\nsummary: s\ntags: [a]\nimportance: 0.9\n---\nBody.\n"
    )
    (notes / ".hidden" / "secret.md").write_text("# not imported\n")
    res = Memory(root).import_(notes)
    assert sorted(res["imported"]) == ["deploy-checklist", "kept", "pager"] and res["kind"] == "markdown"
    m = Memory(root)
    d = m.get("deploy-checklist")
    assert d.title == "Deploy checklist" and d.summary == "Run the smoke tests first." and "then tag" in d.body
    assert m.get("pager").title == "pager" and m.get("pager").source == "ops/pager.md"
    k = m.get("kept")
    assert (k.title, k.tags, k.importance) == ("Kept with frontmatter", ("a",), 0.9)
    assert m.check_index() == []


CLAUDE_MEMORY = """# Project memory

## Build
- Use `uv run pytest -q` for tests; the Makefile target is stale.
- The CI cache key includes the lockfile hash.
  Bump it when the cache is poisoned.

## People
* Ana owns the payments service.
- [Deploy runbook](runbook.md) — how to ship to staging
- [Missing link](gone.md) — a note whose file is gone
"""


def test_import_agent_memory_file(root, tmp_path):
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(CLAUDE_MEMORY)
    (folder / "runbook.md").write_text("# Runbook\n\n1. make deploy\n2. watch the dashboard\n")
    r = run_memcli("--root", root, "import", folder / "MEMORY.md", "--json")
    data = json.loads(r.stdout)["data"]
    assert r.returncode == 0 and data["kind"] == "bullets" and len(data["imported"]) == 5
    m = Memory(root)
    by_title = {d.title: d for d in m.list().details}
    assert by_title["Use `uv run pytest -q` for tests; the Makefile target is stale."].tags == ("build",)
    ci = by_title["The CI cache key includes the lockfile hash."]
    assert "Bump it when the cache is poisoned." in ci.body
    assert by_title["Ana owns the payments service."].tags == ("people",)
    runbook = by_title["Deploy runbook"]
    assert runbook.summary == "how to ship to staging" and "make deploy" in runbook.body
    assert by_title["Missing link"].summary == "a note whose file is gone"
    assert m.check_index() == []


def test_import_refuses_a_secret_and_writes_nothing(root, tmp_path):
    f = tmp_path / "mem.md"
    f.write_text("- fine note\n- token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 for the bot\n")
    r = run_memcli("--root", root, "import", f)
    assert r.returncode == 4 and "secret" in r.stderr
    assert list((root / "memory").glob("*.md")) == []


def test_import_bad_jsonl_names_the_line(root, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"title": "ok"}\n{broken\n')
    r = run_memcli("--root", root, "import", f)
    assert r.returncode == 2 and "x.jsonl:2" in r.stderr and list((root / "memory").glob("*.md")) == []


def test_import_a_jsonl_number_too_long_to_read_is_a_usage_error(root, tmp_path):
    """json refuses an integer of more than 4,300 digits with a plain ValueError (Python 3.11+: no
    ``msg`` as its decode errors have): the line is named, no traceback."""
    f = tmp_path / "x.jsonl"
    f.write_text('{"title": "ok", "importance": ' + "1" * 5000 + "}\n")
    r = run_memcli("--root", root, "import", f)
    assert r.returncode == 2 and "x.jsonl:1: not a JSON line" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and list((root / "memory").glob("*.md")) == []


# ---------------------------------------------------------------- list formats


def test_list_formats(example_root):
    piped = run_memcli("--root", example_root, "list").stdout.splitlines()
    assert piped[0] == "id\ttitle\ttype\timportance\tflags\ttags" and len(piped) == 11
    assert run_memcli("--root", example_root, "list", "--format", "tsv").stdout.splitlines() == piped
    rows = json.loads(run_memcli("--root", example_root, "list", "--format", "json").stdout)
    env = json.loads(run_memcli("--root", example_root, "list", "--json").stdout)
    assert rows == env["data"]["memories"] and [r["id"] for r in rows] == [ln.split("\t")[0] for ln in piped[1:]]
    md = run_memcli("--root", example_root, "list", "--format", "md").stdout.splitlines()
    assert md[0] == "| id | title | type | importance | flags | tags |" and md[1].startswith("|---")
    assert len(md) == 12
    bad = run_memcli("--root", example_root, "list", "--format", "xml")
    assert bad.returncode == 2 and "--format" in bad.stderr


def test_tsv_and_md_escape_separators(cli, root):
    cli("remember", "Pipes | and\ttabs", "x")
    tsv = run_memcli("--root", root, "list").stdout.splitlines()
    assert len(tsv) == 2 and tsv[1].split("\t")[1] == "Pipes | and tabs"
    md = run_memcli("--root", root, "list", "--format", "md").stdout.splitlines()
    assert "Pipes \\| and tabs" in md[2]


# ---------------------------------------------------------------- near-duplicates


def test_remember_warns_about_a_near_duplicate(cli):
    cli("remember", "MySQL charset double encoding", "set utf8mb4 on the connection", "--id", "mysql-charset")
    env = cli.json("remember", "MySQL charset double encodings", "set utf8mb4 on the connection", code=0)
    assert env["data"]["id"] == "mysql-charset-double-encodings"
    assert any("nearly duplicates mysql-charset" in w for w in env["warnings"])
    env = cli.json("remember", "Release 2027-01 freeze", "no deploys", code=0)
    env = cli.json("remember", "Release 2027-02 freeze", "no deploys", code=0)
    assert env["warnings"] == []  # numbers tell two memories apart
    env = cli.json("remember", "Postgres pool exhaustion", "raise max connections", code=0)
    assert env["warnings"] == []


def test_typer_and_the_library_warn_alike(root):
    from typer.testing import CliRunner

    from memcli.cli.typer_app import app

    m = Memory(root)
    m.remember("Kafka consumer lag alert", "page when lag exceeds ten thousand")
    res = m.remember("Kafka consumer lag alerts", "page when lag exceeds ten thousand")
    assert res.warnings and res.warnings[0].startswith(
        "kafka-consumer-lag-alerts nearly duplicates kafka-consumer-lag-alert:"
    )
    r = CliRunner().invoke(
        app,
        [
            "--root",
            str(root),
            "remember",
            "Kafka consumer lag alerts!",
            "page when lag exceeds ten thousand",
            "--id",
            "third",
            "--json",
        ],
    )
    warnings = json.loads(r.stdout)["warnings"]
    assert r.exit_code == 0 and warnings[0].startswith("third nearly duplicates kafka-consumer-lag-alert")


def test_near_duplicates_reach_beyond_the_index(root):
    from memcli.usecases.duplicates import near_duplicates

    (root / "memcli.yaml").write_text("index:\n  max_lines: 4\n")
    m = Memory(root)
    for i in range(6):
        m.remember(f"Filler memory number {chr(97 + i)} about topic {chr(97 + i)}", "", importance=0.9)
    m.remember("Kafka consumer lag alert", "page when lag exceeds ten thousand", importance=0.1)
    assert "kafka-consumer-lag-alert" not in (root / "MEMORY.md").read_text()
    assert near_duplicates(m.store, "Kafka consumer lag alerts", "page when lag exceeds ten thousand") == [
        "kafka-consumer-lag-alert"
    ]


@pytest.mark.parametrize("fmt", ["json", "tsv", "md"])
def test_list_format_of_nothing(root, fmt):
    r = run_memcli("--root", root, "list", "--format", fmt)
    assert r.returncode == 0 and r.stdout in (
        "[]\n",
        "id\ttitle\ttype\timportance\tflags\ttags\n",
        "| id | title | type | importance | flags | tags |\n|---|---|---|---|---|---|\n",
    )
