"""``reembed``: rebuild every vector with the configured model, then swap it in atomically.

1. ``memory.embedding_new halfvec(D)`` is added for the configured model (a meta row names the
   target, so the Cold Path embedder pauses and an interrupted run resumes where it stopped);
2. it is filled in batches by id, each row only if its text is unchanged since it was read;
3. its HNSW index is built ``CONCURRENTLY`` (capture keeps writing);
4. one short transaction drops the old column, renames the new one and its indexes, and stamps
   the new model. Rows edited during the run lose their (stale) new vector and are embedded
   again by the Cold Path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from agents_memory.errors import ReembedError
from agents_memory.store import vectors
from agents_memory.store.coldpath import coldqueue

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

MAX_INPUT_CHARS = 8000
MAX_PASSES = 5


@dataclass(frozen=True, slots=True)
class ReembedPlan:
    model: str
    dim: int
    old_model: str | None
    old_dim: int | None
    rows: int
    """Rows still to embed."""
    resume: bool
    nothing_to_do: str | None = None
    """Why no work is needed (same model and dimension), or ``None``."""


@dataclass(frozen=True, slots=True)
class ReembedResult:
    model: str
    dim: int
    embedded: int
    seconds: float
    left_without_vector: int

    @property
    def rate(self) -> float:
        return self.embedded / max(self.seconds, 1e-6)


def plan_reembed(
    conn: psycopg.Connection[Any], model: str, dim: int, *, force: bool = False
) -> ReembedPlan:
    """What a reembed to ``model``/``dim`` would do (``conn`` in autocommit mode)."""
    status = vectors.vector_status(conn)
    if status.installed_version is None:
        raise ReembedError(
            "pgvector is not installed in this database: there are no vectors to rebuild"
        )
    target = vectors.reembed_target(conn)
    resume = target == (model, dim)
    same = status.model in (None, model) and status.column_dim == dim
    rows = coldqueue.count_memories(conn)
    if resume:
        rows = vectors.reembed_remaining(conn)
    nothing = None
    if status.column_dim is None:
        nothing = "no vectors are stored yet"
    elif same and not resume and not force:
        nothing = (
            f"the stored vectors already come from {model} ({dim} dims); "
            "use --force to rebuild them anyway"
        )
    return ReembedPlan(model, dim, status.model, status.column_dim, rows, resume, nothing)


def run_reembed(
    conn: psycopg.Connection[Any],
    embedder: Embedder,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> ReembedResult:
    """Rebuild every vector with ``embedder`` and swap them in (``conn`` in autocommit)."""
    from agents_memory.embeddings import to_halfvec

    if not conn.autocommit:
        raise ValueError("run_reembed() needs an autocommit connection")
    model, dim = embedder.spec.model, embedder.spec.dim
    status = vectors.vector_status(conn)
    if status.column_dim is None:
        vectors.ensure_embedding_column(conn, model, dim)
        return ReembedResult(model, dim, 0, 0.0, coldqueue.count_unembedded(conn))
    resumed = vectors.begin_reembed(conn, model, dim)
    if resumed:
        log.info("resuming the unfinished reembed to %s", model)
    total = vectors.reembed_remaining(conn)
    started = time.monotonic()
    done = 0
    for _ in range(MAX_PASSES):
        after = 0
        while todo := vectors.reembed_todo(conn, after_id=after, limit=batch_size):
            matrix = embedder.embed_passages([text[:MAX_INPUT_CHARS] for _, text, _ in todo])
            triples = [
                (memory_id, digest, to_halfvec(row))
                for (memory_id, _, digest), row in zip(todo, matrix, strict=True)
            ]
            with conn.transaction():
                vectors.write_reembed_vectors(conn, triples, model)
            done += len(todo)
            after = todo[-1][0]
            if progress is not None:
                progress(done, total)
        if vectors.reembed_remaining(conn) == 0:
            break
    vectors.build_reembed_index(conn)
    left = vectors.finish_reembed(conn, model, dim)
    return ReembedResult(model, dim, done, time.monotonic() - started, left)
