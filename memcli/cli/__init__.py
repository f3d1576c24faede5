"""The command line. `main` answers the hot commands (--version, recall, should-recall) without
loading Typer when their arguments are plain; everything else goes to the Typer app."""

from __future__ import annotations

import sys

_APP_NAMES = ("app", "Json", "State", "memory", "run", "state")


def __getattr__(name):
    if name in _APP_NAMES:
        from . import app as _app

        return getattr(_app, name)
    if name in ("Out",):
        from .boundary import Out

        return Out
    raise AttributeError(name)


_GLOBAL_VALUE = {"--root": "root", "--session": "session", "--scope": "scope"}


def _fast(args: list) -> int | None:
    """Run recall / should-recall directly when every argument is one the fast path knows;
    None hands the call to Typer (help, errors, anything unusual)."""
    opts = {"root": None, "session": None, "scope": None, "json": False}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        a = args[i]
        if a == "--json":
            opts["json"] = True
            i += 1
        elif a in _GLOBAL_VALUE and i + 1 < len(args):
            opts[_GLOBAL_VALUE[a]] = args[i + 1] or None
            i += 2
        else:
            return None
    if i >= len(args):
        return None
    command, rest = args[i], args[i + 1:]
    positional: list = []
    limit = layer = None
    deep = False
    j = 0
    while j < len(rest):
        a = rest[j]
        if a == "--":
            positional += rest[j + 1:]
            break
        if a == "--json":
            opts["json"] = True
        elif command == "recall" and a == "--deep":
            deep = True
        elif command == "recall" and a in ("--limit", "-k", "--layer", "-l") and j + 1 < len(rest):
            value = rest[j + 1]
            if a in ("--limit", "-k"):
                if not value.isdigit():
                    return None
                limit = int(value)
            else:
                layer = value
            j += 1
        elif a.startswith("-") and a != "-":
            return None
        else:
            positional.append(a)
        j += 1
    if len(positional) != 1:
        return None
    from .boundary import execute, recall_action, should_recall_action

    if command == "recall":
        return execute("recall", opts["json"], lambda: recall_action(
            opts["root"], opts["session"], opts["scope"], positional[0], limit, deep, layer))
    if command == "should-recall":
        return execute("should-recall", opts["json"], lambda: should_recall_action(opts["root"], positional[0]))
    return None


def main(argv: list | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        from .. import __version__

        sys.stdout.write(f"memcli {__version__}\n")
        return
    code = _fast(args)
    if code is not None:
        sys.stdout.flush()
        sys.exit(code)
    from .app import app

    app(args=args, prog_name="memcli")
