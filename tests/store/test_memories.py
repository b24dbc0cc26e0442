from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.store.capture import cursors
from agents_memory.store.memories import (
    NewMemory,
    count_memories,
    ensure_user,
    insert_memories,
    memories_by_uuid,
    recent_memories,
)


def _rows(n: int, prefix: str = "u") -> list[NewMemory]:
    return [
        NewMemory(
            "codex-cli",
            "user" if i % 2 == 0 else "assistant",
            f"turn number {i}",
            external_uuid=f"{prefix}:{i}",
            message_at=datetime(2026, 1, 1, 12, 0, i % 60, tzinfo=UTC),
            session_id="s1",
            device_name="dev",
        )
        for i in range(n)
    ]


def test_batch_insert_is_idempotent_on_external_uuid(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    first = insert_memories(conn, uid, _rows(50))
    second = insert_memories(conn, uid, _rows(50))
    conn.commit()
    assert (first.inserted, first.updated, first.skipped) == (50, 0, 0)
    assert (second.inserted, second.updated, second.skipped) == (0, 0, 50)
    assert count_memories(conn).total == 50


def test_duplicate_ids_within_one_batch_keep_the_last_text(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    rows = [
        NewMemory("gemini-cli", "assistant", "draft", external_uuid="g:1"),
        NewMemory("gemini-cli", "assistant", "final answer", external_uuid="g:1"),
    ]
    counts = insert_memories(conn, uid, rows)
    assert (counts.inserted, counts.skipped) == (1, 1)
    [row] = memories_by_uuid(conn, ["g:1"])
    assert row.message == "final answer"


def test_rewritten_message_replaces_text_keeps_history_and_requeues(
    conn: psycopg.Connection[Any],
) -> None:
    uid = ensure_user(conn, "tester")
    insert_memories(
        conn,
        uid,
        [NewMemory("gemini-cli", "assistant", "v1", external_uuid="g:2")],
        has_vector=True,
    )
    conn.execute("UPDATE memory SET tag_processed = true, embedding_model = 'm' WHERE true")
    again = insert_memories(
        conn,
        uid,
        [NewMemory("gemini-cli", "assistant", "v2", external_uuid="g:2")],
        has_vector=True,
    )
    assert (again.inserted, again.updated, again.skipped) == (0, 1, 0)
    row = conn.execute(
        "SELECT message, tag_processed, embedding_model, embedding FROM memory"
        " WHERE external_uuid = 'g:2'"
    ).fetchone()
    assert row == ("v2", False, None, None)
    history = conn.execute("SELECT old_message, changed_by FROM memory_history").fetchall()
    assert history == [("v1", "capture")]


def test_missing_timestamp_defaults_to_now(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    insert_memories(conn, uid, [NewMemory("grok", "user", "no time", external_uuid="x")])
    [row] = memories_by_uuid(conn, ["x"])
    assert abs((row.message_at - datetime.now(UTC)).total_seconds()) < 60


def test_recent_rows_are_newest_first_by_turn_time(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    insert_memories(conn, uid, _rows(10))
    recent = recent_memories(conn, uid, limit=3)
    assert [r.message for r in recent] == ["turn number 9", "turn number 8", "turn number 7"]
    assert recent_memories(conn, uid, platform="claude-code") == []


def test_subagent_role_is_normalized(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    insert_memories(
        conn,
        uid,
        [
            NewMemory(
                "claude-code",
                "assistant",
                "x",
                external_uuid="s:1",
                subagent=True,
                subagent_model="m",
                subagent_role="  Explore ",
            ),
            NewMemory(
                "claude-code",
                "assistant",
                "y",
                external_uuid="s:2",
                subagent=True,
                subagent_model="m",
                subagent_role="   ",
            ),
        ],
    )
    roles = dict(conn.execute("SELECT external_uuid, subagent_role FROM memory").fetchall())
    assert roles == {"s:1": "explore", "s:2": None}


def test_non_subagent_rows_cannot_carry_subagent_fields(conn: psycopg.Connection[Any]) -> None:
    uid = ensure_user(conn, "tester")
    with pytest.raises(psycopg.errors.CheckViolation):
        insert_memories(
            conn,
            uid,
            [NewMemory("claude-code", "assistant", "x", subagent=False, subagent_model="m")],
        )


def test_cursor_advances_in_the_same_transaction_as_its_rows(
    conn: psycopg.Connection[Any],
) -> None:
    uid = ensure_user(conn, "tester")
    conn.commit()
    cur = cursors.lock_cursor(conn, "codex-cli", "dev", "/t/a.jsonl")
    insert_memories(conn, uid, _rows(5))
    cursors.save_cursor(conn, cursors.Cursor(**{**_fields(cur), "offset": 500}), rows=5)
    conn.rollback()
    assert count_memories(conn).total == 0
    after = cursors.get_cursor(conn, "dev", "/t/a.jsonl")
    assert after is None or after.offset == 0

    cur = cursors.lock_cursor(conn, "codex-cli", "dev", "/t/a.jsonl")
    insert_memories(conn, uid, _rows(5))
    cursors.save_cursor(
        conn,
        cursors.Cursor(**{**_fields(cur), "offset": 500, "state": {"model": "gpt"}}),
        rows=5,
        unknown={"world_state": 2},
    )
    conn.commit()
    saved = cursors.get_cursor(conn, "dev", "/t/a.jsonl")
    assert saved is not None
    assert (saved.offset, saved.rows_captured, saved.state) == (500, 5, {"model": "gpt"})
    assert saved.unknown_kinds == {"world_state": 2}
    assert saved.last_capture_at is not None
    assert count_memories(conn).total == 5


def test_a_locked_cursor_makes_a_second_writer_wait(db_url: str) -> None:
    with psycopg.connect(db_url) as one, psycopg.connect(db_url) as two:
        cursors.lock_cursor(one, "grok", "dev", "/t/b.jsonl")
        one.commit()
        cursors.lock_cursor(one, "grok", "dev", "/t/b.jsonl")
        two.execute("SET lock_timeout = '200ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            cursors.lock_cursor(two, "grok", "dev", "/t/b.jsonl")
        two.rollback()
        one.commit()
        assert cursors.lock_cursor(two, "grok", "dev", "/t/b.jsonl").path == "/t/b.jsonl"


def _fields(cursor: cursors.Cursor) -> dict[str, Any]:
    return {name: getattr(cursor, name) for name in cursors.Cursor.__dataclass_fields__}
