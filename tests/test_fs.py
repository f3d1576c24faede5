import os
import re
import threading

import pytest

from memcli.errors import LockTimeout, UnsafePathError
from memcli.store.fs import TMP_PREFIX, atomic_write, check_id, root_lock, safe_join
from memcli.store.layout import slugify


@pytest.mark.parametrize(
    "bad", ["../../x", "/etc/passwd", "a/b", "a\\b", ".hidden", "..", "x\x00y", "c:evil", "x" * 81, "a\nb"]
)
def test_unsafe_ids_refused(bad):
    with pytest.raises(UnsafePathError):
        check_id(bad)


@pytest.mark.parametrize("good", ["mysql-charset", "数据库-迁移", "v1.2-notes", "a_b"])
def test_safe_ids_accepted(good):
    assert check_id(good) == good


def test_slugs():
    assert slugify("MySQL charset double encoding") == "mysql-charset-double-encoding"
    assert slugify("Token 爆炸：滑动窗口") == "token-爆炸-滑动窗口"
    assert re.fullmatch(r"memory-[0-9a-f]{8}", slugify("!!!"))
    assert slugify("!!!") != slugify("???")
    long = slugify("word " * 60)
    assert len(long) <= 80 and not long.endswith("-")
    for title in ["../../etc/passwd", ".hidden", "a/b\\c", "x\x00y"]:
        check_id(slugify(title))


def test_safe_join_refuses_symlink_escape(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "memory").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        safe_join(root, "memory", "x.md")


def test_atomic_write_leaves_no_temp_and_keeps_mode(tmp_path):
    p = tmp_path / "f.md"
    atomic_write(p, "one\n")
    os.chmod(p, 0o640)
    atomic_write(p, "two\n")
    assert p.read_text() == "two\n" and (p.stat().st_mode & 0o777) == 0o640
    assert not [n for n in os.listdir(tmp_path) if n.startswith(TMP_PREFIX)]


def test_a_cache_file_is_written_whole_without_fsync(tmp_path, monkeypatch):
    """durable=False (a cache's file): renamed into place whole, never fsynced; the default syncs."""
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    p = tmp_path / "cache.json"
    atomic_write(p, "old")
    assert len(synced) == 1
    os.chmod(p, 0o640)
    atomic_write(p, "new", durable=False)
    assert len(synced) == 1 and p.read_text() == "new" and (p.stat().st_mode & 0o777) == 0o640
    assert not [n for n in os.listdir(tmp_path) if n.startswith(TMP_PREFIX)]


def test_lock_times_out(tmp_path):
    held, release = threading.Event(), threading.Event()

    def holder():
        with root_lock(tmp_path, 5):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        with pytest.raises(LockTimeout) as e:
            with root_lock(tmp_path, 0.2):
                pass
        assert e.value.exit_code == 3
    finally:
        release.set()
        t.join()
    with root_lock(tmp_path, 0.2):
        pass
