"""What a long-running reader of the memory holds for its life (the MCP server, the console):
settings, pool, user, embedder."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from psycopg_pool import ConnectionPool

from agents_memory.adapters import all_platforms
from agents_memory.config import Settings
from agents_memory.errors import AgentsMemoryError, EmbeddingMismatchError
from agents_memory.recall.pace import SearchPace
from agents_memory.store import database
from agents_memory.store.entry import owner_and_vectors

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ServerState:
    settings: Settings
    pool: ConnectionPool
    user_id: int
    has_vector: bool
    cwd: str | None = field(default_factory=os.getcwd)
    pace: SearchPace = field(default_factory=SearchPace)
    """What a search's first statements take here: its query's threads are chosen by it."""
    _embedder: Embedder | None = None
    _embedder_failed: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def captured_platforms(self) -> set[str]:
        return set(all_platforms(tuple(self.settings.capture_enabled_platforms or ())))

    def embedder(self) -> Embedder | None:
        """The embedding backend, created on first use; ``None`` when unavailable."""
        if not self.has_vector or self.settings.embedding_backend == "none":
            return None
        with self._lock:
            if self._embedder is None and self._embedder_failed is None:
                try:
                    from agents_memory.embeddings import create_embedder

                    self._embedder = create_embedder(self.settings, queries=True)
                except AgentsMemoryError as exc:
                    self._embedder_failed = str(exc)
                    log.warning("embeddings unavailable, full-text only: %s", exc)
            return self._embedder

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
        self.pool.close()


def open_state(settings: Settings) -> ServerState:
    from agents_memory.embeddings import embedding_spec

    mismatch: str | None = None
    try:
        db = database.open_database(settings, embedding=embedding_spec(settings))
    except EmbeddingMismatchError as exc:
        # Serve anyway: full-text search until `mcp-agents-memory reembed` has run.
        log.warning("%s; searching full-text only", exc)
        mismatch = str(exc)
        db = database.open_database(settings)
    pool = database.create_pool(db, settings)
    with pool.connection() as conn:
        user_id, vectors_ok = owner_and_vectors(conn, settings)
    has_vector = vectors_ok and mismatch is None
    return ServerState(
        settings=settings,
        pool=pool,
        user_id=user_id,
        has_vector=has_vector,
        _embedder_failed=mismatch,
    )
