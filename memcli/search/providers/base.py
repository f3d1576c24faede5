"""What every embedding provider is (the registry is the package's ``__init__``)."""

from __future__ import annotations

from typing import Protocol


class ProviderUnavailable(Exception):
    """The provider cannot embed now: not installed, not configured, or its server is down."""


class Provider(Protocol):
    name: str  # the registry name

    @property
    def key(self) -> str:
        """provider:model, what the embedding cache is keyed by."""

    def encode(self, texts: list[str], kind: str) -> object:
        """Unit vectors, float32 (len(texts), dim); ``kind`` is "query" or "passage"."""
