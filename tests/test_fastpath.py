"""The per-turn fast path is declared once: its table is what the Typer app declares."""

import inspect

import pytest
import typer

from memcli.cli import _FAST
from memcli.cli.app import app
from memcli.cli.boundary import HOT

KINDS = {"STRING": str, "TEXT": str, "INTEGER": int, "FLOAT": float}


def typer_command(words):
    cmd = typer.main.get_command(app)
    for w in words:
        cmd = cmd.commands[w]
    return cmd


def derived(words):
    """(positional names, {option: (parameter, kind)}) from the Typer command, with its defaults."""
    cmd = typer_command(words)
    names, options, defaults = [], {}, {}
    for p in cmd.params:
        if p.name in ("json_", "help"):
            continue
        if p.param_type_name == "argument":
            names.append(p.name + ("" if p.required else "?"))
            continue
        kind = bool if p.is_flag else list if p.multiple else KINDS[p.type.name.upper()]
        for opt in p.opts:
            options[opt] = (p.name + ("!" if p.required else ""), kind)
        defaults[p.name] = p.default
    return tuple(names), options, defaults


@pytest.mark.parametrize("words", list(_FAST))
def test_fast_table_is_the_typer_declaration(words):
    names, options, defaults = derived(words)
    assert _FAST[words] == (names, options)
    # every default is "not given": the library decides (memcli.model.DEFAULT_TYPE etc.)
    assert all(v in (None, False) for v in defaults.values()), defaults


@pytest.mark.parametrize("words", list(_FAST))
def test_fast_actions_take_the_typer_parameters(words):
    names, options, _ = derived(words)
    params = list(inspect.signature(HOT[" ".join(words)]).parameters)[1:]
    assert params == [n.rstrip("?") for n in names] + list(dict.fromkeys(p.rstrip("!") for p, _ in options.values()))


def test_every_hot_command_has_a_fast_entry():
    assert set(HOT) == {" ".join(w) for w in _FAST}


def test_hook_runner_takes_the_typer_options():
    """`memcli hook claude-code` runs without Typer (memcli.hooks.run): same options as the command."""
    from memcli.hooks import OPTIONS

    names, options, defaults = derived(("hook", "claude-code"))
    assert names == () and {opt: param for opt, (param, _) in options.items()} == OPTIONS
    assert all(v is None for v in defaults.values())
