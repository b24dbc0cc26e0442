"""Memory rows: batch insert (idempotent on ``external_uuid``), recent rows, counts.

The caller owns the transaction: pass a connection, commit when the batch and whatever must
commit with it (a capture cursor) are written.

Memory text reaches this module only as :data:`AdmittedText`: text that
:mod:`agents_memory.admission.admit` let in (private spans gone, secrets redacted, brief
echoes and excluded projects refused). The store sits below admission and cannot call it, so
the type carries the proof instead; ``tests/admission/test_write_paths.py`` checks that no
module outside ``agents_memory/admission/`` makes one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, NewType

import psycopg
from psycopg.rows import class_row

from agents_memory.store import identity, team

Source = Literal["capture", "save_message", "manage_knowledge", "import"]

AdmittedText = NewType("AdmittedText", str)
"""Memory text in the form admission let it in. Only :mod:`agents_memory.admission` makes one;
every function here that writes memory text takes it (mypy rejects a plain ``str``)."""

NEW_MEMORY_CHANNEL: Final = "agents_memory_new"


def twin_text(column: str) -> str:
    """SQL for ``column``'s text as twins are compared: runs of whitespace as one space, the
    ends trimmed. One rule for a seed import meeting captured turns and a capture meeting
    imported ones (migration 0012 indexes its md5 for imported rows)."""
    return f"btrim(regexp_replace({column}, '\\s+', ' ', 'g'))"


_IMPORTED_TWIN = (
    "NOT EXISTS (SELECT 1 FROM memory s WHERE s.source = 'import' AND s.user_id = %s"
    " AND s.agent_platform = i.agent_platform AND s.session_id = i.session_id"
    f" AND s.role = i.role AND md5({twin_text('s.message')}) = md5({twin_text('i.message')}))"
)
"""An incoming row (``i``) that no imported row of the user already holds."""
"""The channel :func:`notify_new_memories` signals and the Cold Path worker listens on."""


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A row to store. ``external_uuid`` makes the insert idempotent (``None`` = always new)."""

    agent_platform: str
    role: Literal["user", "assistant"]
    message: AdmittedText
    external_uuid: str | None = None
    message_at: datetime | None = None
    agent_model: str | None = None
    subagent: bool = False
    subagent_model: str | None = None
    subagent_role: str | None = None
    raw_message: AdmittedText | None = None
    session_id: str | None = None
    cwd: str | None = None
    git_root: str | None = None
    git_remote: str | None = None
    device_name: str | None = None
    source: Source = "capture"
    is_pinned: bool = False


@dataclass(frozen=True, slots=True)
class MemoryRow:
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
    is_pinned: bool
    archived_at: datetime | None
    external_uuid: str | None
    device_name: str | None
    session_id: str | None
    cwd: str | None
    git_root: str | None
    git_remote: str | None
    source: str
    message_at: datetime
    created_at: datetime
    updated_at: datetime


MEMORY_COLUMNS = (
    "id, user_id, agent_platform, agent_model, subagent, subagent_model, subagent_role, role,"
    " message, raw_message, p_tag_id, d_tag, is_active, is_pinned, archived_at, external_uuid,"
    " device_name, session_id, cwd, git_root, git_remote, source, message_at, created_at,"
    " updated_at"
)


@dataclass(frozen=True, slots=True)
class InsertCounts:
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    collisions: int = 0
    """Rows whose key another session's turn holds: stored apart under a scoped key (they
    count in ``inserted`` or ``updated`` too)."""
    ids: tuple[int, ...] = field(default=(), repr=False)
    """Ids of the rows inserted or updated (for NOTIFY payloads and callers that need them)."""

    def __add__(self, other: InsertCounts) -> InsertCounts:
        return InsertCounts(
            self.inserted + other.inserted,
            self.updated + other.updated,
            self.skipped + other.skipped,
            self.collisions + other.collisions,
            self.ids + other.ids,
        )


