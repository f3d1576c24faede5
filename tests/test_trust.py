"""Settings that run commands: never from a committed memcli.yaml without a local trust step."""

import pytest

from memcli.config import user_config_path
from memcli.paths import LOCAL_CONFIG
from memcli.tighten import effective_summarizer, is_trusted, load_config, trust
from memcli.errors import ConfigError


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "r"
    (r / ".memcli").mkdir(parents=True)
    (r / "MEMORY.md").write_text("# MEMORY\n", encoding="utf-8")
    return r


def committed(root, command="echo from-yaml", extra=""):
    (root / "memcli.yaml").write_text(f'session:\n  summarizer: "{command}"\n{extra}', encoding="utf-8")


def test_an_untrusted_summarizer_is_ignored_with_a_warning(root):
    committed(root)
    cfg = load_config(root)
    assert cfg["session.summarizer"] is None
    assert len(cfg.warnings) == 1 and "memcli trust" in cfg.warnings[0]


def test_trust_records_the_file_and_a_change_needs_trusting_again(root):
    committed(root)
    assert not is_trusted(root)
    res = trust(root)
    assert res["commands"] == {"session.summarizer": "echo from-yaml"}
    assert is_trusted(root)
    cfg = load_config(root)
    assert cfg["session.summarizer"] == "echo from-yaml" and cfg.warnings == ()
    committed(root, "echo changed")
    assert not is_trusted(root)
    assert load_config(root)["session.summarizer"] is None


def test_other_keys_need_no_trust(root):
    committed(root, extra="index:\n  max_lines: 20\n")
    assert load_config(root)["index.max_lines"] == 20


def test_local_configuration_wins_and_needs_no_trust(root, monkeypatch):
    committed(root)
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text('session:\n  summarizer: "echo user"\nindex:\n  max_lines: 30\n', encoding="utf-8")
    cfg = load_config(root)
    assert cfg["session.summarizer"] == "echo user" and cfg["index.max_lines"] == 30 and cfg.warnings == ()
    (root / LOCAL_CONFIG).write_text('session:\n  summarizer: "echo local"\n', encoding="utf-8")
    assert load_config(root)["session.summarizer"] == "echo local"
    monkeypatch.setenv("MEMCLI_SUMMARIZER", "echo env")
    assert load_config(root)["session.summarizer"] == "echo env"


def test_xdg_config_home_is_the_user_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_config_path() == tmp_path / "xdg" / "memcli" / "config.yaml"


def test_a_broken_local_file_is_an_error_naming_it(root):
    (root / LOCAL_CONFIG).write_text("session:\n  summarizr: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.memcli/config\.yaml: unknown key 'session\.summarizr'"):
        load_config(root)


def test_effective_summarizer_rule(root, monkeypatch):
    assert effective_summarizer(root, None, None) == (None, None)
    cmd, warning = effective_summarizer(root, "echo c", None)
    assert cmd is None and "not run" in warning
    assert effective_summarizer(root, "echo c", "echo l") == ("echo l", None)
    monkeypatch.setenv("MEMCLI_SUMMARIZER", "echo e")
    assert effective_summarizer(root, "echo c", "echo l") == ("echo e", None)


def test_trust_without_a_file_is_an_error(root):
    with pytest.raises(ConfigError, match="no such file"):
        trust(root)
