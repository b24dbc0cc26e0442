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