def ensure_user(conn: psycopg.Connection[Any], user_name: str) -> int:
    """The id of ``user_name``, creating the user on first use. A team member's role is its
    person, whatever name its settings carry (:mod:`agents_memory.store.team`)."""
    member = team.member_user_id(conn)
    if member is not None:
        return member
    row = conn.execute(
        "INSERT INTO users (user_name) VALUES (%s) ON CONFLICT (user_name) DO NOTHING"
        " RETURNING user_id",
        (user_name,),
    ).fetchone()
    if row is None:
        row = conn.execute(
            "SELECT user_id FROM users WHERE user_name = %s", (user_name,)
        ).fetchone()
    assert row is not None
    return int(row[0])


_STAGED = (
    ("agent_platform", "text"),
    ("agent_model", "text"),
    ("subagent", "bool"),
    ("subagent_model", "text"),
    ("subagent_role", "text"),
    ("role", "text"),
    ("message", "text"),
    ("raw_message", "text"),
    ("external_uuid", "text"),
    ("device_name", "text"),
    ("session_id", "text"),
    ("cwd", "text"),
    ("git_root", "text"),
    ("git_remote", "text"),
    ("source", "text"),
    ("message_at", "timestamptz"),
    ("is_pinned", "bool"),
)
"""The columns a batch carries, in the order (and binary types) it is copied in."""
_STAGED_TYPES = [t for _c, t in _STAGED]
_STAGED_LIST = ", ".join(c for c, _t in _STAGED)
_STAGE_TABLE = (
    "CREATE TEMP TABLE IF NOT EXISTS memory_incoming ("
    + ", ".join(f"{c} {t}" for c, t in _STAGED)
    + ") ON COMMIT DELETE ROWS"
)
_SELECT_LIST = ", ".join(
    "coalesce(message_at, now())" if c == "message_at" else c for c, _t in _STAGED
)


def _upsert(has_vector: bool) -> str:
    reset_vector = ", embedding = NULL" if has_vector else ""
    return (
        "WITH previous AS (SELECT m.id, m.message FROM memory m JOIN memory_incoming i"
        "   ON m.external_uuid = i.external_uuid AND m.message IS DISTINCT FROM i.message"
        "   AND m.user_id = %s AND m.agent_platform = i.agent_platform AND m.role = i.role"
        "   AND m.session_id IS NOT DISTINCT FROM i.session_id),"
        " history AS (INSERT INTO memory_history (memory_id, old_message, changed_by)"
        "   SELECT id, message, 'capture' FROM previous)"
        f" INSERT INTO memory (user_id, tag_processed, {_STAGED_LIST})"
        f" SELECT %s, false, {_SELECT_LIST} FROM memory_incoming i"
        # a captured turn that an import (the JS original) already holds is skipped
        f" WHERE i.source <> 'capture' OR {_IMPORTED_TWIN}"
        " ON CONFLICT (external_uuid) DO UPDATE SET"
        "   message = EXCLUDED.message, raw_message = EXCLUDED.raw_message,"
        "   agent_model = coalesce(EXCLUDED.agent_model, memory.agent_model),"
        "   tag_processed = false, cold_error = NULL, cold_attempts = 0,"
        f"   embedding_model = NULL{reset_vector}"
        " WHERE memory.message IS DISTINCT FROM EXCLUDED.message"
        f" AND {identity.SAME_IDENTITY}"
        " RETURNING id, (xmax = 0) AS inserted"
    )


_UPSERT = {True: _upsert(True), False: _upsert(False)}


