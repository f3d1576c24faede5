"""The user's own folders for memcli by the XDG rules: config (config.yaml), state (trust records,
the hook's roots), cache (the plugin list, the bundled model), runtime (the servers' sockets).
Plain strings and ``os`` only: the resident path's client imports this module."""

from __future__ import annotations

import os

_HOMES = {
    "config": ("XDG_CONFIG_HOME", (".config",)),
    "state": ("XDG_STATE_HOME", (".local", "state")),
    "cache": ("XDG_CACHE_HOME", (".cache",)),
}
VARIABLES = ("HOME", *(var for var, _ in _HOMES.values()))  # what says where the user's folders are


def home(kind: str) -> str:
    """memcli's folder of a kind (config, state or cache): its XDG variable's, else under ~."""
    var, default = _HOMES[kind]
    base = os.environ.get(var) or os.path.join(os.path.expanduser("~"), *default)
    return os.path.join(base, "memcli")


def runtime() -> str | None:
    """$XDG_RUNTIME_DIR/memcli when the variable holds an absolute path, else None."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(base, "memcli") if base and os.path.isabs(base) else None
