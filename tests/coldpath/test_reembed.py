"""``reembed``: every vector rebuilt for a new model and dimension, swapped in atomically."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from agents_memory.cli.coldpath import reembed
from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.coldpath.reembed import run_reembed
from agents_memory.config import Settings
from agents_memory.embeddings import create_embedder
from agents_memory.store import vectors
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories
from tests.coldpath.embedding_helpers import ScriptedEmbedder, add_rows, job_context
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.embeddings.fake_openai import FakeEmbeddingServer, fake_vector

TEXTS = [
    "the HNSW index needs a rebuild after the upgrade",
    "lunch plans for friday",
    "postgres advisory locks for the singleton worker",
    "the capture daemon watches transcripts",
] + [f"filler message {i}" for i in range(30)]


@pytest.fixture
def small_server() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer(dim=8)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def embedded_pool(settings: Settings, conn: psycopg.Connection[Any]) -> list[int]:
    """Rows with 384-dim vectors of the stamped model."""
    ids = add_rows(conn, TEXTS)
    EmbedderJob().run(job_context(conn, settings, ScriptedEmbedder(), drain=True))
    return ids


def eight_dim_settings(make_settings: Any, db_url: str, server: FakeEmbeddingServer) -> Settings:
    result: Settings = make_settings(
        database_url=db_url,
        embedding_backend="openai",
        embedding_model="fake-8",
        embedding_dim=8,
        embedding_base_url=server.base_url,
    )
    return result


def test_reembed_to_another_dimension_rebuilds_every_vector_and_search_still_works(
    make_settings: Any,
    db_url: str,
    small_server: FakeEmbeddingServer,
    embedded_pool: list[int],
    conn: psycopg.Connection[Any],
) -> None:
    settings = eight_dim_settings(make_settings, db_url, small_server)
    result = CliRunner().invoke(reembed, ["--yes"], obj=settings)
    assert result.exit_code == 0, result.output
    assert f"re-embedded {len(TEXTS)} rows with fake-8 (8 dims)" in result.output
    assert "rows/s" in result.output

    status = vectors.vector_status(conn)
    assert (status.model, status.column_dim) == ("fake-8", 8)
    assert vectors.reembed_target(conn) is None
    counts = conn.execute(
        "SELECT count(*) FILTER (WHERE embedding IS NULL),"
        " count(*) FILTER (WHERE embedding_model = 'fake-8') FROM memory"
    ).fetchone()
    assert counts == (0, len(TEXTS))
    indexes = {
        r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memory'")
    }
    assert {"memory_embedding_hnsw", "memory_unembedded", "memory_embed_claim_time"} <= indexes
    assert not {"memory_embedding_new_hnsw", "memory_reembed_todo"} & indexes

    target = TEXTS[2]
    query = fake_vector("fake-8", target, 8)  # what the endpoint gave that row
    query = query / np.linalg.norm(query)
    uid = ensure_user(conn, "tester")
    found = search_memories(
        conn,
        uid,
        query="singleton",
        query_vector=query,
        filters=SearchFilters(limit=5),
        tuning=SearchTuning(),
    )
    assert found.vector_used
    assert found.hits[0].message == target
    assert found.hits[0].why.vector_rank == 1


def test_same_model_and_dimension_is_nothing_to_do_unless_forced(
    settings: Settings, embedded_pool: list[int], conn: psycopg.Connection[Any]
) -> None:
    runner = CliRunner()
    local = settings.model_copy(update={"embedding_backend": "local"})
    result = runner.invoke(reembed, ["--yes"], obj=local)
    assert result.exit_code == 0
    assert "nothing to do" in result.output
    assert "--force" in result.output


def test_force_rebuilds_with_the_same_model(
    make_settings: Any, db_url: str, embedded_pool: list[int], conn: psycopg.Connection[Any]
) -> None:
    server = FakeEmbeddingServer(dim=TEST_DIM)
    server.start()
    try:
        settings = make_settings(
            database_url=db_url,
            embedding_backend="openai",
            embedding_model=TEST_MODEL,
            embedding_dim=TEST_DIM,
            embedding_base_url=server.base_url,
        )
        result = CliRunner().invoke(reembed, ["--yes", "--force"], obj=settings)
        assert result.exit_code == 0, result.output
        assert len(server.requests) >= 1
    finally:
        server.stop()
    assert f"re-embedded {len(TEXTS)} rows" in result.output
    assert vectors.vector_status(conn).column_dim == TEST_DIM


def test_without_yes_it_asks_first(
    make_settings: Any, db_url: str, small_server: FakeEmbeddingServer, embedded_pool: list[int]
) -> None:
    settings = eight_dim_settings(make_settings, db_url, small_server)
    result = CliRunner().invoke(reembed, [], obj=settings, input="n\n")
    assert result.exit_code == 1
    assert f"Rebuild {len(TEXTS)} vectors" in result.output
    assert small_server.requests == []


def test_an_interrupted_reembed_resumes_where_it_stopped(
    make_settings: Any,
    db_url: str,
    small_server: FakeEmbeddingServer,
    embedded_pool: list[int],
    db_conn_autocommit: psycopg.Connection[Any],
) -> None:
    settings = eight_dim_settings(make_settings, db_url, small_server)
    embedder = create_embedder(settings)
    assert embedder is not None
    with embedder:
        # first run: the endpoint dies after two batches (a 400 is not retried)
        calls = {"n": 0}

        def progress(done: int, total: int) -> None:
            calls["n"] += 1
            if calls["n"] == 2:
                small_server.fail_with.extend([400])

        with pytest.raises(Exception, match="HTTP 400"):
            run_reembed(db_conn_autocommit, embedder, batch_size=10, progress=progress)
        assert vectors.reembed_target(db_conn_autocommit) == ("fake-8", 8)
        assert vectors.reembed_remaining(db_conn_autocommit) == len(TEXTS) - 20
        # search meanwhile still runs on the old vectors
        assert vectors.vector_status(db_conn_autocommit).column_dim == TEST_DIM
        before = len(small_server.requests)
        result = run_reembed(db_conn_autocommit, embedder, batch_size=10)
    assert result.embedded == len(TEXTS) - 20
    assert len(small_server.requests) - before == 2
    assert vectors.vector_status(db_conn_autocommit).column_dim == 8


def test_a_row_edited_during_the_reembed_is_left_for_the_cold_path(
    make_settings: Any,
    db_url: str,
    small_server: FakeEmbeddingServer,
    embedded_pool: list[int],
    db_conn_autocommit: psycopg.Connection[Any],
) -> None:
    conn = db_conn_autocommit
    edited = embedded_pool[0]
    vectors.begin_reembed(conn, "fake-8", 8)
    todo = vectors.reembed_todo(conn, after_id=0, limit=1000)
    scripted = ScriptedEmbedder(dim=8, model="fake-8")
    from agents_memory.embeddings import to_halfvec

    matrix = scripted.embed_passages([text for _, text, _ in todo])
    vectors.write_reembed_vectors(
        conn,
        [(i, digest, to_halfvec(row)) for (i, _, digest), row in zip(todo, matrix, strict=True)],
        "fake-8",
    )
    uuid = conn.execute("SELECT external_uuid FROM memory WHERE id = %s", (edited,)).fetchone()
    assert uuid is not None
    uid = ensure_user(conn, "tester")
    insert_memories(
        conn,
        uid,
        [NewMemory("claude-code", "user", "rewritten text", external_uuid=uuid[0])],
        has_vector=True,
    )
    vectors.build_reembed_index(conn)
    left = vectors.finish_reembed(conn, "fake-8", 8)
    assert left == 1
    row = conn.execute(
        "SELECT embedding IS NULL, embedding_model FROM memory WHERE id = %s", (edited,)
    ).fetchone()
    assert row == (True, None)


@pytest.fixture
def db_conn_autocommit(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    from agents_memory.store.database import register_types

    with psycopg.connect(db_url, autocommit=True) as conn:
        register_types(conn)
        yield conn


def test_a_reembed_embeds_a_turn_after_the_turn_before_it_like_the_cold_path(
    db_conn_autocommit: psycopg.Connection[Any],
) -> None:
    conn = db_conn_autocommit
    uid = ensure_user(conn, "tester")
    t0 = datetime(2030, 1, 1, tzinfo=UTC)
    rows = [
        NewMemory("codex", "user", "which port does it use?", session_id="s", message_at=t0),
        NewMemory("codex", "assistant", "5433.", session_id="s", message_at=t0 + timedelta(1)),
    ]
    ids = sorted(insert_memories(conn, uid, rows, has_vector=True).ids)
    vectors.begin_reembed(conn, "fake-8", 8)
    todo = {
        i: (text, digest) for i, text, digest in vectors.reembed_todo(conn, after_id=0, limit=9)
    }
    assert todo[ids[0]][0] == "which port does it use?"
    assert todo[ids[1]][0] == "which port does it use?\n5433."
    assert todo[ids[1]][1] == hashlib.md5(b"5433.").hexdigest()  # the edit check is on the row
