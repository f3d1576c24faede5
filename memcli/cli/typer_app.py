"""The Typer app every command module registers on, its global options, ``run`` (the one error
boundary of each command), and its Click command, which builds a command only when asked for it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from importlib import import_module
from typing import Annotated, Any, List, Optional

import typer
from typer.core import TyperGroup

from .. import __version__
from .. import render as r
from ..requests import REQUIRED, Door
from .boundary import Call, Out, State, execute

# Each top-level command, in the help's order, and the module of memcli.cli that registers it
# (tests/test_help.py checks the table); a plugin's commands come after.
COMMANDS = {
    **dict.fromkeys(("init", "remember", "update", "show", "list", "edit", "forget", "restore", "rename"), "app"),
    **dict.fromkeys(("recall", "should-recall", "context"), "cascade"),
    **{"heartbeat": "heartbeat", "watch": "heartbeat", "trust": "trust", "sync": "git", "resolve": "git"},
    **{"mcp": "agent", "stats": "lookup", "search": "lookup", "export": "transfer", "import": "transfer"},
    **{"serve": "serve", "outcome": "app", "reflect": "reflect", "plugins": "plugins", "doctor": "agents"},
    **{"index": "app", "session": "cascade", "scope": "cascade", "git": "git", "merge": "git"},
    **{"hook": "agent", "agents": "agents", "inbox": "reflect"},
}


class Commands(TyperGroup):
    """The top-level group, which imports a command's module when the command is asked for;
    ``lifted``: with --json or in a server, the groups whose no-argument help is turned off."""

    lifted: list | None = None

    def list_commands(self, ctx) -> list[str]:
        _plugin_commands()
        return list(dict.fromkeys([*COMMANDS, *(n for n, _ in _infos())]))

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in self.commands:
            if cmd_name in COMMANDS:
                import_module(f"{__package__}.{COMMANDS[cmd_name]}")
            else:
                _plugin_commands()
            info = dict(_infos()).get(cmd_name)
            if info is None:
                return None
            self.commands[cmd_name] = tidy(_build(info))
            if self.lifted is not None:
                self.lift(self.commands[cmd_name])
        return self.commands[cmd_name]

    def every(self) -> Commands:
        """Every command built, in the help's order (what the docs and the completion list)."""
        names = [n for n in self.list_commands(None) if self.get_command(None, n) is not None]
        self.commands = {n: self.commands[n] for n in names}
        return self

    def resolve_command(self, ctx, args):
        if args and self.get_command(ctx, args[0]) is None:  # "Did you mean": every command known
            self.every()
        return super().resolve_command(ctx, args)

    def lift(self, cmd) -> None:
        stack = [cmd]
        while stack:
            g = stack.pop()
            if getattr(g, "no_args_is_help", False):
                g.no_args_is_help = False
                self.lifted.append(g)  # type: ignore[union-attr]
            stack += getattr(g, "commands", {}).values()


