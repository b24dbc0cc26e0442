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

from agents_memory.errors import EmbeddingMismatchError, first_line
from agents_memory.store import meta
from agents_memory.store.passages import PREVIOUS_SQL, passage_text

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


def stored_model(conn: psycopg.Connection[Any]) -> str | None:
    """The model the stored vectors come from (``None``: none stamped yet): what
    :func:`vector_status` says of it, in one cheap lookup (a search asks it every time)."""
    return meta.get(conn, META_MODEL)


def try_install_extension(conn: psycopg.Connection[Any]) -> bool:
    """``CREATE EXTENSION vector`` if possible; False (and nothing changed) if not."""
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        log.warning("pgvector unavailable, search runs full-text only: %s", first_line(exc))
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
        if not _has_claim_index(conn):
            with conn.transaction():
                ensure_claim_index(conn)
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
        ensure_claim_index(conn)
        _stamp(conn, model, dim)
    return vector_status(conn)


CLAIM_INDEX = "memory_embed_claim_time"
CLAIM_INDEX_SQL = (
    f"CREATE INDEX IF NOT EXISTS {CLAIM_INDEX} ON memory (is_active, message_at, id)"
    " WHERE embedding IS NULL"
)
"""The Cold Path embedder's claim order (active first, the newest turn first: imported history
by when it was said, not when it was imported) as an index scan backwards: the claim reads
``limit`` index entries instead of sorting the whole backlog."""


def ensure_claim_index(conn: psycopg.Connection[Any]) -> None:
    """The index behind the embedder's claim (a partial index: it holds only rows without a
    vector, so it is small once the backlog is done); the older id-ordered one goes."""
    conn.execute(CLAIM_INDEX_SQL)
    conn.execute("DROP INDEX IF EXISTS memory_embed_claim")


def _stamp(conn: psycopg.Connection[Any], model: str, dim: int) -> None:
    meta.put(conn, META_MODEL, model)
    meta.put(conn, META_DIM, str(dim))


# --- reembed: a second column filled in batches, then one swap -------------------------------
META_REEMBED = "reembed_target"
"""``"<model>\\t<dim>"`` while a reembed is under way (the Cold Path embedder pauses)."""
NEW_COLUMN = "embedding_new"


def reembed_target(conn: psycopg.Connection[Any]) -> tuple[str, int] | None:
    """The model and dimension an unfinished reembed is building, or ``None``."""
    value = meta.get(conn, META_REEMBED)
    if value is None:
        return None
    model, _, dim = value.rpartition("\t")
    return (model, int(dim)) if model and dim.isdigit() else None


def _has_claim_index(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (CLAIM_INDEX,)).fetchone()
    return bool(row and row[0])


def _new_column_dim(conn: psycopg.Connection[Any]) -> int | None:
    row = conn.execute(
        "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass('memory')"
        " AND a.attname = %s AND NOT a.attisdropped",
        (NEW_COLUMN,),
    ).fetchone()
    return int(row[0]) if row is not None and int(row[0]) > 0 else None


def begin_reembed(conn: psycopg.Connection[Any], model: str, dim: int) -> bool:
    """Prepare ``memory.embedding_new halfvec(dim)`` for ``model``; resumes an unfinished run
    for the same target (returns True) and discards one for another target."""
    resumed = reembed_target(conn) == (model, dim) and _new_column_dim(conn) == dim
    if resumed:
        return True
    with conn.transaction():
        conn.execute(
            sql.SQL("ALTER TABLE memory DROP COLUMN IF EXISTS {}").format(
                sql.Identifier(NEW_COLUMN)
            )
        )
        conn.execute(
            sql.SQL("ALTER TABLE memory ADD COLUMN {} halfvec({})").format(
                sql.Identifier(NEW_COLUMN), sql.Literal(dim)
            )
        )
        conn.execute("CREATE INDEX memory_reembed_todo ON memory (id) WHERE embedding_new IS NULL")
        meta.put(conn, META_REEMBED, f"{model}\t{dim}")
    return False


