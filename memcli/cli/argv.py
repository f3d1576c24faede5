"""The one argv parser of the commands answered without Typer, over one table.

An agent runs `recall`, `should-recall`, `session add`, `scope set`, `remember`, `context` and
the `hook claude-code` hook every turn, so ``main`` answers them without loading the framework; this
module reads their words. The table below is what the Typer app declares for those commands
(tests/test_argv.py derives it from the app and compares, and checks this parser against Click's
on every form of argument), and the parser reads argv as Click does:

- the global options (``--root``, ``--json``, ``--session``, ``--scope``, ``--version``) before
  the command, each value as ``--root X`` or ``--root=X``;
- a command's options anywhere among its arguments: ``--limit 3``, ``--limit=3``, ``-k 3``,
  ``-k3``; a value is the next word even when it starts with ``-`` (``--body -`` reads stdin);
  a flag given a value (``--deep=1``) is an error;
- ``--`` ends the options (the words after it are arguments); ``-`` is an argument;
- ``-h`` / ``--help`` anywhere before ``--`` asks for the help, which Typer prints.

It imports nothing: the per-turn commands pay for none of it.
"""

from __future__ import annotations

# {option: (parameter, kind, default)}; kind: str, int, float, bool (a flag), list (repeatable
# text). A "!" after a parameter marks a required option.
Options = dict

# The options before the command (the Typer app's callback).
GLOBAL: Options = {
    "--root": ("root", str, None),
    "--json": ("json_", bool, False),
    "--session": ("session", str, None),
    "--scope": ("scope", str, None),
    "--version": ("version", bool, False),
}

_JSON = {"--json": ("json_", bool, False)}

# command words -> (arguments in order, "?" after an optional one; options)
COMMANDS: dict[tuple, tuple[tuple, Options]] = {
    ("recall",): (
        ("query",),
        {
            "--limit": ("limit", int, None),
            "-k": ("limit", int, None),
            "--deep": ("deep", bool, False),
            "--layer": ("layer", str, None),
            "-l": ("layer", str, None),
            "--threshold": ("threshold", float, None),
            "--inbox": ("inbox", bool, False),
            "--type": ("type_", str, None),
            "--min-success": ("min_success", float, None),
            "--also": ("also", list, None),
            "--strict": ("strict", bool, False),
            **_JSON,
        },
    ),
    ("should-recall",): (("text",), {**_JSON}),
    ("remember",): (
        ("title", "summary?"),
        {
            "--tag": ("tag", list, None),
            "-t": ("tag", list, None),
            "--alias": ("alias", list, None),
            "-a": ("alias", list, None),
            "--body": ("body", str, None),
            "-b": ("body", str, None),
            "--body-file": ("body_file", str, None),
            "-f": ("body_file", str, None),
            "--type": ("type_", str, None),
            "--importance": ("importance", float, None),
            "-i": ("importance", float, None),
            "--pin": ("pin", bool, False),
            "--expires": ("expires", str, None),
            "--id": ("id_", str, None),
            "--source": ("source", str, None),
            **_JSON,
        },
    ),
    ("scope", "set"): (
        ("key", "value"),
        {"--agent": ("agent!", str, None), "--force": ("force", bool, False), **_JSON},
    ),
    ("session", "add"): (("role", "text"), {**_JSON}),
    ("context",): (("query?",), {"--budget": ("budget", int, None), "-b": ("budget", int, None), **_JSON}),
    ("hook", "claude-code"): (
        (),
        {"--budget": ("budget", int, None), "-b": ("budget", int, None), "--root": ("root", str, None), **_JSON},
    ),
}

HELP = ("-h", "--help")
_KIND_NAMES = {int: "integer", float: "float"}


class Line:
    """One command line as the parser read it.

    ``globals`` and ``values``: the global options and the command's parameters given (by
    parameter name; what is not given is not there); ``words``: the command's words when the
    table has it (else None, ``at`` being where the command starts); ``help``: -h or --help was
    given; ``error``: why Click would refuse the line (its message), else None."""

    __slots__ = ("globals", "words", "at", "values", "help", "error")

    def __init__(self):
        self.globals: dict = {}
        self.words: tuple | None = None
        self.at = 0
        self.values: dict = {}
        self.help = False
        self.error: str | None = None

    def value(self, name: str):
        """A global option's value, or its default."""
        for param, _, default in GLOBAL.values():
            if param == name:
                return self.globals.get(name, default)
        raise KeyError(name)

    def __repr__(self) -> str:
        return (
            f"Line(globals={self.globals}, words={self.words}, values={self.values}, help={self.help}, "
            f"error={self.error!r})"
        )


