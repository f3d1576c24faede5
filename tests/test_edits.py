"""Hand edits through drafts (edit_begin / edit_finish), the three-way merge, and restore."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli import Memory
from memcli.errors import ExistsError, FileError, Refused
from memcli.merge3 import merge
from tests.conftest import examples

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "中文\n", "\n"]), max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(lines, lines)
def test_merge_with_one_side_unchanged_is_the_other_side(base, other):
    b, o = "".join(base), "".join(other)
    assert merge(b, o, b) == o
    assert merge(b, b, o) == o
    assert merge(b, o, o) == o


@settings(max_examples=examples(200), deadline=None)
@given(lines, lines, lines)
def test_a_clean_merge_keeps_both_sides_changes(head, mid, tail):
    """Ours changes the head, theirs the tail, with a common middle: both changes are kept."""
    base = "".join(head) + "=sep1=\n" + "".join(mid) + "=sep2=\n" + "".join(tail)
    ours = "OURS\n" + base
    theirs = base + "THEIRS\n"
    assert merge(base, ours, theirs) == "OURS\n" + base + "THEIRS\n"


def test_overlapping_changes_conflict():
    assert merge("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n") is None
    assert merge("a\n", "a\nX\n", "a\nY\n") is None


@pytest.fixture
def mem(tmp_path):
    m = Memory.init(tmp_path / "r")
    m.remember("Deploy to staging", "make release", body="Line one.\n\nLine two.\n")
    return m


def test_edit_without_a_change_meanwhile_writes_the_draft(mem):
    s = mem.edit_begin("deploy-to-staging")
    assert s.draft.parent == mem.root / ".memcli" / "edits" and s.draft.read_text() == s.base
    res = mem.edit_finish(s, s.base.replace("make release", "make release && deploy"))
    assert res.action == "edited" and "make release && deploy" in res.line
    assert "make release && deploy" in (mem.root / "MEMORY.md").read_text()
    assert not s.draft.exists()


def test_edit_merges_a_change_made_meanwhile(mem):
    s = mem.edit_begin("deploy-to-staging")
    mem.update("deploy-to-staging", summary="make release, then deploy")
    res = mem.edit_finish(s, s.base.replace("Line one.", "Line one, edited."))
    text = mem.store.detail_path("deploy-to-staging").read_text()
    assert res.action == "merged"
    assert "Line one, edited." in text and "summary: make release, then deploy" in text
    assert "summary was: make release" in text  # the update's History entry survives


def test_overlapping_edit_keeps_the_draft_and_the_other_change(mem):
    s = mem.edit_begin("deploy-to-staging")
    mem.update("deploy-to-staging", summary="THEIRS")
    with pytest.raises(Refused) as e:
        mem.edit_finish(s, s.base.replace("summary: make release", "summary: OURS"))
    assert e.value.exit_code == 4 and str(s.draft.relative_to(mem.root)) in e.value.message
    assert "summary: OURS" in s.draft.read_text()
    assert "summary: THEIRS" in mem.store.detail_path("deploy-to-staging").read_text()


def test_a_broken_draft_never_replaces_the_file(mem):
    s = mem.edit_begin("deploy-to-staging")
    with pytest.raises(FileError) as e:
        mem.edit_finish(s, "---\ntitle: unclosed\n")
    assert e.value.exit_code == 3 and s.draft.exists()
    assert mem.get("deploy-to-staging").summary == "make release"


def test_a_broken_file_can_be_opened_repaired_and_forgotten(mem):
    path = mem.store.detail_path("deploy-to-staging")
    path.write_text("---\ntitle: broken\n")
    s = mem.edit_begin("deploy-to-staging")
    mem.edit_finish(s, "---\ntitle: Repaired\nsummary: ok\n---\nBody.\n")
    assert "Repaired" in (mem.root / "MEMORY.md").read_text()
    path.write_text("---\ntitle: broken\n")
    mem.forget("deploy-to-staging")
    assert not path.exists() and "deploy-to-staging" not in (mem.root / "MEMORY.md").read_text()


def test_restore_and_unexpiring_update_bring_archived_memories_back(mem):
    mem.remember("Old promo", "autumn code", expires="2020-01-01")
    mem.remember("Older promo", "spring code", expires="2020-01-01")
    mem.repair()
    assert mem.store.detail_path("old-promo", archived=True).is_file()
    res = mem.restore("old-promo")
    assert res.action == "restored" and res.indexed
    d = mem.get("old-promo")
    assert d.expires is None and d.path == "memory/old-promo.md" and "restored from the archive" in d.body
    assert not mem.store.detail_path("old-promo", archived=True).exists()
    mem.update("older-promo", summary="still archived")  # no new expiry: it stays archived
    assert mem.store.detail_path("older-promo", archived=True).is_file()
    mem.update("older-promo", expires="30d")
    assert mem.get("older-promo").path == "memory/older-promo.md"
    mem.update("older-promo", expires="2020-01-01")
    mem.repair()
    archived = mem.store.detail_path("older-promo", archived=True)
    mem.store.detail_path("older-promo").write_text(archived.read_text())  # a live copy, made by hand
    with pytest.raises(ExistsError):
        mem.restore("older-promo")


def test_remember_warns_when_the_expiry_has_passed(mem):
    res = mem.remember("Already over", "s", expires="2020-01-01")
    assert any("2020-01-01" in w and "passed" in w for w in res.warnings)
    assert not any("passed" in w for w in mem.remember("Not over", "s", expires="30d").warnings)
