"""Plugins: installed distributions with an entry point in the group ``memcli.plugins``, naming a
module (or an object) with any of the HOOKS, each called once a process, when its registry is
first used, with the registry's own ``register`` (docs/plugins.md lists them). A plugin imports
only ``memcli`` and ``memcli.api``; installed means enabled, and nothing is read from the root.

What was found is cached in ``$XDG_CACHE_HOME/memcli/plugins.json`` per interpreter path list, with
the modification time of every folder on it (importing ``importlib.metadata`` costs a turn ~30 ms;
``benchmarks/plugin_discovery.py``); a stale cache first scans the ``entry_points.txt`` files.
"""

from __future__ import annotations

import os
import sys
from contextlib import suppress

GROUP = "memcli.plugins"
HOOKS = ("register_layers", "register_checks", "register_commands", "register_providers", "register_rule_sets")
CACHE_FORMAT = 1
RACY_NS = 2_000_000_000  # a modification time this close to now, either side, is not trusted (one far
# ahead of the clock, a clock set back or files unpacked with future times, is kept: a later write changes it)
MAX_ENVIRONMENTS = 8  # interpreter path lists kept in the cache file

_found: list | None = None  # the plugins of this process: dicts (see _describe)
_loaded: dict = {}  # entry point value -> the loaded object (None: it failed)
_loaded_problem: dict = {}  # entry point value -> why it could not be loaded
_problems: list = []


def call(hook: str, *args) -> None:
    """Call ``hook`` of every plugin that has it; one that fails to load or raises is said in ``problems()``."""
    if hook not in HOOKS:
        raise ValueError(f"unknown plugin hook {hook!r}")
    for plugin in _plugins():
        if hook not in plugin["hooks"]:
            continue
        obj = _load(plugin)
        if obj is None:
            continue
        try:
            getattr(obj, hook)(*args)
        except Exception as e:  # a broken plugin never stops memcli
            _problems.append(f"plugin {plugin['name']}: {hook} failed ({type(e).__name__}: {e})")


def problems() -> list[str]:
    """What went wrong with a plugin in this process (one line each)."""
    return list(_problems)


def installed(refresh: bool = False) -> list[dict]:
    """Every plugin found (name, value, dist, version, hooks, problem); ``refresh`` scans again."""
    global _found
    if refresh:
        _found = _describe_all(_paths())
    return [dict(p) for p in _plugins()]


def same_as_here(sys_path: list, cwd: str) -> bool:
    """Whether a process with this path list, in cwd, would find the plugins this one found (and none
    failed here)."""
    if _problems:
        return False
    here = os.path.abspath(cwd)
    paths = [p for p in sys_path if p and os.path.abspath(os.path.join(cwd, p)) != here]
    theirs = _read_cache(paths)
    if theirs is None:
        if _may_hold_plugins(paths):
            return False
        theirs = []
    return [(p["name"], p["value"]) for p in theirs] == [(p["name"], p["value"]) for p in _plugins()]


def _plugins() -> list:
    global _found
    if _found is None:
        paths = _paths()
        cached = _read_cache(paths)
        _found = cached if cached is not None else _describe_all(paths)
    return _found


def _paths() -> list[str]:
    """The interpreter's path without the working folder: a clone's files never name a plugin."""
    here = os.getcwd()
    return [p for p in sys.path if p and os.path.abspath(p) != here]


