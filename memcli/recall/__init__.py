"""Recall: the cascade over session, scope, index and details, one small layer class each.

``registry.py`` lists the layers in cascade order; ``layer.py`` is the interface they share;
``cascade.py`` runs them; ``trace.py`` logs every read; ``signals.py`` decides whether a turn
calls for a recall at all. Each takes a store.Root.

The names below are loaded on first use: ``should-recall`` needs ``signals`` alone, not the
cascade and every layer behind it.
"""

__all__ = ["Recall", "layer_names", "recall", "register", "run"]


def __getattr__(name: str):
    if name in ("Recall", "recall", "run"):
        from . import cascade

        return getattr(cascade, name)
    if name in ("layer_names", "register"):
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
