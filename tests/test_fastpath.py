"""The per-turn fast path is declared once: memcli.cli.argv's table is what the Typer app declares
(names, options, kinds, defaults, required marks), for the global options, the hot commands and
the agent hook; the actions the fast path calls take the Typer parameters."""

import inspect

import pytest

from memcli.cli import argv
from memcli.cli.app import command
from memcli.cli.boundary import HOT

KINDS = {"STRING": str, "TEXT": str, "INTEGER": int, "FLOAT": float}


def typer_command(words):
    cmd = command()
    for w in words:
        cmd = cmd.commands[w]
    return cmd


def options_of(params) -> dict:
    options = {}
    for p in params:
        if p.param_type_name != "option" or p.name == "help":
            continue
        kind = bool if p.is_flag else list if p.multiple else KINDS[p.type.name.upper()]
        default = None if p.multiple and not p.default else p.default
        assert not p.secondary_opts, f"{p.name}: a --x/--no-x option is not in the table's kinds"
        for opt in p.opts:
            options[opt] = (p.name + ("!" if p.required else ""), kind, default)
    return options


def derived(words):
    """(arguments, options) of the Typer command, in the table's terms."""
    cmd = typer_command(words)
    names = tuple(p.name + ("" if p.required else "?") for p in cmd.params if p.param_type_name == "argument")
    return names, options_of(cmd.params)


# Typer's own, for installing shell completion: the parser does not know them, so a line holding
# one goes to Typer.
COMPLETION = ("--install-completion", "--show-completion")


def test_the_global_options_are_the_apps():
    declared = options_of(command().params)
    assert argv.GLOBAL == {k: v for k, v in declared.items() if k not in COMPLETION}
    assert argv.HELP == tuple(sorted(command().get_help_option_names(command().make_context("memcli", ["x"])), key=len))


@pytest.mark.parametrize("words", list(argv.COMMANDS))
def test_the_table_is_the_typer_declaration(words):
    assert argv.COMMANDS[words] == derived(words)


@pytest.mark.parametrize("words", [w for w in argv.COMMANDS if w[0] != "hook"])
def test_every_default_is_the_librarys(words):
    """Every default is "not given": the library decides (memcli.model.DEFAULT_TYPE etc.)."""
    assert all(default in (None, False) for _, _, default in argv.COMMANDS[words][1].values())


@pytest.mark.parametrize("words", [w for w in argv.COMMANDS if w[0] != "hook"])
def test_fast_actions_take_the_typer_parameters(words):
    """Each parameter by name, or (an action that builds a request) the ones it reads itself by name
    and the rest as ``**options`` for its request (tests/test_requests.py finds each in it)."""
    names, options = argv.COMMANDS[words]
    params = list(inspect.signature(HOT[" ".join(words)]).parameters.values())[1:]
    expected = [n.rstrip("?") for n in names] + list(dict.fromkeys(p.rstrip("!") for p, _, _ in options.values()))
    expected = [p for p in expected if p != "json_"]
    if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        named = [p.name for p in params[:-1]]
        assert named == [p for p in expected if p in named] and set(named) < set(expected)
    else:
        assert [p.name for p in params] == expected


def test_every_hot_command_and_the_hook_have_an_entry():
    assert {" ".join(w) for w in argv.COMMANDS} == set(HOT) | {"hook claude-code"}