def reembed_todo(
    conn: psycopg.Connection[Any], *, after_id: int, limit: int
) -> list[tuple[int, str, str]]:
    """The next rows (by id) whose new vector is still missing: ``(id, text to embed, md5 of
    the message)``; the text is the message after the end of the turn before it
    (:mod:`agents_memory.store.passages`)."""
    rows = conn.execute(
        "SELECT m.id, m.message, md5(m.message), " + PREVIOUS_SQL + " FROM memory m"
        " WHERE m.embedding_new IS NULL AND m.id > %s ORDER BY m.id LIMIT %s",
        (after_id, limit),
    ).fetchall()
    return [(int(r[0]), passage_text(str(r[1]), r[3]), str(r[2])) for r in rows]


def reembed_remaining(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM memory WHERE embedding_new IS NULL").fetchone()
    return int(row[0]) if row else 0


def write_reembed_vectors(
    conn: psycopg.Connection[Any],
    vectors: list[tuple[int, str, Any]],
    model: str,
) -> None:
    """Store ``(id, md5 of the text, halfvec)`` triples in the new column, each only if the
    row's text is still the one embedded; ``embedding_model`` becomes the new model, so a later
    edit (which resets it) marks the new vector stale for :func:`finish_reembed`."""
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE memory SET embedding_new = %s, embedding_model = %s"
            " WHERE id = %s AND md5(message) = %s",
            [(vector, model, memory_id, digest) for memory_id, digest, vector in vectors],
        )


def build_reembed_index(conn: psycopg.Connection[Any]) -> None:
    """The new column's HNSW index, built ``CONCURRENTLY`` so capture keeps writing meanwhile
    (``conn`` must be in autocommit mode); an invalid leftover of an interrupted build is
    dropped and rebuilt."""
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid ="
        " to_regclass('memory_embedding_new_hnsw')"
    ).fetchone()
    if row is not None and row[0]:
        return
    if row is not None:
        conn.execute("DROP INDEX CONCURRENTLY IF EXISTS memory_embedding_new_hnsw")
    conn.execute(
        "CREATE INDEX CONCURRENTLY memory_embedding_new_hnsw ON memory"
        " USING hnsw (embedding_new halfvec_cosine_ops) WHERE embedding_new IS NOT NULL"
    )


def finish_reembed(conn: psycopg.Connection[Any], model: str, dim: int) -> int:
    """Swap the new column in, in one transaction: vectors made stale by edits during the
    run are dropped (the Cold Path embeds those rows again), the old column and its indexes
    go, the new ones take their names, and the stamp names the new model. Returns the number
    of rows left without a vector."""
    with conn.transaction():
        conn.execute("LOCK TABLE memory IN ACCESS EXCLUSIVE MODE")
        conn.execute(
            "UPDATE memory SET embedding_new = NULL"
            " WHERE embedding_new IS NOT NULL AND embedding_model IS DISTINCT FROM %s",
            (model,),
        )
        conn.execute(
            "UPDATE memory SET embedding_model = NULL"
            " WHERE embedding_new IS NULL AND embedding_model IS NOT NULL"
        )
        conn.execute("ALTER TABLE memory DROP COLUMN IF EXISTS embedding")
        conn.execute("ALTER TABLE memory RENAME COLUMN embedding_new TO embedding")
        conn.execute("ALTER INDEX memory_reembed_todo RENAME TO memory_unembedded")
        conn.execute("ALTER INDEX memory_embedding_new_hnsw RENAME TO memory_embedding_hnsw")
        meta.drop(conn, META_REEMBED)
        ensure_claim_index(conn)
        _stamp(conn, model, dim)
        row = conn.execute("SELECT count(*) FROM memory WHERE embedding IS NULL").fetchone()
    return int(row[0]) if row else 0