def insert_memories(
    conn: psycopg.Connection[Any],
    user_id: int,
    rows: Sequence[NewMemory],
    *,
    has_vector: bool = False,
) -> InsertCounts:
    """Insert ``rows``; a known ``external_uuid`` is skipped, unless its text changed (a client
    rewrote the message under the same id): then the new text replaces the old, the old text
    goes to ``memory_history`` and the row is queued again for the Cold Path.

    A key is the same turn only within one user, client, session and role
    (:mod:`agents_memory.store.identity`): a key another turn holds is stored under a scoped
    key (``collisions``), never written over the other turn.
    Within one batch the last row for an identity and key wins. The batch goes to the server
    by binary ``COPY`` into a session-local staging table (:func:`_stage`), then one ``INSERT …
    SELECT … ON CONFLICT`` moves it into ``memory`` (no per-value text encoding on either side).
    A naive ``message_at`` is taken as local time.
    """
    if not rows:
        return InsertCounts()
    with conn.transaction() if conn.autocommit else contextlib.nullcontext():
        resolved = identity.resolve(conn, user_id, rows)
        _stage(conn, resolved.rows)
        # Planned for every batch: a prepared plan made while ``memory`` was small (a hash
        # join over a sequential scan of it) would stay in use as it grows, and every batch
        # would read the whole table (2.3x slower per batch at 60k rows, worse beyond).
        returned = conn.execute(
            _UPSERT[has_vector], (user_id, user_id, user_id), prepare=False
        ).fetchall()
    inserted = sum(1 for _id, was_insert in returned if was_insert)
    updated = len(returned) - inserted
    return InsertCounts(
        inserted=inserted,
        updated=updated,
        skipped=len(rows) - inserted - updated,
        collisions=resolved.collisions,
        ids=tuple(int(r[0]) for r in returned),
    )


def _stage(conn: psycopg.Connection[Any], rows: Sequence[NewMemory]) -> None:
    """Copy ``rows`` into the (emptied) session-local staging table ``memory_incoming``."""
    # One round trip (no parameters: the simple protocol takes both statements); the DELETE
    # empties what an earlier batch of this transaction left.
    conn.execute(_STAGE_TABLE + "; DELETE FROM memory_incoming")
    with conn.cursor().copy(
        f"COPY memory_incoming ({_STAGED_LIST}) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(_STAGED_TYPES)
        for row in rows:
            copy.write_row(_staged_values(row))


def _staged_values(row: NewMemory) -> tuple[Any, ...]:
    """``row``'s values in :data:`_STAGED` order."""
    at = row.message_at
    return (
        row.agent_platform,
        row.agent_model,
        row.subagent,
        row.subagent_model,
        row.subagent_role,
        row.role,
        row.message,
        row.raw_message,
        row.external_uuid,
        row.device_name,
        row.session_id,
        row.cwd,
        row.git_root,
        row.git_remote,
        row.source,
        at if at is None or at.tzinfo is not None else at.astimezone(),
        row.is_pinned,
    )


def notify_new_memories(conn: psycopg.Connection[Any], count: int) -> None:
    """Wake the Cold Path: NOTIFY :data:`NEW_MEMORY_CHANNEL` with ``count`` as the payload
    (delivered when the caller's transaction commits)."""
    conn.execute("SELECT pg_notify(%s, %s)", (NEW_MEMORY_CHANNEL, str(count)))


def recent_memories(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    limit: int = 20,
    platform: str | None = None,
    include_archived: bool = False,
) -> list[MemoryRow]:
    """Newest first by the turn's own time."""
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        cur.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memory WHERE user_id = %s"
            " AND (%s OR is_active) AND (%s::text IS NULL OR agent_platform = %s)"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (user_id, include_archived, platform, platform, limit),
        )
        return cur.fetchall()


def memories_by_uuid(conn: psycopg.Connection[Any], uuids: Sequence[str]) -> list[MemoryRow]:
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        cur.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memory WHERE external_uuid = ANY(%s) ORDER BY id",
            (list(uuids),),
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    total: int
    active: int
    archived: int
    pinned: int
    by_platform: dict[str, int]


def count_memories(conn: psycopg.Connection[Any]) -> MemoryCounts:
    row = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE is_active),"
        " count(*) FILTER (WHERE archived_at IS NOT NULL), count(*) FILTER (WHERE is_pinned)"
        " FROM memory"
    ).fetchone()
    assert row is not None
    per = conn.execute(
        "SELECT agent_platform, count(*) FROM memory GROUP BY 1 ORDER BY 2 DESC"
    ).fetchall()
    return MemoryCounts(
        total=int(row[0]),
        active=int(row[1]),
        archived=int(row[2]),
        pinned=int(row[3]),
        by_platform={str(p): int(n) for p, n in per},
    )
