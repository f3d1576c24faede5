"""Shell completion for bash and zsh, driven the way the shells drive it: the completion
variable and the words in the environment of a real `memcli` process."""

import pytest

from memcli.recall.registry import layer_names
from tests.conftest import run_memcli


def bash(root, line: str) -> list:
    """The candidates bash gets for the last (maybe empty) word of `line`."""
    words = line.split(" ")
    env = {
        "_MEMCLI_COMPLETE": "complete_bash",
        "COMP_WORDS": line,
        "COMP_CWORD": str(len(words) - 1),
        "MEMCLI_ROOT": str(root),
    }
    r = run_memcli(env=env)
    assert r.returncode == 0, r.stderr
    return [x for x in r.stdout.splitlines() if x]


def zsh(root, line: str) -> str:
    r = run_memcli(env={"_MEMCLI_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": line, "MEMCLI_ROOT": str(root)})
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_commands_and_subcommands(example_root):
    found = bash(example_root, "memcli re")
    assert {"remember", "recall"} <= set(found) and all(x.startswith("re") for x in found)
    assert set(bash(example_root, "memcli scope ")) >= {"start", "set", "get", "read", "show", "check", "end"}
    assert bash(example_root, "memcli index r") == ["rebuild"]


def test_options(example_root):
    opts = bash(example_root, "memcli recall --")
    assert {"--limit", "--deep", "--layer", "--threshold", "--json"} <= set(opts)
    assert "--root" in bash(example_root, "memcli --r")


def test_memory_ids(example_root):
    assert bash(example_root, "memcli show my") == ["mysql-charset"]
    assert "staging-deploy" in bash(example_root, "memcli forget ")
    assert bash(example_root, "memcli update never") == ["never-force-push-main"]
    assert bash(example_root, "memcli edit 日志") == ["日志统一用-utc-时间"]


def test_ids_of_the_root_given_on_the_line(example_root, tmp_path):
    other = tmp_path / "elsewhere"
    assert bash(other, f"memcli --root {example_root} show st") == ["staging-deploy"]
    assert bash(other, "memcli show st") == []  # no root: nothing, and no error


def test_tags(example_root):
    assert bash(example_root, "memcli list --tag my") == ["mysql"]
    assert {"postgres", "performance", "preference", "python"} <= set(bash(example_root, "memcli remember t -t p"))
    assert "git" in bash(example_root, "memcli update mysql-charset --untag g")


def test_layers_come_from_the_registry(example_root):
    assert bash(example_root, "memcli recall q --layer ") == list(layer_names())
    assert bash(example_root, "memcli recall q -l d") == ["details"]


def test_zsh(example_root):
    out = zsh(example_root, "memcli forget never")
    assert out.startswith("_arguments") and '"never-force-push-main"' in out
    out = zsh(example_root, "memcli recall q --layer ")
    assert all(f'"{n}"' in out for n in layer_names())
    assert '"remember"' in zsh(example_root, "memcli rem")


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_show_completion_prints_the_script(shell):
    r = run_memcli("--show-completion", shell, env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert r.returncode == 0 and "_MEMCLI_COMPLETE" in r.stdout and f"complete_{shell}" in r.stdout


def test_install_completion_is_offered():
    assert "--install-completion" in run_memcli("--help").stdout
