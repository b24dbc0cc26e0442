"""Imported history gets its vectors newest first (by when a turn was said, not when it was
imported), and ``status`` says how long the vector backlog takes at the worker's measured pace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.coldpath.embedder import EmbedderJob
from agents_memory.coldpath.status import coldpath_status, duration_words
from agents_memory.config import Settings
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.capture.cli import memory_capture

from .embedding_helpers import ScriptedEmbedder, job_context

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def _rows(conn: psycopg.Connection[Any], texts: list[tuple[str, datetime]]) -> None:
    uid = ensure_user(conn, "tester")
    rows = [
        NewMemory("codex-cli", "user", text, external_uuid=f"eta-{text}", message_at=at)
        for text, at in texts
    ]
    insert_memories(conn, uid, rows, has_vector=True)
    conn.commit()


def test_imported_history_is_embedded_from_its_newest_turn(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    # an import reads this year's file first, then an older one: ids do not follow time
    _rows(conn, [(f"recent {i}", T0 + timedelta(minutes=i)) for i in range(20)])
    _rows(conn, [(f"old {i}", T0 - timedelta(days=300 - i)) for i in range(20)])
    embedder = ScriptedEmbedder()
    EmbedderJob(batch_tokens=None).run(job_context(conn, settings, embedder, batch_size=10))
    assert embedder.seen[:20] == [f"recent {i}" for i in range(19, -1, -1)]
    assert embedder.seen[20:] == [f"old {i}" for i in range(19, 7, -1)]


def _run(processed: int) -> coldqueue.JobReport:
    return coldqueue.JobReport("embedder", processed=processed)


def test_the_pace_is_measured_from_the_worker_s_own_ticks(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    _rows(conn, [(f"waiting {i}", T0) for i in range(1200)])
    assert coldpath_status(conn, settings).embed_eta == (
        "time left: not measured yet (the worker measures its pace as it embeds)"
    )
    start = datetime.now(UTC) - timedelta(minutes=2)
    # 100 rows in the first 10 s tick, 100 in the next, then 400: 10, 10, 40 rows/s, averaged
    # 10 -> 0.7 * 10 + 0.3 * 10 -> 0.7 * 10 + 0.3 * 40; the tick after a 20 minute gap
    # (the worker idled) measures nothing
    for seconds, done in ((0, 100), (10, 100), (20, 400), (30, 50), (1230, 0)):
        at = start + timedelta(seconds=seconds)
        coldqueue.record_run(conn, _run(done), now=at, device_name="d")
    conn.commit()
    status = coldpath_status(conn, settings)
    assert status.embed_rate is not None and abs(status.embed_rate - 19.0) < 1e-6
    assert status.embed_eta == "about 63 s left at 19.0 rows/s (the worker's recent pace)"


def test_status_prints_the_time_left(
    db_url: str, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    _rows(conn, [(f"waiting {i}", T0) for i in range(600)])
    start = datetime.now(UTC) - timedelta(minutes=1)
    coldqueue.record_run(conn, _run(20), now=start, device_name="d")
    coldqueue.record_run(conn, _run(20), now=start + timedelta(seconds=10), device_name="d")
    conn.commit()
    shown = memory_capture(tmp_path, db_url, "status", COLUMNS="200")
    words = " ".join(shown.stdout.split())
    assert "vectors: about 5 min left at 2.0 rows/s" in words, shown.stdout + shown.stderr


def test_durations_read_as_words() -> None:
    assert [duration_words(s) for s in (3, 80, 600, 5400, 12_000, 200_000)] == [
        "3 s",
        "80 s",
        "10 min",
        "1 h 30 min",
        "3 h 20 min",
        "2 days 7 h",
    ]
