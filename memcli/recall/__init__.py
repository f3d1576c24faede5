"""Recall: the cascade over session, scope, index and details, one small layer class each.

``registry.py`` lists the layers in cascade order; ``layer.py`` is the interface they share;
``cascade.py`` runs them; ``trace.py`` logs every read; ``signals.py`` decides whether a turn
calls for a recall at all.
"""

from .cascade import Recall, recall, run
from .details import detail_doc, detail_files
from .registry import layer_names, register
from .signals import known_names, should_recall
from .trace import access, record

LAYERS = layer_names()

__all__ = ["LAYERS", "Recall", "access", "detail_doc", "detail_files", "known_names", "layer_names", "record",
           "recall", "register", "run", "should_recall"]
