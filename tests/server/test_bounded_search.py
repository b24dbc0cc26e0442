"""A captured 50 MB turn leaves a search clipped, with its id to read the rest: through the
real MCP client (``search_memory``), the command line (``search --json`` and the table) and
the daemon's JSON form, in bounded time and size (issue 35)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from agents_memory.cli.search import search
from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.search import HIT_MAX_CHARS
from tests.server.mcpcall import call, ok

HUGE = 50 * 1024 * 1024
REPLY_CAP = 60_000
"""A reply with two hits (one of them 50 MB stored) stays under this many characters."""
SECONDS_CAP = 20.0


@pytest.fixture
def huge_turn(state: ServerState) -> int:
    """A 50 MB assistant turn that matches "deploy checklist", and one small turn beside it."""
    text = "deploy checklist for the orbit release " + "log line 0123456789 " * (HUGE // 20)
    now = datetime.now(UTC)
    with state.pool.connection() as conn:
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    "claude-code",
                    "assistant",
                    text,
                    external_uuid="huge:1",
                    session_id="s-huge",
                    message_at=now - timedelta(hours=1),
                    device_name="test-device",
                ),
                NewMemory(
                    "claude-code",
                    "user",
                    "what is on the deploy checklist?",
                    external_uuid="small:1",
                    session_id="s-huge",
                    message_at=now - timedelta(hours=2),
                    device_name="test-device",
                ),
            ],
        )
    return int(counts.ids[0])


def _check_hits(data: dict[str, Any], huge_id: int) -> None:
    hits = {hit["id"]: hit for hit in data["results"]}
    assert huge_id in hits, data
    big = hits[huge_id]
    assert big["clipped"] is True and big["chars"] >= HUGE
    assert len(big["message"]) <= HIT_MAX_CHARS and big["message"].endswith("…")
    assert big["message"].startswith("deploy checklist")


def test_search_memory_clips_a_50_mb_turn_and_says_how_to_read_it(
    state: ServerState, server_settings: Settings, huge_turn: int
) -> None:
    server = create_server(server_settings, state)
    started = time.monotonic()
    result = call(server, "search_memory", {"detail": "full", "query": "deploy checklist"})
    elapsed = time.monotonic() - started
    reply = result.content[0].text
    assert len(reply) < REPLY_CAP, len(reply)
    assert elapsed < SECONDS_CAP, elapsed
    data = ok(result)
    _check_hits(data, huge_turn)
    assert f"read_memory memory_id={huge_turn}" in data["next"]
    small = [h for h in data["results"] if h["id"] != huge_turn]
    assert small and small[0]["clipped"] is False
    assert small[0]["message"] == "what is on the deploy checklist?"
    # The rest is read through read_memory, itself within its budget.
    read = ok(
        call(
            server,
            "read_memory",
            {"memory_id": huge_turn, "before": 0, "after": 0, "max_chars": 50_000},
        )
    )
    assert read["turns"][0]["clipped"] is True and len(read["turns"][0]["message"]) <= 50_000


def test_cli_search_json_and_table_are_bounded(server_settings: Settings, huge_turn: int) -> None:
    started = time.monotonic()
    as_json = CliRunner().invoke(search, ["deploy", "checklist", "--json"], obj=server_settings)
    assert as_json.exit_code == 0, as_json.output
    assert len(as_json.stdout) < REPLY_CAP, len(as_json.stdout)
    _check_hits(json.loads(as_json.stdout), huge_turn)
    table = CliRunner().invoke(search, ["deploy", "checklist"], obj=server_settings)
    assert table.exit_code == 0, table.output
    assert str(huge_turn) in table.stdout and len(table.stdout) < 10_000
    assert time.monotonic() - started < 2 * SECONDS_CAP
