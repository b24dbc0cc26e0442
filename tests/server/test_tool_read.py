"""``read_memory`` through the real MCP client: reading around a hit and paging a session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store.memories import NewMemory, insert_memories
from tests.server.mcpcall import call, error, ok

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _session(state: ServerState, turns: int = 10, size: int = 40) -> list[int]:
    with state.pool.connection() as conn:
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    "claude-code",
                    "user" if i % 2 == 0 else "assistant",
                    f"turn {i:02d} " + "x" * size,
                    external_uuid=f"s1:{i}",
                    session_id="s1",
                    message_at=START + timedelta(minutes=i),
                    device_name="d",
                )
                for i in range(turns)
            ],
        )
    return list(counts.ids)


def _texts(result: dict[str, Any]) -> list[str]:
    return [t["message"][:7] for t in result["turns"]]


def test_turns_around_a_hit_in_order(state: ServerState, server_settings: Settings) -> None:
    ids = _session(state)
    server = create_server(server_settings, state)
    hit = ok(call(server, "search_memory", {"detail": "full", "query": "turn 05"}))["results"][0]
    assert hit["session_id"] == "s1"
    around = ok(call(server, "read_memory", {"memory_id": ids[5], "before": 2, "after": 2}))
    assert _texts(around) == ["turn 03", "turn 04", "turn 05", "turn 06", "turn 07"]
    assert [t["anchor"] for t in around["turns"]] == [False, False, True, False, False]
    assert around["session_turns"] == 10 and around["more_before"] and around["more_after"]
    assert f"memory_id={ids[7]}" in around["next"]


def test_a_session_is_paged_from_its_first_turn(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _session(state)
    server = create_server(server_settings, state)
    first = ok(call(server, "read_memory", {"session_id": "s1", "after": 4}))
    assert _texts(first) == ["turn 00", "turn 01", "turn 02", "turn 03", "turn 04"]
    assert not first["more_before"] and first["more_after"]
    rest = ok(call(server, "read_memory", {"memory_id": ids[4], "before": 0, "after": 50}))
    assert _texts(rest)[-1] == "turn 09" and not rest["more_after"] and rest["next"] is not None


def test_the_character_budget_keeps_the_nearest_turns(
    state: ServerState, server_settings: Settings
) -> None:
    ids = _session(state, size=300)
    server = create_server(server_settings, state)
    read = ok(
        call(
            server,
            "read_memory",
            {"memory_id": ids[5], "before": 5, "after": 4, "max_chars": 1000},
        )
    )
    assert read["chars"] <= 1000
    assert "turn 05" in _texts(read) and "turn 00" not in _texts(read)
    assert read["more_before"] and read["more_after"]
    assert _texts(read)[0] in ("turn 04", "turn 03")


def test_read_errors_tell_the_model_what_to_do(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    assert "memory_id" in error(call(server, "read_memory", {}))
    assert "search_memory" in error(call(server, "read_memory", {"memory_id": 424242}))
    assert "no session" in error(call(server, "read_memory", {"session_id": "nope"}))
    assert "max_chars" in error(call(server, "read_memory", {"memory_id": 1, "max_chars": 10}))
