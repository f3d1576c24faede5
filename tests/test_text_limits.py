"""Checks of text on its way into a memory, and the terminal-safe rendering of what is printed."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcli import render
from memcli.heartbeat import check_text
from memcli.errors import UsageError
from memcli.store import details, fs, layout
from memcli.model import INDEX_SUMMARY, index_summary
from memcli.safety.text_limits import (
    MAX_FILE,
    MAX_FRONTMATTER,
    check_rendered,
    check_sizes,
    check_text_field,
)

CONTROLS = ["\x00", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9b"]


def test_the_limits_are_the_readers_limits():
    assert MAX_FRONTMATTER == details.MAX_FRONTMATTER
    assert MAX_FILE == 10 * fs.MAX_FILE_BYTES


@pytest.mark.parametrize("ch", CONTROLS)
def test_control_characters_are_refused(ch):
    with pytest.raises(UsageError, match="control character"):
        check_text_field(f"a{ch}b", "title")
    with pytest.raises(UsageError, match="U\\+00"):
        check_text_field(f"key{ch}", "scope key", name=True)


def test_text_may_hold_tabs_and_line_breaks_a_name_may_not():
    assert check_text_field("line one\r\nline\ttwo\n", "body") == "line one\r\nline\ttwo\n"
    assert check_text_field(None, "summary") is None
    assert check_text_field("中文 title ‮ ok", "title") == "中文 title ‮ ok"
    for bad in ("a\tb", "a\nb", "a\r\nb"):
        with pytest.raises(UsageError):
            check_text_field(bad, "agent", name=True)
    with pytest.raises(UsageError, match="character 6"):
        check_text_field("lone \r return", "summary")


def test_sizes_within_the_limits_pass():
    check_sizes(
        {
            "title": "t" * 200,
            "summary": "s" * 2000,
            "tags": ["x" * 64] * 100,
            "aliases": ["a"] * 100,
            "source": "src",
            "extra": {"owner": "me"},
            "body": "b" * 1000,
        }
    )


@pytest.mark.parametrize(
    "fields,words",
    [
        ({"title": "t" * 201}, "title has 201"),
        ({"summary": " ".join(["word"] * 13_500)}, "summary has"),
        ({"tags": [f"t{i}" for i in range(10_000)]}, "10000 tags"),
        ({"tags": ["x" * 65]}, "tag 'xxx"),
        ({"aliases": ["a" * 201]}, "alias"),
        ({"extra": {"notes": "n" * 70_000}}, "frontmatter"),
        ({"body": "b" * MAX_FILE}, "body"),
    ],
)
def test_sizes_past_the_limits_are_refused(fields, words):
    with pytest.raises(UsageError, match=words):
        check_sizes(fields)


def test_a_rendered_file_the_reader_would_refuse_is_refused():
    check_rendered("---\ntitle: t\n---\nbody\n")
    with pytest.raises(UsageError, match="frontmatter"):
        check_rendered("---\nnotes: " + "n" * MAX_FRONTMATTER + "\n---\nbody\n")
    with pytest.raises(UsageError, match="MB"):
        check_rendered("---\ntitle: t\n---\n" + "b" * MAX_FILE)


def test_index_summary_cuts_on_a_word_boundary():
    short = "set utf8mb4 on the connection"
    assert index_summary(short) == short
    long = " ".join(f"word{i}" for i in range(100))
    cut = index_summary(long)
    assert len(cut) <= INDEX_SUMMARY and cut.endswith("…")
    assert long.startswith(cut[:-1]) and long[len(cut) - 1] == " "
    zh = "只保留最近五轮原文" * 40
    assert index_summary(zh) == zh[: INDEX_SUMMARY - 1] + "…"


@given(st.text(max_size=400))
def test_index_summary_is_short_and_a_prefix(text):
    cut = index_summary(text)
    assert len(cut) <= INDEX_SUMMARY
    assert cut == text or (cut.endswith("…") and text.startswith(cut[:-1]))


def test_heartbeat_names_the_line_and_column_of_control_characters():
    text = "---\ntitle: Evil \x1b]0;X\x07\n---\nok line\r\nbell \x07 here\n"

    def found(text):
        return [f for f in check_text("memory/evil.md", layout.OTHER, text) if f.code == "control-character"]

    assert [(f.line, f.severity) for f in found(text)] == [(2, "warning"), (5, "warning")]
    assert "U+001B" in found(text)[0].message and "column 13" in found(text)[0].message
    assert found(text)[0].fix
    assert found("plain\r\ntext\twith tabs\n") == []
    assert len(found("\x1b\n" * 100)) == 20


# ---- what is printed


@pytest.mark.parametrize("ch", CONTROLS)
def test_safe_escapes_control_characters(ch):
    shown = render.safe(f"a{ch}b")
    assert shown == f"a\\x{ord(ch):02x}b"


def test_safe_keeps_text_tabs_and_newlines():
    text = "标题 title\n\tindented — ok ‮"
    assert render.safe(text) == text
    assert render.safe("one\r\ntwo") == "one\ntwo"


def test_out_and_talk_escape(capsys):
    import sys

    o = render.Output(sys.stdout, sys.stderr)
    o.out("title \x1b]0;PWNED\x07")
    o.talk("key \x1b[2J")
    o.write("ctx \x9b2J")
    got = capsys.readouterr()
    assert "\x1b" not in got.out + got.err and "\x9b" not in got.out and "\x07" not in got.out
    assert got.out == "title \\x1b]0;PWNED\\x07\nctx \\x9b2J" and got.err == "key \\x1b[2J\n"


def test_the_envelope_escapes_every_control_character():
    text = render.envelope("show", True, {"title": "a\x1b\x07\x7f\x85\x9bz"})
    assert not [c for c in text if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F]
    assert json.loads(text)["data"]["title"] == "a\x1b\x07\x7f\x85\x9bz"
