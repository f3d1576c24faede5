"""The command line. `main` answers the hot commands (--version, recall, should-recall, remember,
scope set, session add, and the agent hooks) without loading Typer when their arguments are plain;
everything else goes to the Typer app, and both call the same actions through the same error boundary."""

from __future__ import annotations

import os
import sys

_GLOBAL_VALUE = {"--root": "root", "--session": "session", "--scope": "scope"}

# The commands an agent calls every turn, answered without Typer when their arguments are plain:
# (positional names, "?" when optional; {option: (parameter, kind)}, "!" after a required
# option's parameter), kind one of str, int, float, bool, list. The parameters are the Typer
# command's; every default is None or False, so each default is the library's. tests/test_fastpath.py derives this table from the Typer app.
_FAST = {
    ("recall",): (("query",), {"--limit": ("limit", int), "-k": ("limit", int), "--deep": ("deep", bool),
                               "--layer": ("layer", str), "-l": ("layer", str), "--threshold": ("threshold", float),
                               "--type": ("type_", str), "--min-success": ("min_success", float),
                               "--inbox": ("inbox", bool), "--also": ("also", list)}),
    ("should-recall",): (("text",), {}),
    ("remember",): (("title", "summary?"), {
        "--tag": ("tag", list), "-t": ("tag", list), "--alias": ("alias", list), "-a": ("alias", list),
        "--body": ("body", str), "-b": ("body", str), "--body-file": ("body_file", str), "-f": ("body_file", str),
        "--type": ("type_", str), "--importance": ("importance", float), "-i": ("importance", float),
        "--pin": ("pin", bool), "--expires": ("expires", str), "--id": ("id_", str), "--source": ("source", str)}),
    ("scope", "set"): (("key", "value"), {"--agent": ("agent!", str), "--force": ("force", bool)}),
    ("session", "add"): (("role", "text"), {}),
}


def _fast(args: list) -> int | None:
    """Run a hot command directly when every argument is one this parser knows for certain;
    None hands the call to Typer (help, errors, anything unusual)."""
    opts = {"root": None, "session": None, "scope": None, "json": False}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        a = args[i]
        if a == "--json":
            opts["json"] = True
            i += 1
        elif a in _GLOBAL_VALUE and i + 1 < len(args) and not args[i + 1].startswith("-"):
            opts[_GLOBAL_VALUE[a]] = args[i + 1] or None
            i += 2
        else:
            return None
    spec = None
    for words, candidate in _FAST.items():
        if tuple(args[i:i + len(words)]) == words:
            spec, command, rest = candidate, " ".join(words), args[i + len(words):]
            break
    if spec is None:
        return None
    names, options = spec
    values: dict = {}
    positional: list = []
    j = 0
    while j < len(rest):
        a = rest[j]
        if a == "--":
            positional += rest[j + 1:]
            break
        if a == "--json":
            opts["json"] = True
        elif a in options:
            name, kind = options[a]
            name = name.rstrip("!")
            if kind is bool:
                values[name] = True
            else:
                if j + 1 >= len(rest) or (rest[j + 1].startswith("-") and rest[j + 1] != "-"):
                    return None
                raw = rest[j + 1]
                try:
                    value = kind(raw) if kind in (int, float) else raw
                except ValueError:
                    return None
                if kind is list:
                    values.setdefault(name, []).append(raw)
                else:
                    values[name] = value
                j += 1
        elif a.startswith("-") and a != "-":
            return None
        else:
            positional.append(a)
        j += 1
    required = [n for n in names if not n.endswith("?")]
    if not len(required) <= len(positional) <= len(names):
        return None
    if any(n.endswith("!") and n.rstrip("!") not in values for n, _ in options.values()):
        return None  # a required option is missing: Typer says so
    values.update((n.rstrip("?"), v) for n, v in zip(names, positional))
    from . import boundary as b

    st = b.State(opts["root"], opts["json"], opts["session"], opts["scope"])
    return b.execute(command, opts["json"], lambda: b.HOT[command](st, **values))


def _only_globals(args: list) -> bool:
    """Whether args are global options alone (--version, --json, --root X, ...)."""
    i = 0
    while i < len(args):
        if args[i] in ("--version", "--json"):
            i += 1
        elif args[i] in _GLOBAL_VALUE and i + 1 < len(args):
            i += 2
        else:
            return False
    return True


_HOOK_ROOTS = ("allow", "deny", "list")  # `memcli hook allow PATH` …: the roots the hook may use


def _hook(args: list) -> int | None:
    """`memcli [--root R] [--scope S] hook AGENT ...` runs without Typer: an agent runs it before every
    prompt, and a wrong name must not exit 2 (Claude Code blocks the prompt on 2). Help goes to Typer."""
    opts: dict = {}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        name, eq, value = args[i].partition("=")
        if name == "--json" and not eq:
            opts["json"] = True
            i += 1
        elif name in _GLOBAL_VALUE and (eq or i + 1 < len(args)):
            opts[_GLOBAL_VALUE[name]] = (value if eq else args[i + 1]) or None
            i += 1 if eq else 2
        else:
            return None
    if args[i:i + 1] != ["hook"] or any(a in ("-h", "--help") for a in args[i + 1:]):
        return None
    if args[i + 1:i + 2] and args[i + 1] in _HOOK_ROOTS:  # allow / deny / list: not per prompt
        return None
    from ..hooks import run

    return run(args[i + 1:], root=opts.get("root"), scope=opts.get("scope"), as_json=bool(opts.get("json")))


def main(argv: list | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if _only_globals(args) and "--version" in args:
        from .. import __version__

        if "--json" in args:
            from ..render import envelope

            sys.stdout.write(envelope("version", True, {"version": __version__}) + "\n")
        else:
            sys.stdout.write(f"memcli {__version__}\n")
        return
    code = None
    if "_MEMCLI_COMPLETE" not in os.environ:  # shell completion goes through Typer
        code = _hook(args)
        if code is None:
            code = _fast(args)
    if code is None:
        from .app import command
        from .boundary import run_app

        code = run_app(command(), args)
    sys.stdout.flush()
    sys.exit(code)
