import pytest

from memcli.config import find_root, parse_duration
from memcli.settings_guard import load_config
from memcli.errors import ConfigError, NotARootError


def test_defaults_without_a_file(tmp_path):
    c = load_config(tmp_path)
    assert c["index.max_lines"] == 40 and c["index.on_full"] == "demote"
    assert c.seconds("lock_timeout") == 10 and c.seconds("heartbeat.stale_after") == 90 * 86400


def test_nested_and_dotted_keys(tmp_path):
    (tmp_path / "memcli.yaml").write_text("index:\n  max_lines: 20\nwrite.secrets: redact\nlock_timeout: 2s\n")
    c = load_config(tmp_path)
    assert c["index.max_lines"] == 20 and c["write.secrets"] == "redact" and c.seconds("lock_timeout") == 2


@pytest.mark.parametrize(
    "text, words",
    [
        ("index:\n  max_lines: [\n", "line"),
        ("index:\n  max_line: 30\n", "index.max_line"),
        ("index:\n  max_lines: many\n", "index.max_lines"),
        ("index:\n  on_full: explode\n", "index.on_full"),
        ("lock_timeout: soon\n", "lock_timeout"),
        ("recall:\n  threshold: 7\n", "recall.threshold"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_config_names_the_key_or_line(tmp_path, text, words):
    (tmp_path / "memcli.yaml").write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path)
    assert words in str(e.value)
    assert e.value.exit_code == 3


def test_template_parses_to_defaults():
    from memcli.store.templates import template_text
    from memcli.config import SCHEMA

    text = template_text("memcli.yaml")
    for key in SCHEMA:
        assert key.split(".")[-1] in text, key


def test_root_resolution_order(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "MEMORY.md").write_text("# M\n")
    nested = a / "x" / "y"
    nested.mkdir(parents=True)
    assert find_root(cwd=nested) == a.resolve()
    monkeypatch.setenv("MEMCLI_ROOT", str(b))
    assert find_root(cwd=nested) == b.resolve()
    assert find_root(str(a), cwd=nested) == a.resolve()
    monkeypatch.setenv("MEMCLI_ROOT", "")
    assert find_root(cwd=nested) == a.resolve()
    with pytest.raises(NotARootError, match="memcli init"):
        find_root(cwd=tmp_path)


def test_durations():
    assert parse_duration("90d") == 90 * 86400 and parse_duration("1.5h") == 5400 and parse_duration(3) == 3
    with pytest.raises(ConfigError):
        parse_duration("ten")
