"""Reading a the JS original database (the TypeScript mcp-agents-memory on PostgreSQL), read-only.

The JS original's schema grew by numbered migrations (019 onwards, ``reference/seeds.md`` A.2); an
older database lacks the later columns and tables. Every reader here asks the catalogue which
columns exist and selects a default for a missing one, so any the JS original from 019 on can be
read.
The connection is opened read-only: nothing here can change the source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from agents_memory.errors import DatabaseError, first_line


@dataclass(frozen=True, slots=True)
class SeedAUser:
    user_id: int
    user_name: str
    core_profile: str | None
    sub_profile: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SeedATag:
    id: int
    name: str
    description: str | None
    alias_of: int | None
    kind: str | None
    paused: bool


@dataclass(frozen=True, slots=True)
class SeedAMemory:
    id: int
    user_id: int
    agent_platform: str
    agent_model: str | None
    subagent: bool
    subagent_model: str | None
    subagent_role: str | None
    role: str
    message: str
    raw_message: str | None
    p_tag_id: int | None
    d_tag: list[str]
    is_active: bool
    archived_at: datetime | None
    is_pinned: bool
    cold_error: str | None
    tag_processed: bool
    external_uuid: str | None
    device_name: str | None
    entry_type: str
    venue: str | None
    created_at: datetime
    embedding: str | None
    """The vector as pgvector text (``[0.1,…]``), read only when asked for."""


@dataclass(frozen=True, slots=True)
class SeedAAliasSuggestion:
    id: int
    user_id: int
    source_tag_id: int
    target_tag_id: int
    relation: str
    status: str
    confidence: float | None
    candidate_sources: list[str]
    evidence_memory_ids: list[int]
    conflict_memory_ids: list[int]
    signals: Any
    model_provider: str | None
    model_name: str | None
    rationale: str | None
    auto_apply_eligible: bool
    decided_by: str | None
    decision_reason: str | None
    decided_at: datetime | None
    applied_at: datetime | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SeedANewSuggestion:
    id: int
    user_id: int
    name: str
    members: list[str]
    uses: int
    status: str
    recommendation: str | None
    rationale: str | None
    model_provider: str | None
    model_name: str | None
    project_tag_id: int | None
    retrotagged: int
    decided_by: str | None
    decision_reason: str | None
    decided_at: datetime | None
    last_seen_at: datetime | None
    created_at: datetime


# Each reader's columns with the value (SQL) that stands in when the source lacks the column.
_USER = {
    "user_id": None,
    "user_name": None,
    "core_profile": "NULL::text",
    "sub_profile": "NULL::text",
    "created_at": "now()",
}
_TAG = {
    "id": None,
    "name": None,
    "description": "NULL::text",
    "alias_of": "NULL::bigint",
    "kind": "NULL::text",
    "paused": "false",
}
_MEMORY = {
    "id": None,
    "user_id": None,
    "agent_platform": None,
    "agent_model": "NULL::text",
    "subagent": "false",
    "subagent_model": "NULL::text",
    "subagent_role": "NULL::text",
    "role": None,
    "message": None,
    "raw_message": "NULL::text",
    "p_tag_id": "NULL::bigint",
    "d_tag": "'{}'::text[]",
    "is_active": "true",
    "archived_at": "NULL::timestamptz",
    "is_pinned": "false",
    "cold_error": "NULL::text",
    "tag_processed": "false",
    "external_uuid": "NULL::text",
    "device_name": "NULL::text",
    "entry_type": "'memory'::text",
    "venue": "NULL::text",
    "created_at": None,
}
_ALIAS = {
    "id": None,
    "user_id": None,
    "source_tag_id": None,
    "target_tag_id": None,
    "relation": None,
    "status": None,
    "confidence": "NULL::float8",
    "candidate_sources": "'{}'::text[]",
    "evidence_memory_ids": "'{}'::bigint[]",
    "conflict_memory_ids": "'{}'::bigint[]",
    "signals": "'{}'::jsonb",
    "model_provider": "NULL::text",
    "model_name": "NULL::text",
    "rationale": "NULL::text",
    "auto_apply_eligible": "false",
    "decided_by": "NULL::text",
    "decision_reason": "NULL::text",
    "decided_at": "NULL::timestamptz",
    "applied_at": "NULL::timestamptz",
    "created_at": None,
}
_NEW = {
    "id": None,
    "user_id": None,
    "name": None,
    "members": "'{}'::text[]",
    "uses": "0",
    "status": None,
    "recommendation": "NULL::text",
    "rationale": "NULL::text",
    "model_provider": "NULL::text",
    "model_name": "NULL::text",
    "project_tag_id": "NULL::bigint",
    "retrotagged": "0",
    "decided_by": "NULL::text",
    "decision_reason": "NULL::text",
    "decided_at": "NULL::timestamptz",
    "last_seen_at": "NULL::timestamptz",
    "created_at": None,
}
_CASTS = {"confidence": "::float8"}


class SeedASource:
    """An open, read-only connection to a the JS original database and its readers."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._columns: dict[str, set[str]] = {}

    @classmethod
    def open(cls, url: str, *, connect_timeout: float = 10.0) -> SeedASource:
        """Connect to ``url`` read-only; a the JS original database has a ``memory`` and a ``users``
        table, anything else is refused with one line."""
        try:
            conn = psycopg.connect(url, connect_timeout=int(connect_timeout))
        except psycopg.Error as exc:
            reason = first_line(exc)
            raise DatabaseError(f"cannot connect to the seed A database: {reason}") from None
        conn.read_only = True
        source = cls(conn)
        missing = [t for t in ("memory", "users") if not source.has_table(t)]
        if missing:
            name = conn.info.dbname
            conn.close()
            raise DatabaseError(
                f"not a seed A database (no {' or '.join(missing)} table in {name})"
            )
        return source

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SeedASource:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- the catalogue --------------------------------------------------------------------
    def columns(self, table: str) -> set[str]:
        if table not in self._columns:
            rows = self._conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = %s",
                (table,),
            ).fetchall()
            self._columns[table] = {str(r[0]) for r in rows}
        return self._columns[table]

    def has_table(self, table: str) -> bool:
        return bool(self.columns(table))

    def identity(self) -> str:
        """A short, stable name for this source: a hash of its first user's name and creation
        time (kept by ``pg_dump``/restore, unlike a server's system identifier)."""
        row = self._conn.execute(
            "SELECT user_name, created_at FROM users ORDER BY user_id LIMIT 1"
        ).fetchone()
        seed = f"{row[0]}|{row[1].isoformat()}" if row else str(self._conn.info.dbname)
        return hashlib.sha256(seed.encode()).hexdigest()[:12]

    def vector_dim(self) -> int | None:
        """``memory.embedding``'s dimension, or ``None`` without a vector column."""
        row = self._conn.execute(
            "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass('memory')"
            " AND a.attname = 'embedding' AND NOT a.attisdropped"
        ).fetchone()
        return int(row[0]) if row is not None and int(row[0]) > 0 else None

    # --- the readers ----------------------------------------------------------------------
    def _select(
        self, table: str, wanted: dict[str, str | None], *extra: sql.Composable
    ) -> sql.Composed:
        """``SELECT`` of ``wanted`` (a default for each column the source lacks), ``extra``
        select items after them."""
        present = self.columns(table)
        parts: list[sql.Composable] = []
        for name, default in wanted.items():
            if name in present:
                parts.append(
                    sql.SQL("{}{} AS {}").format(
                        sql.Identifier(name), sql.SQL(_CASTS.get(name, "")), sql.Identifier(name)
                    )
                )
            elif default is None:
                raise DatabaseError(f"the seed A table {table} has no column {name}")
            else:
                parts.append(sql.SQL(default + " AS {}").format(sql.Identifier(name)))
        return sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join([*parts, *extra]), sql.Identifier(table)
        )

    def users(self) -> list[SeedAUser]:
        with self._conn.cursor(row_factory=class_row(SeedAUser)) as cur:
            cur.execute(self._select("users", _USER) + sql.SQL(" ORDER BY user_id"))
            return cur.fetchall()

    def tags(self) -> list[SeedATag]:
        if not self.has_table("project_tags"):
            return []
        with self._conn.cursor(row_factory=class_row(SeedATag)) as cur:
            cur.execute(self._select("project_tags", _TAG) + sql.SQL(" ORDER BY id"))
            return cur.fetchall()

    def alias_suggestions(self) -> list[SeedAAliasSuggestion]:
        if not self.has_table("project_tag_alias_suggestions"):
            return []
        with self._conn.cursor(row_factory=class_row(SeedAAliasSuggestion)) as cur:
            cur.execute(
                self._select("project_tag_alias_suggestions", _ALIAS) + sql.SQL(" ORDER BY id")
            )
            return cur.fetchall()

    def new_suggestions(self) -> list[SeedANewSuggestion]:
        if not self.has_table("project_tag_new_suggestions"):
            return []
        with self._conn.cursor(row_factory=class_row(SeedANewSuggestion)) as cur:
            cur.execute(self._select("project_tag_new_suggestions", _NEW) + sql.SQL(" ORDER BY id"))
            return cur.fetchall()

    def memory_count(self) -> int:
        row = self._conn.execute("SELECT count(*) FROM memory").fetchone()
        return int(row[0]) if row else 0

    def memories(self, *, with_vectors: bool, batch: int = 1000) -> Iterator[list[SeedAMemory]]:
        """Every memory row by id, in batches, through a server-side cursor."""
        vector = sql.SQL("embedding::text" if with_vectors else "NULL::text") + sql.SQL(
            " AS embedding"
        )
        select = self._select("memory", _MEMORY, vector) + sql.SQL(" ORDER BY id")
        with (
            self._conn.transaction(),
            self._conn.cursor("seed_a_memory", row_factory=class_row(SeedAMemory)) as cur,
        ):
            cur.itersize = batch
            cur.execute(select)
            while rows := cur.fetchmany(batch):
                yield rows
