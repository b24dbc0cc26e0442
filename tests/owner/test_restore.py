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

ROOT = Path(__file__).resolve().parents[2]


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
    env = env_for(db_url, tmp_path, PYTHONPATH=str(ROOT))

    active = run("mcp-agents-memory", "restore", "--id", str(memory_id), env=env)
    unknown = run("mcp-agents-memory", "restore", "--id", "999999", env=env)

    assert (active.returncode, active.stderr.strip()) == (
        1,
        f"error: memory {memory_id} is not archived",
    )
    assert unknown.returncode == 1
    assert unknown.stderr.strip().startswith("error: no memory with id 999999: ")


def test_restoring_a_forgotten_memory_says_forget_cannot_be_undone(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    """Archive and forget are two things: only the first has a way back, and restore says so."""
    (memory_id,) = add(conn, [mem("the staging password is hunter2")])
    conn.commit()
    env = env_for(db_url, tmp_path, PYTHONPATH=str(ROOT))  # this checkout's code

    forgotten = run("mcp-agents-memory", "forget", "--id", str(memory_id), "--yes", env=env)
    restored = run("mcp-agents-memory", "restore", "--id", str(memory_id), env=env)

    assert forgotten.returncode == 0, forgotten.stderr
    assert restored.returncode == 1
    error = restored.stderr.strip()
    assert error.startswith(f"error: no memory with id {memory_id}: "), error
    assert "forget cannot be undone" in error and "only archived memories can be restored" in error
    assert len(error.splitlines()) == 1
