"""The embedded wheel's PostgreSQL 18 run as a managed service would be: reached over TLS
(``sslmode=verify-full``) as a role that owns only its database and is not a superuser, with
pgvector created beforehand by an admin. Everything works, with vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client, StdioServerParameters

from agents_memory.admission.echo import BRIEF_MARKER
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.sharedserver.conftest import (
    BIN,
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


@pytest.fixture
def memdb(pg18: SharedServer) -> str:
    return pg18.new_database()


def _doctor(env: dict[str, str]) -> str:
    proc = run_cli("mcp-agents-memory", ["doctor"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("healthy")
    return proc.stdout


def test_the_role_owns_its_database_and_nothing_more(pg18: SharedServer, memdb: str) -> None:
    with psycopg.connect(pg18.url(memdb)) as conn:
        role = conn.execute(
            "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        owner = conn.execute(
            "SELECT pg_get_userbyid(datdba) = current_user FROM pg_database"
            " WHERE datname = current_database()"
        ).fetchone()
    assert role == (False, False, False)
    assert owner == (True,)


def test_a_role_owning_only_its_database_runs_everything_with_vectors(
    pg18: SharedServer, memdb: str, tmp_path: Path, embed_server: Any
) -> None:
    home = tmp_path / "home"
    files = captured_home(home)
    env = product_env(home, pg18.url(memdb), **embedding_env(embed_server.base_url))

    migrated = run_cli("mcp-agents-memory", ["migrate"], env)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    report = _doctor(env)
    folded = " ".join(report.split())  # the label column is as wide as its longest label
    assert "server 18." in folded
    assert "pgvector yes (0.8." in folded
    assert f"embeddings {TEST_MODEL} ({TEST_DIM} dims)" in folded

    backfill = run_cli("memory-capture", ["backfill"], env)
    assert backfill.returncode == 0, backfill.stderr[-3000:]
    stored = rows_per_platform(pg18, memdb)
    assert set(stored) == set(files) and all(stored.values())
    total = sum(stored.values())

    reports = coldpath_once(env)
    assert reports["tagger"].startswith(f"{total} processed, 0 failed")
    assert reports["embedder"].startswith(f"{total} processed, 0 failed")
    assert all(" 0 failed" in line for line in reports.values()), reports
    with psycopg.connect(pg18.cluster.admin_conninfo(memdb)) as conn:
        unembedded = conn.execute("SELECT count(*) FROM memory WHERE embedding IS NULL").fetchone()
    assert unembedded == (0,)

    found, notes = search_json(env, "error")
    assert found["vector_used"] is True, notes
    assert found["used"] == "hybrid"
    assert any("vector" in r["why"]["arms"] for r in found["results"])
    assert any("fulltext" in r["why"]["arms"] for r in found["results"])

    brief = session_brief(env)
    assert brief.startswith(BRIEF_MARKER)
    assert "## Recent on claude-code" in brief

    assert "0 without a vector" in _doctor(env)


def test_the_mcp_server_pins_and_finds_a_fact_through_the_owner_role(
    pg18: SharedServer, memdb: str, tmp_path: Path, embed_server: Any
) -> None:
    env = product_env(tmp_path, pg18.url(memdb), **embedding_env(embed_server.base_url))
    params = StdioServerParameters(command=str(BIN / "mcp-agents-memory"), args=[], env=env)
    fact = "the staging database is reached with sslmode verify-full"

    async def session() -> tuple[Any, Any]:
        async with Client(params) as client:
            pinned = await client.call_tool("manage_knowledge", {"action": "add", "content": fact})
            found = await client.call_tool(
                "search_memory", {"query": "staging database", "detail": "full"}
            )
            return pinned, found

    pinned, found = anyio.run(session)
    assert not pinned.is_error and not found.is_error, (pinned.content, found.content)
    result = json.loads(found.content[0].text)
    assert [r["message"] for r in result["results"]] == [fact]
    assert result["results"][0]["is_pinned"] is True
    assert set(result["results"][0]["why"]["arms"]) >= {"fulltext", "vector"}
