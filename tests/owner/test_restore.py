"""Archive stays a soft delete; ``mcp-agents-memory restore --id`` brings a row back, and an
archived hit says so wherever search shows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.store.knowledge import archive_memory
from tests.owner.helpers import count, env_for, run
from tests.search.helpers import add, mem


def test_an_archived_memory_is_marked_in_search_and_restore_brings_it_back(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    (memory_id,) = add(conn, [mem("the zebrafish telemetry format is protobuf")])
    archive_memory(conn, memory_id)
    conn.commit()
    env = env_for(db_url, tmp_path)

    found = run("mcp-agents-memory", "search", "zebrafish", "--include-archived", "--json", env=env)
    table = run("mcp-agents-memory", "search", "zebrafish", "--include-archived", env=env)
    restored = run("mcp-agents-memory", "restore", "--id", str(memory_id), env=env)
    again = run("mcp-agents-memory", "search", "zebrafish", "--json", env=env)

    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["archived"] is True
    assert "(archived)" in table.stdout
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.strip() == f"memory {memory_id} restored"
    assert count(conn, "SELECT count(*) FROM memory WHERE is_active AND archived_at IS NULL") == 1
    assert json.loads(again.stdout)["results"][0]["archived"] is False


def test_restoring_an_unknown_or_active_memory_is_one_line_and_exit_1(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    (memory_id,) = add(conn, [mem("an active memory")])
    conn.commit()
    env = env_for(db_url, tmp_path)

    active = run("mcp-agents-memory", "restore", "--id", str(memory_id), env=env)
    unknown = run("mcp-agents-memory", "restore", "--id", "999999", env=env)

    assert (active.returncode, active.stderr.strip()) == (
        1,
        f"error: memory {memory_id} is not archived",
    )
    assert (unknown.returncode, unknown.stderr.strip()) == (1, "error: no memory with id 999999")
