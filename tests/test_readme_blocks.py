"""README.md, CONTRIBUTING.md and docs/ cannot drift from the app: their generated blocks (the
command tables, every --help, the configuration keys, the Python API, the error codes, the test
extra, outputs of real runs) are made again and must equal what each file holds, and the notes
beside the command tables name only commands and options that exist.
`python -m cogapp -r README.md CONTRIBUTING.md docs/*.md docs/*/*.md` rewrites the blocks."""

import difflib
import re

import pytest

from tests.conftest import ROOT_DIR
from tests.readme_blocks import command_names, command_table, options_of

README = ROOT_DIR / "README.md"
COMMANDS = ROOT_DIR / "docs" / "guide" / "commands.md"
FIX = "{} and the app disagree; run `python -m cogapp -r {}` and commit the result"


def pages() -> list:
    """Every Markdown file that holds generated blocks or is part of the docs."""
    return [README, ROOT_DIR / "CONTRIBUTING.md", *sorted((ROOT_DIR / "docs").rglob("*.md"))]


def regenerate(text: str, name: str = "README.md") -> str:
    from cogapp import Cog

    return Cog().process_string(text, fname=name)


def drift(text: str, name: str = "README.md") -> str:
    """A unified diff of what regenerating the blocks changes ('' when nothing)."""
    return "".join(
        difflib.unified_diff(
            text.splitlines(True), regenerate(text, name).splitlines(True), name, name + " (regenerated)", n=1
        )
    )


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT_DIR)))
def test_the_generated_blocks_are_what_the_app_and_real_runs_give(page):
    text = page.read_text(encoding="utf-8")
    assert text.count("[[[end]]]") == text.count("[[[cog")
    rel = str(page.relative_to(ROOT_DIR))
    diff = drift(text, rel)
    assert not diff, f"{FIX.format(rel, rel)}:\n{diff[:4000]}"


def test_the_pages_that_must_be_generated_are():
    """The reference pages are made whole from the code; the README's quick start shows a real run
    and the test extra as pyproject.toml has it."""
    need = {
        "README.md": 2,
        "docs/cli.md": 1,
        "docs/python-api.md": 1,
        "docs/configuration.md": 2,
        "docs/exit-codes.md": 1,
        "docs/guide/commands.md": 2,
        "docs/guide/recall.md": 2,
        "docs/guide/heartbeat.md": 1,
        "docs/guide/reflect.md": 3,
        "docs/plugins.md": 1,
    }
    for rel, n in need.items():
        assert (ROOT_DIR / rel).read_text(encoding="utf-8").count("[[[cog") >= n, rel


def test_a_stale_block_is_caught():
    text = README.read_text(encoding="utf-8")
    stale = text.replace("`pytest`, `hypothesis`", "`pytest`")
    assert stale != text and "hypothesis" in drift(stale)
    text = COMMANDS.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| [`recall QUERY"))
    stale = text.replace(row, row.replace("[--deep] ", ""))
    assert stale != text and "--deep" in drift(stale, "docs/guide/commands.md")
    stale = text.replace("heartbeat: all clear", "heartbeat: all good")
    assert stale != text and "all clear" in drift(stale, "docs/guide/commands.md")
    cli = (ROOT_DIR / "docs" / "cli.md").read_text(encoding="utf-8")
    stale = cli.replace("Only hits reaching the threshold, never weak", "Only hits")
    assert stale != cli and "never weak" in drift(stale, "docs/cli.md")
    config = (ROOT_DIR / "docs" / "configuration.md").read_text(encoding="utf-8")
    stale = config.replace("| `index.max_lines` | `40` |", "| `index.max_lines` | `30` |")
    assert stale != config and "`40`" in drift(stale, "docs/configuration.md")


def test_every_command_has_a_row_and_a_help():
    rows = command_table().splitlines()[2:]
    assert len(rows) == len(command_names())
    assert {"recall", "scope set", "inbox", "inbox accept", "merge detail", "hook claude-code"} <= command_names()
    for row in rows:
        usage, what, example = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:4]]
        assert usage.startswith("`") and what and "memcli" in example, row
    commands = COMMANDS.read_text(encoding="utf-8")
    cli = (ROOT_DIR / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in command_names():
        assert f"(../cli.md#memcli-{name.replace(' ', '-')})" in commands, name
        assert f"\n## memcli {name}\n" in cli and f"$ memcli {name} --help\n" in cli, name


def test_no_hit_line_is_written_by_hand():
    """A recall's hit line (`<!-- memory/x.md · layer · words: … · strong 0.76 -->`) changes with
    the ranking: every one in the docs comes out of a real run."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        outside = re.sub(r"\[\[\[cog.*?\[\[\[end\]\]\]", "", text, flags=re.S)
        assert not re.search(r"<!-- memory/\S+\.md · ", outside), page


def test_contributing_says_what_each_test_dependency_is_for():
    from tests.docs_blocks import extra

    text = (ROOT_DIR / "CONTRIBUTING.md").read_text(encoding="utf-8")
    part = text.split("The `test` extra holds", 1)[1].split("\n\n", 1)[0]
    for requirement in extra("test"):
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]
        words = {"mcp": "MCP SDK"}.get(name, name)
        assert words in part, f"CONTRIBUTING.md does not say what the test extra's {name} is for"


def notes() -> list[str]:
    text = COMMANDS.read_text(encoding="utf-8")
    part = re.split(r"More on some of the\s+commands:\n", text, maxsplit=1)[1].strip("\n").split("\n\n", 1)[0]
    return [item.replace("\n", " ") for item in re.split(r"\n(?=- )", part)]


@pytest.mark.parametrize("note", notes(), ids=lambda n: n[2:40])
def test_the_notes_name_commands_and_options_that_exist(note):
    """Each note starts with a command; every option in it (`--x`, or inside a code span that
    starts with another command) is that command's."""
    names = command_names()
    spans = re.findall(r"`([^`]+)`", note)

    def command_of(span):
        words = span.split()
        for n in (2, 1):
            if " ".join(words[:n]) in names:
                return " ".join(words[:n])
        return None

    subject = command_of(spans[0])
    assert subject, f"the note does not start with a command: {note[:80]}"
    for span in spans:
        owner = command_of(span) or subject
        for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", span):
            assert option in options_of(owner) | {"--json", "--help"}, (option, owner, note[:80])
