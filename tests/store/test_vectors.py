from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from agents_memory.errors import EmbeddingMismatchError
from agents_memory.store import database, migrate, vectors
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories


def test_pool_connections_know_the_halfvec_type(settings: Any, db_url: str) -> None:
    db = database.locate_database(settings)
    pool = database.create_pool(db, settings)
    try:
        with pool.connection() as conn:
            uid = ensure_user(conn, "tester")
            insert_memories(conn, uid, [NewMemory("grok", "user", "hi", external_uuid="v1")])
            vec = np.linspace(0, 1, 384, dtype=np.float32)
            conn.execute("UPDATE memory SET embedding = %s", (vectors_halfvec(vec),))
            back = conn.execute("SELECT embedding FROM memory").fetchone()
            assert back is not None
            assert np.allclose(back[0].to_numpy(), vec, atol=1e-2)
    finally:
        pool.close()


def vectors_halfvec(values: np.ndarray[Any, Any]) -> Any:
    from pgvector import HalfVector

    return HalfVector(values)


def test_a_different_embedding_model_is_refused_until_reembed(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        status = vectors.vector_status(conn)
        assert status.enabled and status.column_dim == 384
        assert vectors.ensure_embedding_column(conn, status.model or "", 384).enabled
        with pytest.raises(EmbeddingMismatchError, match="reembed"):
            vectors.ensure_embedding_column(conn, "text-embedding-3-small", 1536)


def test_without_pgvector_the_store_works_full_text_only(
    pg_server: Any, make_settings: Any
) -> None:
    """A role that may not create the (untrusted) vector extension: full-text only."""
    _server, info = pg_server
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS novec WITH (FORCE)")
        admin.execute("DROP ROLE IF EXISTS plain_user")
        admin.execute("CREATE ROLE plain_user LOGIN")
        admin.execute("CREATE DATABASE novec OWNER plain_user")
    url = info.conninfo("novec").replace("postgres@", "plain_user@")
    try:
        settings = make_settings(database_url=url)
        db = database.open_database(
            settings, embedding=database.EmbeddingSpec("multilingual-e5-small-q4", 384)
        )
        with database.connect(db) as conn:
            status = vectors.vector_status(conn)
            assert status.available and not status.enabled
            assert migrate.current_version(conn) == migrate.latest_version()
            uid = ensure_user(conn, "tester")
            counts = insert_memories(
                conn, uid, [NewMemory("grok", "user", "full text only works", external_uuid="ft")]
            )
            assert counts.inserted == 1
            hit = conn.execute(
                "SELECT count(*) FROM memory WHERE fts @@ to_tsquery('agents_memory', 'work')"
            ).fetchone()
            assert hit == (1,)
        from agents_memory.ops.doctor import run_doctor

        report = run_doctor(settings)
        assert not report.healthy
        assert any("pgvector is not available" in p for p in report.problems)
        report = run_doctor(make_settings(database_url=url, embedding_backend="none"))
        assert report.healthy and any("full-text only" in n for n in report.notes)
        # This role may not read shared_preload_libraries: unknown, not an error.
        assert report.cache_prewarm is None
    finally:
        with psycopg.connect(info.conninfo("postgres"), autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS novec WITH (FORCE)")
            admin.execute("DROP ROLE IF EXISTS plain_user")
