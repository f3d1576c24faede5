"""The one root finder: --root, else MEMCLI_ROOT, else the nearest folder at or above the working
one that holds MEMORY.md or memcli.yaml; the environment and the working folder are values (a
server answers for clients that each have their own). Only ``os``: the thin client imports it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

INDEX, CONFIG = "MEMORY.md", "memcli.yaml"


def is_root(folder: str | os.PathLike) -> bool:
    """A folder holding MEMORY.md or memcli.yaml."""
    return os.path.exists(os.path.join(folder, INDEX)) or os.path.exists(os.path.join(folder, CONFIG))


def above(start: str | os.PathLike) -> Iterator[str]:
    """The roots at or above a folder (its real path), nearest first."""
    here = os.path.realpath(start)
    while True:
        if os.path.isfile(os.path.join(here, INDEX)) or os.path.isfile(os.path.join(here, CONFIG)):
            yield here
        up = os.path.dirname(here)
        if up == here:
            return
        here = up


def expand(path: str, env: Mapping[str, str]) -> str:
    """A path with a leading ~ made the home folder (env's HOME, as the shell that gave it has it)."""
    home = env.get("HOME")
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return os.path.expanduser(path)


def find(
    explicit: str | os.PathLike | None = None, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> tuple[str | None, str]:
    """(the root's real path, "") or (None, why there is none); env and cwd default to the process's."""
    env = os.environ if env is None else env
    named = os.fspath(explicit) if explicit not in (None, "") else env.get("MEMCLI_ROOT") or None
    try:
        cwd = os.getcwd() if cwd is None else cwd
    except OSError:
        return None, "not a memory root: the working folder is gone"
    if named is None:
        return next(above(cwd), None), "not a memory root (run `memcli init`)"
    shown = expand(named, env)
    path = os.path.join(cwd, shown)
    if os.path.exists(path) and not os.path.isdir(path):
        return None, f"not a memory root: {shown} is a file, not a folder"
    if not os.path.isdir(path):
        return None, f"not a memory root: {shown} does not exist (run `memcli init {shown}`)"
    if not is_root(path):
        return None, f"not a memory root: {shown} (run `memcli init`)"
    return os.path.realpath(path), ""
