"""Which embedding model the configuration selects (the backends themselves come with search).

The model name and dimension are stamped in the database (``meta``) the first time vectors are
stored; a different configured model is refused until ``mcp-agents-memory reembed`` runs.
"""

from __future__ import annotations

from agents_memory.config import Settings
from agents_memory.errors import ConfigError
from agents_memory.store.database import EmbeddingSpec

LOCAL_MODEL = "multilingual-e5-small-q4"
LOCAL_DIM = 384


def embedding_spec(settings: Settings) -> EmbeddingSpec | None:
    """The configured model and its dimension; ``None`` for ``EMBEDDING_BACKEND=none``."""
    if settings.embedding_backend == "none":
        return None
    if settings.embedding_backend == "local":
        return EmbeddingSpec(settings.embedding_model or LOCAL_MODEL, LOCAL_DIM)
    if not settings.embedding_model or not settings.embedding_dim:
        raise ConfigError(
            "EMBEDDING_BACKEND=openai needs EMBEDDING_MODEL and EMBEDDING_DIM "
            "(and EMBEDDING_BASE_URL unless it is OpenAI itself)"
        )
    return EmbeddingSpec(settings.embedding_model, settings.embedding_dim)
