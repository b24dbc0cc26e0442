"""Batch inserts go through a session-local staging table (binary COPY, then one INSERT …
SELECT): batches must not leak into each other, and any connection mode must work."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agents_memory.store.memories import (
    NewMemory,
    count_memories,
    ensure_user,
    insert_memories,
    memories_by_uuid,
)


def _rows(keys: range, text: str = "turn") -> list[NewMemory]:
    return [
        NewMemory("codex-cli", "user", f"{text} {i}", external_uuid=f"k:{i}", session_id="s")
        for i in keys
    ]


def test_two_batches_in_one_transaction_store_only_their_own_rows(
    conn: psycopg.Connection[Any],
) -> None:
    uid = ensure_user(conn, "tester")
    first = insert_memories(conn, uid, _rows(range(0, 30)))
    second = insert_memories(conn, uid, _rows(range(30, 40)))
    conn.commit()
    assert (first.inserted, second.inserted, second.skipped) == (30, 10, 0)
    ids = {r.id for r in memories_by_uuid(conn, [f"k:{i}" for i in range(30, 40)])}
    assert set(second.ids) == ids


def test_batch_in_autocommit_mode_is_stored(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        uid = ensure_user(conn, "tester")
        counts = insert_memories(conn, uid, _rows(range(5)))
        again = insert_memories(conn, uid, _rows(range(5)))
        assert (counts.inserted, again.skipped) == (5, 5)
        assert count_memories(conn).total == 5


def test_batch_after_a_rolled_back_first_batch_is_stored(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    conn.commit()
    insert_memories(conn, uid, _rows(range(3)))
    conn.rollback()  # the staging table created in that transaction is gone with it
    counts = insert_memories(conn, uid, _rows(range(3, 6)))
    conn.commit()
    assert counts.inserted == 3
    assert count_memories(conn).total == 3


def test_large_batch_with_a_few_rewritten_messages_keeps_their_history(
    conn: psycopg.Connection[Any],
) -> None:
    uid = ensure_user(conn, "tester")
    insert_memories(conn, uid, _rows(range(600)))
    conn.commit()
    rewritten = [
        *_rows(range(600, 1200)),
        *_rows(range(0, 3), text="rewritten"),
        *_rows(range(3, 600)),
    ]
    counts = insert_memories(conn, uid, rewritten)
    conn.commit()
    assert (counts.inserted, counts.updated, counts.skipped) == (600, 3, 597)
    history = conn.execute(
        "SELECT m.external_uuid, h.old_message FROM memory_history h"
        " JOIN memory m ON m.id = h.memory_id ORDER BY 1"
    ).fetchall()
    assert history == [("k:0", "turn 0"), ("k:1", "turn 1"), ("k:2", "turn 2")]
    assert [r.message for r in memories_by_uuid(conn, ["k:0", "k:3"])] == ["rewritten 0", "turn 3"]


def test_naive_turn_time_is_taken_as_local_time(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    naive = datetime(2026, 3, 1, 12, 30)
    insert_memories(
        conn, uid, [NewMemory("grok", "user", "t", external_uuid="n", message_at=naive)]
    )
    [row] = memories_by_uuid(conn, ["n"])
    assert row.message_at == naive.astimezone()