def parse(args: list, commands: dict | None = None) -> Line:
    """Read argv (without the program's name). The line is runnable without the framework when
    ``words`` is set and neither ``help`` nor ``error``."""
    commands = COMMANDS if commands is None else commands
    line = Line()
    i = _globals(args, line)
    line.at = i
    if line.error is not None or line.help or line.globals.get("version"):
        return line  # Click prints the version or the help before it reads the command
    for words, (names, options) in commands.items():
        if tuple(args[i : i + len(words)]) == words:
            line.words = words
            line.error = _command(args[i + len(words) :], names, options, line)
            return line
    return line


def _globals(args: list, line: Line) -> int:
    """The global options: read up to the first word that is not one (the command)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-":
            return i
        if a in HELP:
            line.help = True
            i += 1
            continue
        i, line.error = _option(args, i, GLOBAL, line.globals)
        if line.error is not None:
            return i
    return i


def _command(rest: list, names: tuple, options: Options, line: Line) -> str | None:
    positional: list = []
    j = 0
    while j < len(rest):
        a = rest[j]
        if a == "--":
            positional += rest[j + 1 :]
            break
        if not a.startswith("-") or a == "-":
            positional.append(a)
            j += 1
            continue
        if a in HELP:
            line.help = True
            j += 1
            continue
        j, error = _option(rest, j, options, line.values)
        if error is not None:
            return error
    if line.help:  # Click prints the help before it converts and checks the values
        return None
    for value in line.values.values():
        if isinstance(value, _Bad):
            return value.message
    return _arguments(positional, names, options, line.values)


def _option(args: list, i: int, options: Options, values: dict) -> tuple[int, str | None]:
    """Read the option (or the cluster of short ones) at args[i]: (the next index, an error)."""
    a = args[i]
    if a.startswith("--"):
        name, eq, inline = a.partition("=")
        if name not in options:
            return i, f"No such option '{name}'."
        param, kind, _ = options[name]
        if kind is bool:
            if eq:
                return i, f"Option '{name}' does not take a value."
            values[param.rstrip("!")] = True
            return i + 1, None
        if eq:
            return i + 1, _store(values, options, name, inline)
        if i + 1 >= len(args):
            return i, f"Option '{name}' requires an argument."
        return i + 2, _store(values, options, name, args[i + 1])
    for n in range(1, len(a)):  # -k3, -tfoo, -k 3
        name = "-" + a[n]
        if name not in options:
            return i, f"No such option '{name}'."
        if options[name][1] is bool:
            values[options[name][0].rstrip("!")] = True
            continue
        if n + 1 < len(a):
            return i + 1, _store(values, options, name, a[n + 1 :])
        if i + 1 >= len(args):
            return i, f"Option '{name}' requires an argument."
        return i + 2, _store(values, options, name, args[i + 1])
    return i + 1, None


def _store(values: dict, options: Options, name: str, raw: str) -> str | None:
    param, kind, _ = options[name]
    param = param.rstrip("!")
    if kind is list:
        values.setdefault(param, []).append(raw)
        return None
    if kind in (int, float):
        try:
            values[param] = kind(raw)
        except ValueError:  # said once the line is read, as Click does (-h still wins)
            flags = " / ".join(f"'{o}'" for o, spec in options.items() if spec[0].rstrip("!") == param)
            values[param] = _Bad(f"Invalid value for {flags}: {raw!r} is not a valid {_KIND_NAMES[kind]}.")
        return None
    values[param] = raw
    return None


class _Bad:
    """A value that is not of its option's kind: the error, said after the whole line is read."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _arguments(positional: list, names: tuple, options: Options, values: dict) -> str | None:
    """Give the arguments their values; what is missing is said before what is left over (Click's order)."""
    required = [n for n in names if not n.endswith("?")]
    if len(positional) < len(required):
        return f"Missing argument '{required[len(positional)].upper()}'."
    for name, (param, _, _) in options.items():
        if param.endswith("!") and param[:-1] not in values and name.startswith("--"):
            return f"Missing option '{name}'."
    if len(positional) > len(names):
        extra = positional[len(names) :]
        return f"Got unexpected extra argument{'s' if len(extra) > 1 else ''} ({' '.join(extra)})"
    values.update((n.rstrip("?"), v) for n, v in zip(names, positional))
    return None
