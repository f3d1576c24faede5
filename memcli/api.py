"""What a plugin imports of memcli (with ``memcli`` itself: ``Memory``, ``__version__``), each name
imported when it is first asked for: a plugin pays only for what it uses."""

from __future__ import annotations

from types import ModuleType

_LAYER = ("Layer", "Ask", "Candidate", "rank", "snip")
_MODEL = ("Hit", "Finding", "Detail")
_CHECK = ("Check", "FileFacts")
_AUDIT = ("Memo", "SEVERITIES")
_PROVIDER = ("Provider", "ProviderUnavailable")
_ERRORS = ("MemcliError", "UsageError")
__all__ = sorted((*_LAYER, *_MODEL, *_CHECK, *_AUDIT, *_PROVIDER, *_ERRORS, "Memory"))


def __getattr__(name: str):
    module: ModuleType
    if name in _LAYER:
        from .recall import layer as module
    elif name in _MODEL:
        from . import model as module
    elif name in _CHECK:
        from .heartbeat import checks as module
    elif name in _AUDIT:
        from .heartbeat import base as module
    elif name in _PROVIDER:
        from .search.providers import base as module
    elif name in _ERRORS:
        from . import errors as module
    elif name == "Memory":
        from . import core as module
    else:
        raise AttributeError(f"module 'memcli.api' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
