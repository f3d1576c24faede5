"""Recall: the cascade over session, scope, index and details, one small layer class each.

``registry.py`` lists the layers in cascade order; ``layer.py`` is the interface they share;
``cascade.py`` runs them; ``trace.py`` logs every read; ``signals.py`` decides whether a turn
calls for a recall at all. Each takes a store.Root.
"""

from .cascade import Recall, recall, run
from .registry import layer_names, register

__all__ = ["Recall", "layer_names", "recall", "register", "run"]
