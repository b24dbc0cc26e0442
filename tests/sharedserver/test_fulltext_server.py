"""Debian's own PostgreSQL 15, which has no pgvector: the product runs full-text only, says so
in ``doctor``, and capture, search, the brief and the Cold Path all work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents_memory.admission.echo import BRIEF_MARKER
from tests.sharedserver.conftest import (
    SharedServer,
    captured_home,
    coldpath_once,
    embedding_env,
    product_env,
    rows_per_platform,
    run_cli,
    search_json,
    session_brief,
)

pytestmark = pytest.mark.sharedserver

PGVECTOR_LINE = "pgvector not available on this server: search runs full-text only"
"""The doctor line, its spaces folded (the label column is as wide as its longest label)."""


@pytest.fixture
def memdb(pg15: SharedServer) -> str:
    return pg15.new_database()


def test_doctor_says_a_server_without_pgvector_searches_full_text_only(
    pg15: SharedServer, memdb: str, tmp_path: Path, embed_server: Any
) -> None:
    env = product_env(tmp_path, pg15.url(memdb), EMBEDDING_BACKEND="none")
    migrated = run_cli("mcp-agents-memory", ["migrate"], env)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    assert "schema at version" in migrated.stdout
    # No CREATE EXTENSION is tried (and warned about) where the server has no pgvector.
    assert "pgvector" not in migrated.stderr

    doctor = run_cli("mcp-agents-memory", ["doctor"], env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert PGVECTOR_LINE in _folded_lines(doctor.stdout)
    assert any(line.startswith("server 15.") for line in _folded_lines(doctor.stdout))
    assert doctor.stdout.rstrip().endswith("healthy")

    # With an embedding backend configured the missing pgvector is a problem, with its fix.
    wanted = product_env(tmp_path, pg15.url(memdb), **embedding_env(embed_server.base_url))
    doctor = run_cli("mcp-agents-memory", ["doctor"], wanted)
    assert doctor.returncode == 1
    assert PGVECTOR_LINE in _folded_lines(doctor.stdout)
    assert "problem: pgvector is not available on this server" in doctor.stderr
    assert "CREATE EXTENSION vector" in doctor.stderr


def test_capture_search_brief_and_cold_path_work_full_text_only(
    pg15: SharedServer, memdb: str, tmp_path: Path, embed_server: Any
) -> None:
    home = tmp_path / "home"
    files = captured_home(home)
    env = product_env(home, pg15.url(memdb), **embedding_env(embed_server.base_url))

    backfill = run_cli("memory-capture", ["backfill"], env)
    assert backfill.returncode == 0, backfill.stderr[-3000:]
    stored = rows_per_platform(pg15, memdb)
    assert set(stored) == set(files) and all(stored.values())

    found, _notes = search_json(env, "error")
    assert found["used"] == "fulltext" and found["vector_used"] is False
    assert found["results"] and all("vector" not in r["why"]["arms"] for r in found["results"])
    assert found["note"] == "no vector column (pgvector unavailable): full-text only"

    reports = coldpath_once(env)
    assert reports["tagger"].startswith(f"{sum(stored.values())} processed, 0 failed")
    assert reports["embedder"].startswith("0 processed, 0 failed, 0 skipped")
    assert "full-text only" in reports["embedder"]
    assert all(" 0 failed" in line for line in reports.values()), reports

    brief = session_brief(env)
    assert brief.startswith(BRIEF_MARKER)
    assert "# Memory Briefing (user: shared-user)" in brief
    assert "## Recent on claude-code" in brief


def _folded_lines(text: str) -> list[str]:
    """``text``'s lines with each run of spaces folded to one."""
    return [" ".join(line.split()) for line in text.splitlines()]