app = typer.Typer(
    name="memcli",
    cls=Commands,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="A file-based Markdown memory for AI agents: MEMORY.md (the index) + memory/*.md (the details).\n\n"
    'Example: memcli recall "how do we deploy to staging"',
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _infos():
    """(name, Typer's record) of every command and group registered so far."""
    for info in app.registered_commands:
        yield info.name or typer.main.get_command_name(getattr(info.callback, "__name__", "")), info
    for group in app.registered_groups:
        yield group.name, group


def _build(info):
    short, markup = app.pretty_exceptions_short, app.rich_markup_mode
    if isinstance(info, typer.models.CommandInfo):
        return typer.main.get_command_from_info(info, pretty_exceptions_short=short, rich_markup_mode=markup)
    return typer.main.get_group_from_info(
        info, pretty_exceptions_short=short, rich_markup_mode=markup, suggest_commands=app.suggest_commands
    )


_PLUGINS_ADDED = False


def _plugin_commands() -> None:
    """Let every installed plugin add its commands to the app (its register_commands hook), once."""
    global _PLUGINS_ADDED
    if not _PLUGINS_ADDED:
        _PLUGINS_ADDED = True
        from ..plugins import call

        call("register_commands", app)


def tidy(cmd):
    """What every command gets: its help's closing `Example:` printed after the options, a
    positional `id_` shown as `id`, and "Did you mean" said once (Click says it; Typer again)."""
    if hasattr(cmd, "suggest_commands"):
        cmd.suggest_commands = False
    for p in cmd.params:
        if p.param_type_name == "argument" and p.name.endswith("_"):
            p.opts = [p.name.rstrip("_")]  # `id_` (a Python name) is shown as `id` / ID
    help_text = (cmd.help or "").rstrip()
    head, sep, example = help_text.rpartition("\n\n")
    if sep and example.lstrip().startswith("Example:") and not cmd.epilog:
        cmd.help, cmd.epilog = head, example.strip()
    for sub in getattr(cmd, "commands", {}).values():
        tidy(sub)
    return cmd


@functools.cache
def command() -> Commands:
    """The app's Click command, made once per process (the commands themselves as they are asked for)."""
    return tidy(typer.main.get_command(app))


Json = Annotated[bool, typer.Option("--json", help="Print one JSON envelope on stdout.")]


def _call(ctx: typer.Context) -> Call:
    obj = ctx.find_root().obj
    return obj.call if isinstance(obj, State) else obj if isinstance(obj, Call) else Call.here()


def _version(ctx: typer.Context, value: bool):
    if value:
        call = _call(ctx)
        version = {"version": __version__}
        call.out.out(r.envelope("version", True, version) if call.json else f"memcli {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    root: Annotated[
        Optional[str],
        typer.Option("--root", help="The memory root (else MEMCLI_ROOT, else the nearest ancestor with MEMORY.md)."),
    ] = None,
    json_: Json = False,
    session: Annotated[
        Optional[str], typer.Option("--session", help="Session name (else MEMCLI_SESSION, else 'default').")
    ] = None,
    scope: Annotated[
        Optional[str], typer.Option("--scope", help="Scope name (else MEMCLI_SCOPE, else 'default').")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
):
    ctx.obj = State(root or None, json_, session or None, scope or None, _call(ctx))


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    if not isinstance(obj, State):
        obj = ctx.find_root().obj = State(call=_call(ctx))
    return obj


def output(ctx: typer.Context) -> r.Output:
    return state(ctx).out


def memory(ctx: typer.Context):
    return state(ctx).memory()


def run(ctx: typer.Context, command: str, json_flag: bool, action: Callable[[], Out], root=None) -> None:
    """The one error boundary of every command. A server admits the command first (``root``: the
    root it acts on, when not its options'); run in its own process, a per-turn command starts one."""
    st = state(ctx)
    if st.call.admit is not None:
        st.call.admit(command, root or (lambda: _root(st)))
    code = execute(command, json_flag or st.json, action, st.out)
    if st.call.admit is None and st.opened is not None:
        from .. import resident

        if command in resident.PER_TURN:
            resident.start(st.opened)
    if code:
        raise typer.Exit(code)


def root_of(ctx: typer.Context, path: str | None = None):
    """The root a command acts on: ``path``, else --root, else as the caller's environment finds it."""
    from ..config import find_root

    st = state(ctx)
    return find_root(path or st.root, st.call.env, st.call.cwd)


def _root(st: State) -> str | None:
    from ..roots import find

    return find(st.root, st.call.env, st.call.cwd)[0]


def takes(request):
    """A command taking a request's command-line fields as keyword arguments, after ``ctx``."""
    return lambda fn: _Taking(fn, request)


class _Taking:
    """A command whose parameters are made from a request when Typer first reads them (the recall
    layers' names are asked when the command is built, not on import)."""

    def __init__(self, fn, request):
        self.fn, self.request = fn, request
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = fn.__module__

    def __call__(self, ctx: typer.Context, **values):
        return self.fn(ctx, **values)

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        ctx, *own = inspect.signature(self.fn, eval_str=True).parameters.values()
        made = [_parameter(n, kind, d) for n, (kind, d) in self.request.DOORS.items() if "cli" in d.at]
        return inspect.Signature(
            [ctx, *made, *(p.replace(kind=p.KEYWORD_ONLY) for p in own if p.kind is not p.VAR_KEYWORD)]
        )

    @property
    def __annotations__(self) -> dict:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}


def _parameter(name: str, kind: Any, d: Door) -> inspect.Parameter:
    """A request's field as a Typer option, or an argument (a field without flags)."""
    from ..recall.registry import layer_names
    from .complete import COMPLETIONS

    kw: dict = {"help": d.help, "metavar": d.metavar, "autocompletion": COMPLETIONS.get(d.complete or "")}
    if d.choices == "layers":
        kw["help"] = f"{d.help}: {' | '.join(layer_names())}."
    default: Any = ... if d.default is REQUIRED else None
    if isinstance(d.default, tuple):
        kind = Optional[List[str]]
    elif kind in (bool, bool | None) and "/" not in "".join(d.flags):
        kind, default = bool, False
    elif default is None and kind in (str, int, float):
        kind = kind | None
    info = typer.Option(*d.flags, **kw) if d.flags else typer.Argument(**kw)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info])
