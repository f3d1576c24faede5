"""A local sentence-transformers model (by name or path in ``embed.model``), when the
``sentence-transformers`` package and the model's weights are installed."""

from __future__ import annotations

import importlib.util

from .base import ProviderUnavailable

_models: dict = {}


class SentenceTransformersProvider:
    name = "sentence-transformers"

    def __init__(self, model: str | None, query_prefix: str = "", passage_prefix: str = "") -> None:
        if not model:
            raise ProviderUnavailable("embed.provider sentence-transformers needs embed.model (a model name or path)")
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ProviderUnavailable(
                "embed.provider sentence-transformers needs the sentence-transformers "
                "package: pip install sentence-transformers"
            )
        self.model = model
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}

    @property
    def key(self) -> str:
        prefixes = "".join(self.prefixes.values())
        return f"sentence-transformers:{self.model}" + (f"#{prefixes}" if prefixes else "")

    def encode(self, texts: list[str], kind: str):
        import numpy as np

        model = _models.get(self.model)
        if model is None:
            try:
                from sentence_transformers import SentenceTransformer

                # local files only: a recall never downloads weights
                model = _models[self.model] = SentenceTransformer(self.model, local_files_only=True)
            except Exception as e:  # noqa: BLE001 - any failure to load is "not available here"
                raise ProviderUnavailable(f"cannot load the sentence-transformers model {self.model!r}: {e}") from e
        prefix = self.prefixes.get(kind, "")
        vectors = model.encode([prefix + (t or " ") for t in texts], normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)
