"""The optional pgvector part of the schema and the embedding model stamp.

pgvector is optional at run time: on a server without the ``vector`` extension (or a role that
may not create it) the store works full-text only and ``doctor`` says so. When it is there,
``memory.embedding`` is ``halfvec(D)`` with an HNSW cosine index, and the ``meta`` table records
which model produced the vectors; a different model is refused until ``reembed`` runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from agents_memory.errors import EmbeddingMismatchError

log = logging.getLogger(__name__)

META_MODEL = "embedding_model"
META_DIM = "embedding_dim"


@dataclass(frozen=True, slots=True)
class VectorStatus:
    available: bool
    """The server ships the extension (``pg_available_extensions``)."""
    installed_version: str | None
    """The extension's version in this database, or ``None`` when not installed."""
    column_dim: int | None
    """``memory.embedding``'s dimension, or ``None`` when the column does not exist."""
    model: str | None
    """The stamped embedding model, or ``None``."""

    @property
    def enabled(self) -> bool:
        return self.installed_version is not None and self.column_dim is not None


def vector_status(conn: psycopg.Connection[Any]) -> VectorStatus:
    row = conn.execute(
        "SELECT (SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'vector'),"
        " (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
        " (SELECT a.atttypmod FROM pg_attribute a"
        "   WHERE a.attrelid = to_regclass('memory') AND a.attname = 'embedding'"
        "   AND NOT a.attisdropped),"
        " (SELECT value FROM meta WHERE key = %s)",
        (META_MODEL,),
    ).fetchone()
    assert row is not None
    dim = int(row[2]) if row[2] is not None and int(row[2]) > 0 else None
    return VectorStatus(bool(row[0]), row[1], dim, row[3])


def try_install_extension(conn: psycopg.Connection[Any]) -> bool:
    """``CREATE EXTENSION vector`` if possible; False (and nothing changed) if not."""
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        log.warning(
            "pgvector unavailable, search runs full-text only: %s", str(exc).strip().splitlines()[0]
        )
        return False
    return True


def ensure_embedding_column(conn: psycopg.Connection[Any], model: str, dim: int) -> VectorStatus:
    """Make sure vectors of ``model`` (``dim`` wide) can be stored.

    First use adds ``memory.embedding halfvec(dim)``, its HNSW index and the stamp. A stamp
    for another model or dimension raises :class:`EmbeddingMismatchError`.
    """
    status = vector_status(conn)
    if status.installed_version is None:
        if not status.available or not try_install_extension(conn):
            return vector_status(conn)
        status = vector_status(conn)
    if status.column_dim is not None:
        if status.model not in (None, model) or status.column_dim != dim:
            raise EmbeddingMismatchError(
                f"stored vectors come from {status.model or '?'} ({status.column_dim} dims), "
                f"but {model} ({dim} dims) is configured; run `mcp-agents-memory reembed` "
                "or configure the original model"
            )
        if status.model is None:
            _stamp(conn, model, dim)
            return vector_status(conn)
        return status
    with conn.transaction():
        conn.execute(
            sql.SQL("ALTER TABLE memory ADD COLUMN IF NOT EXISTS embedding halfvec({})").format(
                sql.Literal(dim)
            )
        )
        conn.execute(
            "CREATE INDEX IF NOT EXISTS memory_embedding_hnsw ON memory"
            " USING hnsw (embedding halfvec_cosine_ops) WHERE embedding IS NOT NULL"
        )
        conn.execute(
            "CREATE INDEX IF NOT EXISTS memory_unembedded ON memory (id) WHERE embedding IS NULL"
        )
        _stamp(conn, model, dim)
    return vector_status(conn)


def _stamp(conn: psycopg.Connection[Any], model: str, dim: int) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s), (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
        (META_MODEL, model, META_DIM, str(dim)),
    )
