"""Settings that run commands: never from a committed memcli.yaml without a local trust step."""

import json

import pytest

from memcli.config import user_config_path
from memcli.paths import LOCAL_CONFIG
from memcli.settings_guard import is_trusted, load_config, trust, trusted_setting
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


def test_the_summarizer_rule(root, monkeypatch):
    def summarizer(committed, local):
        return trusted_setting(root, "session.summarizer", committed, None, local)

    assert summarizer(None, None) == (None, None)
    cmd, warning = summarizer("echo c", None)
    assert cmd is None and "not run" in warning
    assert summarizer("echo c", "echo l") == ("echo l", None)
    monkeypatch.setenv("MEMCLI_SUMMARIZER", "echo e")
    assert summarizer("echo c", "echo l") == ("echo e", None)


def test_trust_without_a_file_is_an_error(root):
    with pytest.raises(ConfigError, match="no such file"):
        trust(root)


# ---------------------------------------------------------------- what was trusted is what runs (issue 31)


def _mc(root, *args):
    from conftest import invoke

    res = invoke(["--root", root, *args])
    assert res.exit_code == 0, (args, res.output)
    return res


def _push(clone, message):
    from conftest import git

    git(clone, "add", "-A")
    git(clone, "commit", "-qm", message)
    git(clone, "push", "-q", "origin", "HEAD")


def _script(marks, name):
    return f"touch {marks}/{name}; cat >/dev/null; echo summary\n"


def _module(marks, name):
    return f"import pathlib, sys\npathlib.Path({str(marks / name)!r}).touch()\nsys.stdin.read()\nprint('summary')\n"


def _link(path, target):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# name: (summarizer, the files at trust time, the change a pull brings, the file the warning names)
BYPASSES = {
    "operator": (
        "sh tools/sum.sh|cat",
        lambda evil, marks, out: _write(evil / "tools/sum.sh", _script(marks, "reviewed")),
        lambda evil, marks, out: _write(evil / "tools/sum.sh", _script(marks, "PWNED")),
        "tools/sum.sh",
    ),
    "symlink": (
        "sh tools/sum.sh",
        lambda evil, marks, out: _link(evil / "tools/sum.sh", out / "a.sh"),
        lambda evil, marks, out: _link(evil / "tools/sum.sh", out / "b.sh"),
        "tools/sum.sh",
    ),
    "absent": (
        "sh summarize.sh",
        lambda evil, marks, out: None,
        lambda evil, marks, out: _write(evil / "summarize.sh", _script(marks, "PWNED")),
        "summarize.sh",
    ),
    "module": (
        "python3 -m pkg.summ",
        lambda evil, marks, out: (
            _write(evil / "pkg/__init__.py", ""),
            _write(evil / "pkg/summ.py", _module(marks, "reviewed")),
        ),
        lambda evil, marks, out: _write(evil / "pkg/summ.py", _module(marks, "PWNED")),
        "pkg/summ.py",
    ),
    "shadowed-module": (
        "python3 -m pkg.summ",
        lambda evil, marks, out: (
            _write(evil / "pkg/__init__.py", ""),
            _write(evil / "pkg/summ.py", "import json\n" + _module(marks, "reviewed")),
        ),
        lambda evil, marks, out: _write(evil / "json.py", _module(marks, "PWNED")),
        "json.py",
    ),
    "shadowed-script": (
        "python3 tools/summ.py",
        lambda evil, marks, out: _write(evil / "tools/summ.py", "import json\n" + _module(marks, "reviewed")),
        lambda evil, marks, out: _write(evil / "tools/json.py", _module(marks, "PWNED")),
        "tools/json.py",
    ),
}


