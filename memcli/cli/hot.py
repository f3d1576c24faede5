"""The commands answered without Typer: the agent hook (`memcli [--root R] hook claude-code ...`)
and the hot commands of the fast path (recall, should-recall, remember, scope set, session add,
context), read by the one parser (``argv``). ``main`` runs them, and so does a `memcli serve`
for its clients (``answer``)."""

from __future__ import annotations

from . import argv

_HOOK_ROOTS = ("allow", "deny", "list")  # `memcli hook allow PATH` …: the roots the hook may use


def fast(line: argv.Line) -> int | None:
    """Run a hot command read by the parser; None hands the call to Typer (help, errors, every
    other command), which then says what is wrong the way it says it for every command."""
    if line.words is None or line.help or line.error is not None or line.words[0] == "hook":
        return None
    from . import boundary as b

    values = dict(line.values)
    as_json = line.value("json_") or values.pop("json_", False)
    command = " ".join(line.words)
    st = b.State(line.value("root") or None, as_json, line.value("session") or None, line.value("scope") or None)
    return b.execute(command, as_json, lambda: b.HOT[command](st, **values))


def hook_line(args: list, line: argv.Line) -> tuple | None:
    """How `memcli [--root R] [--scope S] hook AGENT ...` runs without Typer: (where `hook`
    stands, the error before it or None), or None when Typer takes the line. An agent runs it
    before every prompt, and nothing may exit 2 there (Claude Code blocks the prompt on 2): a
    wrong word anywhere on the line is one line on stderr and exit 1. Help, and `hook
    allow|deny|list` (not per prompt), go to Typer."""
    if line.words is not None and line.words[0] != "hook":
        return None
    at = _hook_word(args)
    if at is None:
        return None
    after = args[at + 1 :]
    if after[:1] and after[0] in _HOOK_ROOTS or _help(line, at, after):
        return None
    if line.words is None and (at != line.at or line.error is not None):
        # the global options could not be read up to `hook`: still never exit 2
        return at, line.error or f"'hook' was read as the value of {args[at - 1]}"
    return at, None


def hook(args: list, line: argv.Line, stdin=None) -> int | None:
    how = hook_line(args, line)
    if how is None:
        return None
    at, error = how
    from ..hooks import run

    if error is not None:
        return run([], error=error, as_json="--json" in args[:at], stdin=stdin)
    return run(
        args[at + 1 :], root=line.value("root"), scope=line.value("scope"), as_json=line.value("json_"), stdin=stdin
    )


def answer(args: list, stdin=None) -> int | None:
    """Run a command line that the hook or the fast path answers without Typer: its exit code,
    or None (nothing ran) when the line is Typer's. ``stdin``: the hook's input, when it was
    read already (a binary stream)."""
    line = argv.parse(args)
    if line.value("version") and line.error is None and not line.help:
        return None
    code = hook(args, line, stdin)
    return fast(line) if code is None else code


def _help(line: argv.Line, at: int, after: list) -> bool:
    """Whether Typer would print a help for this hook line (and nothing else would stop it)."""
    if line.error is not None:
        return False
    if line.help and (line.words is not None or line.at <= at):  # `memcli -h ...`, `hook claude-code -h`
        return True
    lead = []
    for a in after:  # `hook -h`: the hook group's own options, up to its command
        if not a.startswith("-") or a in ("-", "--"):
            break
        lead.append(a)
    return line.words is None and line.at == at and bool(lead) and all(a in argv.HELP for a in lead)


def _hook_word(args: list) -> int | None:
    """Where `hook` stands when the words before it are global options and their values."""
    value_next = False
    for i, a in enumerate(args):
        if a == "hook":
            return i
        if a == "--":  # the end of the options: the command comes next
            return i + 1 if args[i + 1 : i + 2] == ["hook"] else None
        if a.startswith("-") and a != "-":
            value_next = a in argv.GLOBAL and argv.GLOBAL[a][1] is not bool
        elif value_next:
            value_next = False
        else:
            return None
    return None


def runs_here(args: list) -> bool:
    """Whether ``answer`` runs this line (the hook, or a command of the fast path, read without
    an error) rather than Typer."""
    line = argv.parse(args)
    if line.value("version") and line.error is None and not line.help:
        return False
    how = hook_line(args, line)
    if how is not None:
        return how[1] is None
    return line.words is not None and not line.help and line.error is None


READS = (("recall",), ("should-recall",), ("context",))  # the per-turn commands that write nothing


def writes(args: list) -> bool:
    """Whether a line ``answer`` runs may change the root's memory files (the hook, session add,
    remember, scope set): after it, the next recall has work to do that a server can do first."""
    return argv.parse(args).words not in READS


def hook_root_option(args: list, line: argv.Line) -> tuple | None:
    """(the --root given to the hook, or None) for a hook line that runs, else None."""
    how = hook_line(args, line)
    if how is None or how[1] is not None:
        return None
    return (argv.parse(["hook", *args[how[0] + 1 :]]).values.get("root") or line.value("root") or None,)
