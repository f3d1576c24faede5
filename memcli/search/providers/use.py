"""The bundled provider: the semantic extra's multilingual Universal Sentence Encoder."""

from __future__ import annotations

from .base import ProviderUnavailable


class UseProvider:
    name = "use"
    calibrated = True  # the semantic rule's constants were chosen with this model

    @property
    def key(self) -> str:
        from ..embed import MODEL

        return f"use:{MODEL}"

    def encode(self, texts: list[str], kind: str):
        from ..embed import ModelUnavailable, load

        try:
            return load().encode(texts)  # one encoder for questions and passages
        except ModelUnavailable as e:
            raise ProviderUnavailable(str(e)) from e