def _times(paths: list) -> list:
    out: list = []
    for p in paths:
        try:
            out.append(os.stat(p).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


def _cache_path() -> str:
    from .xdg import home

    return os.path.join(home("cache"), "plugins.json")


_cache_read: tuple | None = None  # ((path, its stat), contents) of the cache file this process read last


def _cache() -> dict:
    """The cache file's contents, read again only when the file changed (a long-lived process)."""
    global _cache_read
    import json

    path = _cache_path()
    st = os.stat(path)
    seen = (path, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    if _cache_read is None or _cache_read[0] != seen:
        with open(path, encoding="utf-8") as f:
            _cache_read = (seen, json.load(f))
    return _cache_read[1]


def _read_cache(paths: list) -> list | None:
    """The plugins cached for this path list, or None when there is no record or it is stale."""
    try:
        data = _cache()
        record = data["environments"]["\n".join(paths)]
        if data["format"] != CACHE_FORMAT or record["times"] != _times(paths):
            return None
        plugins = record["plugins"]
        if not all(isinstance(p, dict) and set(p) >= {"name", "value", "hooks", "file", "mtime"} for p in plugins):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    for p in plugins:  # a plugin's own module changed (an editable install): look again
        if p["file"] and _times([p["file"]])[0] != p["mtime"]:
            return None
    return plugins


def _describe_all(paths: list) -> list:
    """The plugins on the paths, described afresh, and the cache rewritten."""
    times = _times(paths)
    plugins = [_describe(ep) for ep in (_entry_points(paths) if _may_hold_plugins(paths) else [])]
    _write_cache(paths, times, plugins)
    return plugins


def _may_hold_plugins(paths: list) -> bool:
    """Whether an entry_points.txt on the paths names the group (a zip or anything unusual: yes)."""
    needle = f"[{GROUP}]"
    for path in paths:
        if not os.path.isdir(path):
            if os.path.exists(path):
                return True
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(path, name, "entry_points.txt"), encoding="utf-8") as f:
                        if needle in f.read():
                            return True
                except (OSError, UnicodeDecodeError):
                    continue
    return False


def _entry_points(paths: list) -> list:
    """The group's entry points of the distributions on the paths, the first of each name."""
    from importlib.metadata import distributions

    out, seen, dists = [], set(), set()
    for dist in distributions(path=paths):
        key = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if key in dists:
            continue  # an older copy further down the path
        dists.add(key)
        for ep in dist.entry_points:
            if ep.group == GROUP and ep.name not in seen:
                seen.add(ep.name)
                out.append((ep.name, ep.value, dist.metadata["Name"], dist.version))
    return out


def _describe(entry: tuple) -> dict:
    """A plugin as the cache keeps it: which hooks it has and the file that says so."""
    name, value, dist, version = entry
    plugin = dict(name=name, value=value, dist=dist, version=version, hooks=[], file=None, mtime=None, problem=None)
    obj = _load(plugin)
    if obj is None:
        plugin["problem"] = _loaded_problem.get(value, "cannot be loaded")
        return plugin
    plugin["hooks"] = [h for h in HOOKS if callable(getattr(obj, h, None))]
    module = sys.modules.get(value.partition(":")[0].strip())
    plugin["file"] = getattr(module, "__file__", None)
    if plugin["file"]:
        plugin["mtime"] = _times([plugin["file"]])[0]
    if not plugin["hooks"]:
        plugin["problem"] = f"plugin {name}: {value} has none of the hooks ({', '.join(HOOKS)})"
        _problems.append(plugin["problem"])
    return plugin


def _load(plugin: dict):
    """The entry point's object (module:attribute, as importlib.metadata loads it), or None."""
    value = plugin["value"]
    if value in _loaded:
        return _loaded[value]
    import importlib

    module, _, attr = value.partition(":")
    try:
        obj = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
    except Exception as e:  # a plugin that cannot be imported is said, not raised
        obj = None
        _loaded_problem[value] = f"plugin {plugin['name']}: cannot load {value} ({type(e).__name__}: {e})"
        _problems.append(_loaded_problem[value])
    _loaded[value] = obj
    return obj


def _write_cache(paths: list, times: list, plugins: list) -> None:
    """Keep what was found, unless a time is too recent to trust or a plugin failed (looked for again)."""
    import json
    import time

    now = time.time_ns()
    stamps = times + [p["mtime"] for p in plugins]
    if any(t is not None and abs(now - t) < RACY_NS for t in stamps) or any(p["problem"] for p in plugins):
        return
    path = _cache_path()
    try:
        data = _cache()
        environments = dict(data["environments"]) if data.get("format") == CACHE_FORMAT else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        environments = {}
    key = "\n".join(paths)
    environments.pop(key, None)
    environments[key] = {"times": times, "plugins": plugins}
    while len(environments) > MAX_ENVIRONMENTS:
        environments.pop(next(iter(environments)))
    temp = f"{path}.{os.getpid()}.tmp"  # unique to this process, in the same folder, then renamed
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(temp, "w", encoding="utf-8") as f:
            json.dump({"format": CACHE_FORMAT, "environments": environments}, f, indent=1)
        os.replace(temp, path)
    except OSError:  # no cache: the next run scans again
        with suppress(OSError):
            os.unlink(temp)
