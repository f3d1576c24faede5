"""Any OpenAI-compatible embeddings endpoint: POST {"model", "input": [...]} to
``<embed.url>`` (``…/v1/embeddings``; a base URL gets ``/v1/embeddings`` or ``/embeddings``
added), vectors from ``data[i].embedding`` (a list of floats or base64 float32)."""

from __future__ import annotations

import base64
import json
import os
from urllib.parse import urlsplit

from .base import ProviderUnavailable

TIMEOUT = 30.0  # seconds for one request (a first sync sends many texts)
BATCH = 64  # texts per request


def endpoint(url: str) -> str:
    """The embeddings URL for a base URL or a full one."""
    url = url.rstrip("/")
    if url.endswith("/embeddings"):
        return url
    return url + ("/embeddings" if url.endswith("/v1") else "/v1/embeddings")


class HttpProvider:
    name = "openai"

    def __init__(self, url: str | None, model: str | None, key_env: str | None = None, query_prefix: str = "",
                 passage_prefix: str = "", timeout: float = TIMEOUT) -> None:
        if not url:
            raise ProviderUnavailable("embed.provider openai needs embed.url (an OpenAI-compatible "
                                      "/v1/embeddings endpoint)")
        if urlsplit(url).scheme not in ("http", "https"):
            raise ProviderUnavailable(f"embed.url must be an http(s) URL, got {url!r}")
        self.url = endpoint(url)
        self.model = model or "default"
        self.key_env = key_env
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.timeout = timeout

    @property
    def key(self) -> str:
        prefixes = "".join(self.prefixes.values())
        return f"openai:{self.model}" + (f"#{prefixes}" if prefixes else "")

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key_env:
            key = os.environ.get(self.key_env)
            if not key:
                raise ProviderUnavailable(f"embed.key_env names {self.key_env}, which is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def encode(self, texts: list[str], kind: str):
        import numpy as np

        prefix = self.prefixes.get(kind, "")
        rows: list = []
        for start in range(0, len(texts), BATCH):
            rows += self._request([prefix + (t or " ") for t in texts[start:start + BATCH]])
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1) if rows else np.zeros((0, 0), np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def _request(self, batch: list[str]) -> list:
        import urllib.error
        import urllib.request

        body = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
        req = urllib.request.Request(self.url, data=body, headers=self._headers(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise ProviderUnavailable(f"{self.url} answered {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ProviderUnavailable(f"{self.url} cannot be reached ({reason})") from None
        except ValueError:
            raise ProviderUnavailable(f"{self.url} did not answer with JSON") from None
        try:
            data = sorted(answer["data"], key=lambda d: d.get("index", 0))
            vectors = [_vector(d["embedding"]) for d in data]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ProviderUnavailable(f"{self.url} answered without embeddings") from None
        if len(vectors) != len(batch):
            raise ProviderUnavailable(f"{self.url} returned {len(vectors)} embeddings for {len(batch)} texts")
        return vectors


def _vector(value) -> list:
    if isinstance(value, str):  # encoding_format base64: little-endian float32
        import numpy as np

        return np.frombuffer(base64.b64decode(value), dtype="<f4").tolist()
    return [float(x) for x in value]
