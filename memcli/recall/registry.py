"""The layers of the cascade, cheapest first. A new layer is a ``Layer`` subclass in its own
module and one line here (or one ``register`` call from an extension)."""

from __future__ import annotations

from .details import DetailsLayer
from .index import IndexLayer
from .layer import Layer
from .scope import ScopeLayer
from .semantic import SemanticLayer
from .session import SessionLayer

_LAYERS: list[Layer] = [
    SessionLayer(),
    ScopeLayer(),
    IndexLayer(),
    DetailsLayer(),
    SemanticLayer(),  # active with the `semantic` extra only
]


def register(layer: Layer, *, before: str | None = None) -> None:
    """Add a layer to the cascade, last or before the named one; a layer of the same name is replaced."""
    names = [x.name for x in _LAYERS]
    if layer.name in names:
        _LAYERS[names.index(layer.name)] = layer
        return
    _LAYERS.insert(names.index(before) if before in names else len(_LAYERS), layer)


def layers() -> list[Layer]:
    return list(_LAYERS)


def layer_names() -> tuple[str, ...]:
    """The layers that can run here (a layer of an extra that is not installed is left out)."""
    return tuple(x.name for x in _LAYERS if x.active())


def get(name: str) -> Layer | None:
    return next((x for x in _LAYERS if x.name == name), None)


def help_text() -> str:
    """The layers for --layer's help: 'session | scope | index | details'."""
    return " | ".join(layer_names())
