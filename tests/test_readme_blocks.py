"""README.md cannot drift from the app: its generated blocks (the command table, --help excerpts,
outputs of real runs) are made again and must equal what README.md holds, and the notes beside the
table name only commands and options that exist. `python -m cogapp -r README.md` rewrites the
blocks."""

import difflib
import re

import pytest

from tests.conftest import ROOT_DIR
from tests.readme_blocks import command_names, command_table, options_of

README = ROOT_DIR / "README.md"
FIX = "README.md and the app disagree; run `python -m cogapp -r README.md` and commit the result"


def regenerate(text: str) -> str:
    from cogapp import Cog

    return Cog().process_string(text, fname="README.md")


def drift(text: str) -> str:
    """A unified diff of what regenerating the blocks changes ('' when nothing)."""
    return "".join(difflib.unified_diff(text.splitlines(True), regenerate(text).splitlines(True),
                                        "README.md", "README.md (regenerated)", n=1))


def test_the_generated_blocks_are_what_the_app_and_real_runs_give():
    text = README.read_text(encoding="utf-8")
    assert text.count("[[[cog") >= 4 and text.count("[[[end]]]") == text.count("[[[cog")
    diff = drift(text)
    assert not diff, f"{FIX}:\n{diff[:4000]}"


def test_a_stale_block_is_caught():
    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `recall QUERY"))
    stale = text.replace(row, row.replace("[--deep] ", ""))
    assert stale != text and "--deep" in drift(stale)
    stale = text.replace("heartbeat: all clear", "heartbeat: all good")
    assert stale != text and "all clear" in drift(stale)


def test_every_command_has_a_row():
    rows = command_table().splitlines()[2:]
    assert len(rows) == len(command_names())
    assert {"recall", "scope set", "inbox", "inbox accept", "merge detail", "hook claude-code"} <= command_names()
    for row in rows:
        usage, what, example = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:4]]
        assert usage.startswith("`") and what and "memcli" in example, row


def notes() -> list[str]:
    text = README.read_text(encoding="utf-8")
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
