from __future__ import annotations

import subprocess
import sys
from typing import Any

import psycopg
import pytest

from agents_memory.errors import SchemaError
from agents_memory.store import migrate

EXPECTED_TABLES = {
    "memory",
    "users",
    "project_tags",
    "project_tag_alias_suggestions",
    "project_tag_new_suggestions",
    "tag_summaries",
    "capture_cursors",
    "llm_usage",
    "meta",
    "schema_migrations",
    "memory_history",
    "profile_history",
}


def _tables(conn: psycopg.Connection[Any]) -> set[str]:
    rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def test_fresh_database_gets_every_table(empty_db_url: str) -> None:
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        applied = migrate.migrate(conn)
        assert [m.version for m in applied] == [m.version for m in migrate.available()]
        assert _tables(conn) >= EXPECTED_TABLES
        assert migrate.current_version(conn) == migrate.latest_version()


def test_second_run_applies_nothing(empty_db_url: str) -> None:
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        migrate.migrate(conn)
        assert migrate.migrate(conn) == []
        count = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
        assert count is not None and count[0] == len(migrate.available())


def test_two_processes_migrating_at_once_apply_each_migration_once(empty_db_url: str) -> None:
    script = (
        "import sys, psycopg\n"
        "from agents_memory.store import migrate\n"
        "with psycopg.connect(sys.argv[1], autocommit=True) as c:\n"
        "    print(len(migrate.migrate(c)))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, empty_db_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    results = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    applied_counts = sorted(int(out.strip()) for out, _ in results)
    assert applied_counts == [0, 0, len(migrate.available())]
    with psycopg.connect(empty_db_url) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY 1").fetchall()
        assert all(n == 1 for _v, n in rows)


def test_schema_newer_than_the_code_is_refused(empty_db_url: str) -> None:
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        migrate.migrate(conn)
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')")
        with pytest.raises(SchemaError, match="upgrade mcp-agents-memory"):
            migrate.migrate(conn)


def test_migrate_requires_autocommit(empty_db_url: str) -> None:
    with psycopg.connect(empty_db_url) as conn, pytest.raises(ValueError, match="autocommit"):
        migrate.migrate(conn)


def test_canonical_tag_follows_alias_chains_and_survives_cycles(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        ids = [
            conn.execute(
                "INSERT INTO project_tags (name) VALUES (%s) RETURNING id", (n,)
            ).fetchone()[0]  # type: ignore[index]
            for n in ("a", "b", "c")
        ]
        a, b, c = ids
        conn.execute("UPDATE project_tags SET alias_of = %s WHERE id = %s", (b, a))
        conn.execute("UPDATE project_tags SET alias_of = %s WHERE id = %s", (c, b))
        assert conn.execute("SELECT canonical_project_tag_id(%s)", (a,)).fetchone() == (c,)
        conn.execute("UPDATE project_tags SET alias_of = %s WHERE id = %s", (a, c))
        found = conn.execute("SELECT canonical_project_tag_id(%s)", (a,)).fetchone()
        assert found is not None and found[0] in ids
        assert conn.execute("SELECT canonical_project_tag_id(NULL)").fetchone() == (None,)
        assert conn.execute("SELECT canonical_project_tag_id(123456)").fetchone() == (123456,)
