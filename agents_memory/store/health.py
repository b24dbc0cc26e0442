"""What ``doctor`` reports about the database: server, pgvector, schema, counts, disk."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from agents_memory.store import migrate as migrations
from agents_memory.store.memories import count_memories
from agents_memory.store.vectors import vector_status


@dataclass(slots=True)
class DatabaseHealth:
    mode: str
    """``embedded`` or ``external``."""
    location: str
    server_version: str | None = None
    pgvector_available: bool = False
    pgvector_version: str | None = None
    embedding_dim: int | None = None
    embedding_model: str | None = None
    schema_version: int = 0
    schema_latest: int = 0
    rows_total: int = 0
    rows_active: int = 0
    rows_archived: int = 0
    rows_pinned: int = 0
    rows_by_platform: dict[str, int] = field(default_factory=dict)
    cursors: int = 0
    data_dir: str | None = None
    data_dir_bytes: int | None = None
    problems: list[str] = field(default_factory=list)
    """One line each: what is wrong and how to fix it."""
    notes: list[str] = field(default_factory=list)
    """Worth knowing, not wrong (e.g. full-text-only mode)."""

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["healthy"] = self.healthy
        return data


def inspect(
    conn: psycopg.Connection[Any], health: DatabaseHealth, *, vectors_wanted: bool = True
) -> DatabaseHealth:
    """Fill ``health`` from a live connection. ``vectors_wanted``: an embedding backend is
    configured, so a missing pgvector is a problem rather than a note."""
    row = conn.execute("SELECT current_setting('server_version')").fetchone()
    health.server_version = str(row[0]) if row else None
    health.schema_version = migrations.current_version(conn)
    health.schema_latest = migrations.latest_version()
    if health.schema_version < health.schema_latest:
        health.problems.append(
            f"schema at version {health.schema_version}, {health.schema_latest} expected: "
            "run `mcp-agents-memory migrate`"
        )
        return health
    vec = vector_status(conn)
    health.pgvector_available = vec.available
    health.pgvector_version = vec.installed_version
    health.embedding_dim = vec.column_dim
    health.embedding_model = vec.model
    if vec.installed_version is None:
        message = (
            "pgvector is not available on this server (or this role may not create it): "
            "search runs full-text only; install pgvector and run `mcp-agents-memory migrate`"
        )
        (health.problems if vectors_wanted else health.notes).append(message)
    counts = count_memories(conn)
    health.rows_total = counts.total
    health.rows_active = counts.active
    health.rows_archived = counts.archived
    health.rows_pinned = counts.pinned
    health.rows_by_platform = counts.by_platform
    found = conn.execute("SELECT count(*) FROM capture_cursors").fetchone()
    health.cursors = int(found[0]) if found else 0
    return health
