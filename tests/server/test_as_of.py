"""``search_memory`` with ``as_of`` sees the pool as it was at the end of that date: the slot
value live then (superseded and archived since), nothing said later, nothing already expired.
Through the real MCP client."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.recall import slots
from tests.data.pool import machine_env, run
from tests.server.mcpcall import call, error, ok

OLD, NEW = "Staging Postgres listens on port 5432", "Staging Postgres listens on port 6543"
GONE = "Staging Postgres demo password rotates weekly"


def _fact(conn: Any, user: int, text: str, at: datetime) -> int:
    memory = NewMemory("claude-code", "user", text, source="manage_knowledge", is_pinned=True)
    memory_id = insert_memories(conn, user, [memory]).ids[0]
    conn.execute("UPDATE memory SET message_at = %s WHERE id = %s", (at, memory_id))
    return memory_id


def _texts(server: Any, **args: Any) -> list[str]:
    found = ok(
        call(server, "search_memory", {"query": "Staging Postgres", "detail": "full", **args})
    )
    return sorted(hit["message"] for hit in found["results"])


def test_as_of_sees_the_slot_value_live_then(
    state: ServerState, server_settings: Settings, db_url: str, tmp_path: Path
) -> None:
    with state.pool.connection() as conn:
        user = state.user_id
        old = _fact(conn, user, OLD, datetime(2026, 1, 10, tzinfo=UTC))
        slots.fill_slot(conn, user, old, "db.staging.port", None)
        new = _fact(conn, user, NEW, datetime(2026, 3, 1, tzinfo=UTC))
        slots.fill_slot(conn, user, new, "db.staging.port", None)
        conn.execute(
            "UPDATE memory SET superseded_at = '2026-03-01', archived_at = '2026-03-01'"
            " WHERE id = %s",
            (old,),
        )
        gone = _fact(conn, user, GONE, datetime(2026, 1, 5, tzinfo=UTC))
        slots.fill_slot(conn, user, gone, None, datetime(2026, 2, 1, tzinfo=UTC))
    server = create_server(server_settings, state)

    assert _texts(server) == sorted([NEW, GONE])  # today: the live value (and the fact)
    assert _texts(server, as_of="2026-01-20") == sorted([OLD, GONE])
    assert _texts(server, as_of="2026-02-15") == [OLD]  # the demo password had expired
    assert _texts(server, as_of="2026-03-02") == [NEW]
    assert _texts(server, as_of="2025-12-31") == []
    assert "as_of" in error(call(server, "search_memory", {"query": "x", "as_of": "someday"}))

    env = machine_env(tmp_path, db_url, USER_NAME=server_settings.user_name)
    found = run(env, "search", "Staging", "Postgres", "--as-of", "2026-02-15", "--json")
    assert found.returncode == 0, found.stderr
    assert [hit["message"] for hit in json.loads(found.stdout)["results"]] == [OLD]
    bad = run(env, "search", "x", "--as-of", "someday")
    assert bad.returncode == 2 and "--as-of" in bad.stderr


def _read(server: Any, **args: Any) -> list[tuple[str, bool]]:
    found = ok(call(server, "read_memory", {"before": 5, "after": 5, **args}))
    return [(t["message"], t["archived"]) for t in found["turns"]]


def test_read_memory_as_of_sees_the_slot_value_the_text_and_the_session_of_then(
    state: ServerState, server_settings: Settings
) -> None:
    with state.pool.connection() as conn:
        user = state.user_id
        old = _fact(conn, user, OLD, datetime(2026, 1, 10, tzinfo=UTC))
        slots.fill_slot(conn, user, old, "db.staging.port", datetime(2026, 2, 10, tzinfo=UTC))
        new = _fact(conn, user, NEW, datetime(2026, 3, 1, tzinfo=UTC))
        slots.fill_slot(conn, user, new, "db.staging.port", None)
        conn.execute(
            "UPDATE memory SET superseded_at = '2026-03-01', archived_at = '2026-03-01'"
            " WHERE id = %s",
            (old,),
        )
        turns = [
            NewMemory(
                "codex-cli", "user", f"session turn {n}", session_id="s-as-of",
                external_uuid=f"s-as-of:{n}", message_at=datetime(2026, 1, 10 * n, tzinfo=UTC),
            )
            for n in (1, 2, 3)
        ]  # fmt: skip
        first, second, _third = insert_memories(conn, user, turns).ids
        conn.execute(  # edited on 2026-02-25: the old text goes to the history
            "INSERT INTO memory_history (memory_id, old_message, changed_by, created_at)"
            " VALUES (%s, 'session turn 2, as first written', 'test', '2026-02-25')",
            (second,),
        )
        conn.execute(
            "UPDATE memory SET message = 'session turn 2, edited' WHERE id = %s", (second,)
        )
    server = create_server(server_settings, state)

    assert _read(server, memory_id=new) == [(NEW, False)]
    assert _read(server, memory_id=new, as_of="2026-01-20") == [(OLD, False)]  # superseded since
    assert _read(server, memory_id=old, as_of="2026-03-02") == [(NEW, False)]  # its successor
    assert _read(server, memory_id=old) == [(OLD, True)]  # read by its id: history, archived
    assert "no live value" in error(
        call(server, "read_memory", {"memory_id": new, "as_of": "2026-02-15"})  # expired then
    )
    assert "after `as_of`" in error(
        call(server, "read_memory", {"memory_id": first, "as_of": "2026-01-05"})
    )
    assert "as_of" in error(call(server, "read_memory", {"memory_id": new, "as_of": "someday"}))

    session = [m for m, _a in _read(server, session_id="s-as-of")]
    assert session == ["session turn 1", "session turn 2, edited", "session turn 3"]
    then = ok(call(server, "read_memory", {"memory_id": first, "after": 5, "as_of": "2026-02-24"}))
    assert [t["message"] for t in then["turns"]] == [
        "session turn 1",
        "session turn 2, as first written",  # the edit of 2026-02-25 was not made yet
        "session turn 3",
    ]
    assert then["session_turns"] == 3
    early = ok(call(server, "read_memory", {"session_id": "s-as-of", "as_of": "2026-01-15"}))
    assert [t["message"] for t in early["turns"]] == ["session turn 1"]
    assert early["session_turns"] == 1
