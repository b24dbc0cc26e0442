"""The fresh lane: live turns are embedded beside a backlog batch that is still under way."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.coldpath.fresh import FRESH_WITHIN
from agents_memory.coldpath.worker import ColdPathWorker
from agents_memory.store import database
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.coldpath.embedding_helpers import (
    ScriptedEmbedder,
    add_rows,
    count_embedded,
    job_context,
    wait_until,
)
from tests.coldpath.test_worker import GatedEmbedder, has_vector


@pytest.fixture
def watch(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection for watching the database while workers run."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        yield conn


def add_history(live: Any, n: int, prefix: str = "imported turn") -> None:
    """``n`` rows of a month-old session, captured now (an import of history)."""
    uid = ensure_user(live, "tester")
    old = datetime.now(UTC) - timedelta(days=30)
    rows = [
        NewMemory("claude-code", "user", f"{prefix} {i}", message_at=old + timedelta(seconds=i),
                  external_uuid=f"{prefix}-{i}")
        for i in range(n)
    ]  # fmt: skip
    insert_memories(live, uid, rows, has_vector=True)


def _serve(make_settings: Any, db_url: str, backlog: Any, fresh: Any) -> ColdPathWorker:
    settings = make_settings(
        database_url=db_url,
        cold_path_interval_sec=60,
        cold_path_warmup_sec=0,
        cold_path_embed_batch_size=10,
    )
    return ColdPathWorker(
        settings,
        database.locate_database(settings),
        jobs=[EmbedderJob()],
        embedder=backlog,
        fresh_embedder=fresh,
    )


def test_a_live_turn_is_embedded_while_the_backlog_batch_is_still_under_way(
    make_settings: Any, db_url: str, watch: Any
) -> None:
    add_history(watch, 50)
    backlog, fresh = GatedEmbedder(), ScriptedEmbedder()
    worker = _serve(make_settings, db_url, backlog, fresh)
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        wait_until(lambda: backlog.waiting == 1)  # the first backlog batch is stuck
        fresh.batches.clear()  # the lane looked for live turns when it started
        (turn,) = add_rows(watch, ["a turn captured just now"])
        watch.execute("SELECT pg_notify('agents_memory_new', '1')")
        watch.commit()
        wait_until(lambda: has_vector(watch, turn))
        assert count_embedded(watch) == 1  # the backlog batch has not finished
        assert fresh.batches[-1] == ["a turn captured just now"]
        assert worker.fresh_lane is not None and worker.fresh_lane.embedded == 1
    finally:
        worker.request_stop()
        backlog.permits.release(100)
        thread.join(timeout=10)
        worker.close()
    assert not thread.is_alive()


def test_the_fresh_lane_leaves_imported_history_to_the_backlog_job(
    conn: Any, settings: Any, watch: Any
) -> None:
    """Rows written long ago (a backfill) are not live turns, even when captured just now."""
    add_history(watch, 5)
    (turn,) = add_rows(watch, ["a turn captured just now"])
    fresh = ScriptedEmbedder()
    ctx = job_context(conn, settings, fresh, batch_size=10)
    job = EmbedderJob(fresh_within=FRESH_WITHIN)
    assert job.run(ctx).processed == 1
    assert job.run(ctx).processed == 0  # nothing live is left; the history waits
    assert fresh.batches == [["a turn captured just now"]]
    assert has_vector(watch, turn)
    assert count_embedded(watch) == 1
