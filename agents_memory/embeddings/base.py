"""What an embedder is.

An embedder turns texts into L2-normalised ``float32`` rows of its :attr:`Embedder.spec`'s
dimension. Queries and passages are embedded separately because asymmetric models (e5) want
different prefixes for the two. A backend implements one method, :meth:`Embedder._embed_batch`,
for one batch of already cleaned texts; this base class does the rest: input checks, batching,
normalisation and the shape check. Backends load or connect lazily and raise
:class:`~agents_memory.errors.EmbeddingUnavailableError` when they cannot answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from agents_memory.errors import EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec

FloatArray = npt.NDArray[np.float32]


class Embedder(ABC):
    """Texts in, one L2-normalised ``float32`` row of ``spec.dim`` per text out."""

    spec: EmbeddingSpec
    batch_size: int

    def __init__(self, spec: EmbeddingSpec, *, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.spec = spec
        self.batch_size = batch_size

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """Search queries, shape ``(len(texts), dim)``."""
        return self._embed_all(texts, is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        """Stored texts (messages, memories), shape ``(len(texts), dim)``."""
        return self._embed_all(texts, is_query=False)

    def embed_query(self, text: str) -> FloatArray:
        """One query, shape ``(dim,)``."""
        row: FloatArray = self.embed_queries([text])[0]
        return row

    def expect_query(self, spare: int = 1) -> None:  # noqa: B027 - only a backend sized by the load needs it
        """A query is about to be embedded on another thread while the caller sends other work
        (a search's statements that need no vector): a backend that sizes its work by the
        machine's load looks at it now, before that work keeps a core busy, and leaves
        ``spare`` cores to it."""

    def plan_query(
        self, text: str, work_ms: Mapping[int, float], after_ms: Mapping[int, float] | None = None
    ) -> int | None:
        """As :meth:`expect_query`, for the query ``text`` beside the caller's work (a search's
        first statements): ``work_ms`` is what that work lately took beside a query on each
        thread count, ``after_ms`` what the caller's work left once the query was in took after
        it (the rest of a search). A backend that sizes its work by the machine's load takes
        every free core when the whole is then done sooner, sharing one, else leaves the work a
        core. Returns the threads the query will get (``None``: a backend that does not embed
        on this machine's cores)."""
        self.expect_query()
        return None

    def token_estimate(self, chars: int) -> int:
        """Roughly how many tokens the model reads for a passage of ``chars`` characters (no
        tokenizer call: about 3 characters a token, the prefix and special tokens included).
        The Cold Path sizes its batches with it."""
        return chars // 3 + 4

    def close(self) -> None:  # noqa: B027 - backends without resources need not override it
        """Release threads, models and connections; the embedder is unusable afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @abstractmethod
    def _embed_batch(self, texts: list[str], *, is_query: bool) -> FloatArray:
        """At most ``batch_size`` cleaned texts → an ``(n, dim)`` array (normalising optional)."""

    def _embed_all(self, texts: Sequence[str], *, is_query: bool) -> FloatArray:
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not one str")
        items = [clean_text(text) for text in texts]
        dim = self.spec.dim
        if not items:
            return np.zeros((0, dim), dtype=np.float32)
        parts = [
            self._embed_batch(batch, is_query=is_query) for batch in batched(items, self.batch_size)
        ]
        out = np.concatenate(parts).astype(np.float32, copy=False)
        if out.shape != (len(items), dim):
            raise EmbeddingUnavailableError(
                f"{self.spec.model} returned an array of shape {out.shape} "
                f"for {len(items)} texts of dimension {dim}"
            )
        if not np.isfinite(out).all():
            raise EmbeddingUnavailableError(f"{self.spec.model} returned non-finite values")
        return normalize_rows(out)


def clean_text(text: str) -> str:
    """Text that encodes as UTF-8 (lone surrogates replaced) and has no NUL (C strings end)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", " ")


def normalize_rows(array: FloatArray) -> FloatArray:
    """Each row scaled to unit length; an all-zero row stays zero."""
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    result: FloatArray = (array / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return result


def batched(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive slices of at most ``size`` items (``itertools.batched`` is Python 3.12+)."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
