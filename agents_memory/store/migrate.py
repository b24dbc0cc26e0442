"""Versioned SQL migrations: ``migrations/NNNN_name.sql`` applied in order, once.

Each file runs in its own transaction and is recorded in ``schema_migrations``. A session
advisory lock serialises concurrent starters: the second process waits, then finds nothing
left to do. A database whose schema is newer than this code is refused with a clear message.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg

from agents_memory.errors import SchemaError, first_line

log = logging.getLogger(__name__)

# Arbitrary but fixed: "agentsme" as a 64-bit integer, shared by every process of the product.
MIGRATION_LOCK_KEY = 0x6167656E74736D65
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available() -> list[Migration]:
    """The migrations shipped with this version, in order."""
    found: list[Migration] = []
    for entry in resources.files("agents_memory.store").joinpath("migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    return found


def latest_version() -> int:
    migrations = available()
    return migrations[-1].version if migrations else 0


def current_version(conn: psycopg.Connection[Any]) -> int:
    """The highest applied version, 0 for an empty database."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Apply every pending migration; returns those applied by this call.

    ``conn`` must be in autocommit mode (each migration opens its own transaction).
    """
    if not conn.autocommit:
        raise ValueError("migrate() needs an autocommit connection")
    shipped = available()
    if _up_to_date(conn, shipped):
        return []  # nothing to write: a team member's role, which may not create, gets here
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        applied = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
        newest_known = shipped[-1].version if shipped else 0
        unknown = sorted(v for v in applied if v > newest_known)
        if unknown:
            raise SchemaError(
                f"the database schema is at version {max(unknown)}, newer than this "
                f"mcp-agents-memory knows ({newest_known}); upgrade mcp-agents-memory"
            )
        done: list[Migration] = []
        for migration in shipped:
            if migration.version in applied:
                continue
            _apply(conn, migration)
            done.append(migration)
        return done
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))


def _up_to_date(conn: psycopg.Connection[Any], shipped: list[Migration]) -> bool:
    """Whether every shipped migration is applied (read only; a newer schema is not: the
    locked path below refuses it with its message)."""
    if current_version(conn) == 0:
        return False
    applied = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
    return applied == {m.version for m in shipped}


def _apply(conn: psycopg.Connection[Any], migration: Migration) -> None:
    log.info("applying migration %04d_%s", migration.version, migration.name)
    try:
        with conn.transaction():
            conn.execute(migration.sql.encode("utf-8"))
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
    except psycopg.errors.InsufficientPrivilege as exc:
        raise SchemaError(
            f"migration {migration.version:04d}_{migration.name} needs the schema's owner: "
            "the team's admin upgrades first (any command run as the owner migrates)"
        ) from exc
    except psycopg.Error as exc:
        raise SchemaError(
            f"migration {migration.version:04d}_{migration.name} failed: {first_line(exc)}"
        ) from exc
