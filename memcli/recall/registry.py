"""The layers of the cascade, cheapest first. A new layer is a ``Layer`` subclass in its own
module and one ``register`` call: the built-ins' below, or a plugin's ``register_layers`` hook
(``memcli.plugins``), asked for when the cascade is first used."""

from __future__ import annotations

from .. import plugins
from .details import DetailsLayer
from .index import IndexLayer
from .layer import Layer
from .scope import ScopeLayer
from .semantic import SemanticLayer
from .session import SessionLayer

_LAYERS: list[Layer] = []
_filling = False


def register_layers(register) -> None:
    """The built-in layers, registered as a plugin's are."""
    for layer in (
        SessionLayer(),
        ScopeLayer(),
        IndexLayer(),
        DetailsLayer(),
        SemanticLayer(),
    ):  # semantic: active with the `semantic` extra only
        register(layer)


def _all() -> list[Layer]:
    """The layers, the built-ins and the plugins' registered on first use."""
    global _filling
    if not _LAYERS and not _filling:
        _filling = True
        try:
            register_layers(register)
            plugins.call("register_layers", register)
        finally:
            _filling = False
    return _LAYERS


def register(layer: Layer, *, before: str | None = None) -> None:
    """Add a layer to the cascade, last or before the named one; a layer of the same name is replaced."""
    layers_ = _all()
    names = [x.name for x in layers_]
    if layer.name in names:
        layers_[names.index(layer.name)] = layer
        return
    layers_.insert(names.index(before) if before in names else len(layers_), layer)


def layers() -> list[Layer]:
    return list(_all())


def layer_names() -> tuple[str, ...]:
    """The layers that can run here (a layer of an extra that is not installed is left out)."""
    return tuple(x.name for x in _all() if x.active())


def get(name: str) -> Layer | None:
    return next((x for x in _all() if x.name == name), None)


def help_text() -> str:
    """The layers for --layer's help: 'session | scope | index | details'."""
    return " | ".join(layer_names())
