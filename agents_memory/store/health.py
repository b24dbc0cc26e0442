"""What ``doctor`` reports about the database: server, pgvector, schema, counts, disk."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from agents_memory.store import migrate as migrations
from agents_memory.store.identity import SCOPED_KEY_PATTERN
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
    shared_buffers_bytes: int | None = None
    """PostgreSQL's own cache (``shared_buffers``)."""
    vector_index_bytes: int | None = None
    """The HNSW index searches walk; slower when it does not fit in that cache."""
    cache_prewarm: bool | None = None
    """Whether the cache's contents are read back after a restart (``pg_prewarm``'s
    autoprewarm, which the embedded server preloads); ``None`` when this role may not see the
    preloaded libraries."""
    data_dir: str | None = None
    data_dir_bytes: int | None = None
    problems: list[str] = field(default_factory=list)
    """One line each: what is wrong and how to fix it."""
    notes: list[str] = field(default_factory=list)
    """Worth knowing, not wrong (e.g. full-text-only mode)."""
    secret_scan: SecretScan | None = None
    coldpath: dict[str, Any] | None = None
    """The Cold Path's backlog, last runs, LLM use and degradations (see coldpath/status)."""

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
            "search runs full-text only; install pgvector (on a managed server an admin runs "
            "CREATE EXTENSION vector in this database) and run `mcp-agents-memory migrate`"
        )
        (health.problems if vectors_wanted else health.notes).append(message)
    counts = count_memories(conn)
    health.rows_total = counts.total
    health.rows_active = counts.active
    health.rows_archived = counts.archived
    health.rows_pinned = counts.pinned
    health.rows_by_platform = counts.by_platform
    found = conn.execute(
        "SELECT count(*) FROM capture_cursors WHERE user_id IS NOT DISTINCT FROM (SELECT am_me())"
    ).fetchone()
    health.cursors = int(found[0]) if found else 0
    _cache(conn, health)
    return health


def _cache(conn: psycopg.Connection[Any], health: DatabaseHealth) -> None:
    """``shared_buffers`` against the vector index: a search walks ~3,000 index pages at a
    million rows, from the OS page cache page by page when the index does not fit."""
    row = conn.execute(
        "SELECT pg_size_bytes(current_setting('shared_buffers')),"
        " (SELECT pg_relation_size(to_regclass('memory_embedding_hnsw'))),"
        # pg_settings hides shared_preload_libraries from roles without pg_read_all_settings
        # (current_setting() would fail): then NULL, unknown.
        " (SELECT setting LIKE '%pg_prewarm%' FROM pg_settings"
        "  WHERE name = 'shared_preload_libraries')"
        "  AND coalesce(current_setting('pg_prewarm.autoprewarm', true), 'off') = 'on'"
    ).fetchone()
    if row is None:
        return
    health.shared_buffers_bytes = int(row[0])
    health.cache_prewarm = None if row[2] is None else bool(row[2])
    health.vector_index_bytes = int(row[1]) if row[1] is not None else None
    if health.vector_index_bytes is not None and health.vector_index_bytes > int(row[0]):
        health.notes.append(
            f"the vector index ({health.vector_index_bytes // 1048576} MB) is bigger than"
            f" PostgreSQL's cache (shared_buffers {int(row[0]) // 1048576} MB), so searches read"
            " it from the OS page cache and are slower: give the server more with"
            " ALTER SYSTEM SET shared_buffers = '...' and restart it"
        )


@dataclass(slots=True)
class SecretScan:
    """What ``doctor --secrets`` found: kinds (``detector:kind``) and ids, never text."""

    rows_scanned: int
    kinds: dict[str, int]
    """Kind -> number of memory rows (message, raw text or history) where it was found."""
    example_ids: dict[str, list[int]]
    """Kind -> up to 20 of those row ids."""
    memory_ids: list[int] = field(default_factory=list)
    """Every memory row with a finding (what ``--fix`` rewrites)."""
    agreement: dict[str, int] = field(default_factory=dict)
    """Rows flagged by ``both`` detectors, the ``redactor_only``, the ``second_opinion_only``."""
    summaries_scanned: int = 0
    summary_ids: dict[str, list[int]] = field(default_factory=dict)
    """Kind -> tag summary ids where it was found."""
    profiles_scanned: int = 0
    profile_user_ids: dict[str, list[int]] = field(default_factory=dict)
    """Kind -> user ids whose profile or profile history holds it."""
    actions_scanned: int = 0
    action_ids: dict[str, list[int]] = field(default_factory=dict)
    """Kind -> action ids whose command, targets or excerpt hold it."""
    session_summaries_scanned: int = 0
    session_summary_ids: dict[str, list[int]] = field(default_factory=dict)
    """Kind -> session summary ids whose title, summary or search words hold it."""

    @property
    def found(self) -> bool:
        return bool(
            self.memory_ids
            or self.summary_ids
            or self.profile_user_ids
            or self.action_ids
            or self.session_summary_ids
        )


def rows_per_platform(
    conn: psycopg.Connection[Any], device_name: str
) -> dict[str, tuple[int, int]]:
    """Per platform captured on ``device_name``: stored rows, and how many of them are stored
    apart under a session-scoped key because another session's turn holds their client id
    (:mod:`agents_memory.store.identity`)."""
    rows = conn.execute(
        "SELECT agent_platform, count(*), count(*) FILTER (WHERE external_uuid ~ %s)"
        " FROM memory WHERE device_name = %s GROUP BY 1",
        (SCOPED_KEY_PATTERN, device_name),
    ).fetchall()
    return {str(name): (int(count), int(apart)) for name, count, apart in rows}
