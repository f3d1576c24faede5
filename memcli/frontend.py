"""What the front ends (cli/, hooks.py, mcp.py, serve.py, gitmerge.py) need besides a root's
``Memory``: the names and the root the environment gives, the roots the agent hook may use, the
recall layers and the semantic extra, the injection flags said beside recalled text, input
decoding and durations, the git merge driver, the plugins, and what a resident server follows.

One function each, importing its module only when called, so a front end imports ``core``,
``frontend``, ``errors``, ``model`` and ``render`` of memcli and nothing else
(tests/test_architecture.py).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a turn does without it)
if TYPE_CHECKING:
    from pathlib import Path

    from .store.follow import Changed, Followed


def __getattr__(name: str):
    """CONTEXT_BUDGET and MIN_BUDGET, the context block's default and least budget in tokens
    (usecases.context's), read only by the front ends that show them."""
    if name in ("CONTEXT_BUDGET", "MIN_BUDGET"):
        from .usecases import context

        return getattr(context, name)
    raise AttributeError(name)


def session_names(session: str | None = None, scope: str | None = None) -> tuple[str, str]:
    """The session and scope names: given, else MEMCLI_SESSION / MEMCLI_SCOPE, else 'default'."""
    from .config import env

    return session or env("MEMCLI_SESSION") or "default", scope or env("MEMCLI_SCOPE") or "default"


def find_root(root: str | os.PathLike | None = None) -> Path:
    """The root named, else MEMCLI_ROOT, else the nearest one above the working folder."""
    from .config import find_root as find

    return find(root)


def hook_allow(root: str | os.PathLike) -> bool:
    """Let the agent hook use this root (recorded outside it); False when it already could."""
    from .trust import allow_hook_root

    return allow_hook_root(root)


def hook_deny(root: str | os.PathLike) -> bool:
    """Stop the agent hook from using this root; False when it was not allowed."""
    from .trust import deny_hook_root

    return deny_hook_root(root)


def hook_roots() -> list[str]:
    """The roots the user allowed the hook to use, in the order allowed."""
    from .trust import hook_roots as roots

    return roots()


def real_path(path: str | os.PathLike) -> str:
    """A path with every symlink resolved: how the hook's records name a root."""
    from .trust import real

    return real(path)


def hook_session(session_id) -> str:
    """A session name (a valid state-file name) for an agent's session id."""
    from .usecases.hooks import session_name

    return session_name(session_id)


def layer_names() -> tuple[str, ...]:
    """The recall layers that can run here, in cascade order (a layer of a missing extra left out)."""
    from .recall.registry import layer_names as names

    return names()


def all_layers() -> tuple[str, ...]:
    """Every recall layer memcli knows, in cascade order, whether it can run here or not."""
    from .recall.registry import layers

    return tuple(x.name for x in layers())


def semantic_available() -> bool:
    """Whether the semantic extra is installed (its layer and `memcli serve` can run)."""
    from .search.semantic import enabled

    return enabled()


def injection_kinds(text: str) -> list[str]:
    """The kinds of prompt injection a text may hold (for flagging recalled memory text as data)."""
    from .safety.scanner import injection_kinds as kinds

    return kinds(text)


def injection_note(kinds: list) -> str:
    """The one line said beside flagged text where no field carries the flag ("" for none)."""
    from .safety.scanner import flag_note

    return flag_note(kinds)


def decode_input(data: bytes, name: str, limit: int = 1_000_000) -> str:
    """Text given on the command line or stdin: UTF-8 (a BOM tolerated); a clear UsageError for
    binary, non-UTF-8 or over-limit input."""
    from .store.fs import decode

    return decode(data, name, limit)


def read_input_file(file: str, limit: int = 1_000_000) -> str:
    """A file named on the command line as input: UTF-8 text up to limit bytes (a BOM tolerated);
    FileError when it is missing, a folder or unreadable, UsageError for binary, non-UTF-8 or
    over-limit input."""
    from .store.fs import decode, read_bytes

    return decode(read_bytes(file, file, limit), file, limit)


def parse_duration(value: str, option: str) -> float:
    """'10s', '1.5h', '90d' -> seconds; ConfigError naming the option otherwise."""
    from .dates import parse_duration as parse

    return parse(value, option)


def way_out(rel: str) -> str:
    """What a person runs to settle a file left with git conflict markers."""
    from .store.markers import way_out as way

    return way(rel)


def merge_file(kind: str, base: str, ours: str, theirs: str, marker: int = 7, path: str = "") -> int:
    """git's merge driver for one file (kind index, detail or episode; the paths git gives): the
    result replaces ours, through the write check. 0 merged, 1 conflicts left, 2 not UTF-8 and
    git could not merge it; a refusal raises MemcliError."""
    from .usecases.merge import merge_file as merge

    return merge(kind, base, ours, theirs, marker, path)


def add_plugin_commands(app) -> None:
    """Let every installed plugin add its commands to the Typer app (its register_commands hook)."""
    from .plugins import call

    call("register_commands", app)


def plugins(refresh: bool = False) -> list[dict]:
    """The installed plugins: name, entry point value, distribution, version, hooks, problem."""
    from .plugins import installed

    return installed(refresh)


def follow_files(root) -> Followed | None:
    """Follow a root's details-layer files in this process (a long-lived one: `memcli serve`), so a
    recall asks the kernel what changed instead of stat-ing every file; None where it cannot."""
    from pathlib import Path

    from .store.follow import follow

    return follow(Path(root))


def watch_changes(folders) -> Changed | None:
    """A callable saying whether anything under these folders changed since it was made (inotify);
    None where that cannot be followed."""
    from .store.follow import changed

    return changed(folders)


def answer_semantic_here(root, handler) -> None:
    """This process is the server of root: its own semantic requests go to handler, not to a socket."""
    from .search.remote import answer_here

    answer_here(root, handler)


def plugins_match(sys_path: list, cwd: str) -> bool:
    """Whether a process with this interpreter path, working in cwd, finds the plugins this one
    loaded (by the plugin cache), and none failed here: then it runs memcli as this one does."""
    from .plugins import same_as_here

    return same_as_here(sys_path, cwd)


def plugin_problems() -> list[str]:
    """What went wrong with a plugin in this process, one line each (said as warnings)."""
    from .plugins import problems

    return problems()