@pytest.mark.usefixtures("git_env")
@pytest.mark.parametrize("case", BYPASSES)
def test_31_a_trusted_command_never_runs_what_a_pull_changed(tmp_path, case):
    """`memcli trust`, then a pull that changes what the command runs (a file behind a shell
    operator, a symlink retargeted, a file absent at trust time added, a `-m` module rewritten, a
    standard module's name added where Python imports from first),
    then three turns that fold: the changed code does not run, and one warning says why."""
    from conftest import git, run_memcli, shared_origin

    command, before, change, named = BYPASSES[case]
    marks, out = tmp_path / "marks", tmp_path / "outside"
    marks.mkdir()
    _write(out / "a.sh", _script(marks, "reviewed"))
    _write(out / "b.sh", _script(marks, "PWNED"))
    clone = shared_origin(tmp_path, _mc)
    victim, evil = clone("victim"), clone("evil")
    before(evil, marks, out)
    (evil / "memcli.yaml").write_text(f'session:\n  summarizer: "{command}"\n  max_rounds: 1\n')
    _push(evil, "a summarizer")
    git(victim, "pull", "-q", "--ff-only")

    def turns(session):
        for i in range(3):
            r = run_memcli("--root", victim, "--session", session, "session", "add", "user", f"turn {i} on deploys")
            assert r.returncode == 0, r.stderr
        return r

    assert run_memcli("--root", victim, "trust").returncode == 0
    r = turns("a")
    assert (marks / "reviewed").exists() == (case != "absent")  # trusted as reviewed: it runs
    assert "changed since" not in r.stderr, r.stderr

    change(evil, marks, out)
    _push(evil, "tweak")
    git(victim, "pull", "-q", "--ff-only")
    r = turns("b")
    assert not (marks / "PWNED").exists()
    warned = [ln for ln in r.stderr.splitlines() if "summarizer" in ln]
    assert len(warned) == 1 and f"runs {named}, which changed since `memcli trust`" in warned[0], r.stderr
    assert run_memcli("--root", victim, "trust").returncode == 0  # reviewed again: it runs
    turns("c")
    assert (marks / "PWNED").exists()


@pytest.mark.parametrize(
    "command, said",
    [
        ("sh tools/$TOOL.sh", "'$'"),
        ("sh tools/sum.sh $(cat list)", "'$'"),
        ("sh `cat list`", "'`'"),
        ("eval sh tools/sum.sh", "'eval'"),
        ("sh -c 'sh tools/sum.sh'", "'sh -c'"),
        ("bash -lc 'sh tools/sum.sh'", "'bash -lc'"),
        ("python3 -c 'import tools'", "'python -c'"),
        ("node --eval 'require(\"./tools/x\")'", "'node --eval'"),
        ("env -S 'sh tools/sum.sh'", "'env -S'"),
        ("env --split-string='sh tools/sum.sh'", "'env --split-string'"),
        ("sh tools/*.sh", "'*'"),
        ("cd tools && sh sum.sh", "'cd'"),
        ("PYTHONPATH=lib python3 -m summ", "'PYTHONPATH=lib'"),
        ("sh <<EOF", "'<<'"),
        ("sh <(cat tools/sum.sh)", "'<('"),
        ("python3 -m 'pkg.2x'", "'-m pkg.2x'"),
        ("sh tools", "'tools'"),
        ("python3 tools/", "'tools/'"),
    ],
)
def test_31_a_command_line_that_cannot_be_analysed_is_not_trusted(root, command, said):
    (root / "tools").mkdir()
    committed(root, command.replace('"', '\\"'))
    with pytest.raises(ConfigError, match="cannot be trusted") as e:
        trust(root)
    assert said in e.value.message and "your own" in e.value.message
    assert not is_trusted(root)


def test_31_a_record_that_does_not_cover_the_command_runs_nothing(root, tmp_path):
    """A record an older version wrote (no entry for a word of the command), or one for a line
    that cannot be analysed, runs nothing; the user's own configuration still may."""
    from memcli import trust as records

    committed(root, "sh summarize.sh")
    trust(root)
    data = json.loads(records._trust_file(root).read_text())
    records.record_trust(root, data["sha256"], data["trusted"], {})  # as older versions recorded it
    cfg = load_config(root)
    assert cfg["session.summarizer"] is None and "(not recorded then): not run" in cfg.warnings[0]
    committed(root, "sh -c 'sh summarize.sh'")
    digest = records.digest(root / "memcli.yaml")
    records.record_trust(root, digest, data["trusted"], {})
    cfg = load_config(root)
    assert cfg["session.summarizer"] is None and "is not run" in cfg.warnings[0] and "'sh -c'" in cfg.warnings[0]
    (root / LOCAL_CONFIG).write_text("session:\n  summarizer: \"sh -c 'cat'\"\n", encoding="utf-8")
    assert load_config(root)["session.summarizer"] == "sh -c 'cat'"  # the user's own: not analysed


def test_31_the_extractor_is_decided_by_the_same_rule(root):
    (root / "memcli.yaml").write_text('reflect:\n  extractor: "python3 tools/x.py|cat"\n', encoding="utf-8")
    (root / "tools").mkdir()
    (root / "tools/x.py").write_text("print('{}')\n")
    trust(root)
    assert load_config(root)["reflect.extractor"] == "python3 tools/x.py|cat"
    (root / "tools/x.py").write_text("print('changed')\n")
    cfg = load_config(root)
    assert cfg["reflect.extractor"] is None and "reflect.extractor runs tools/x.py" in cfg.warnings[0]
