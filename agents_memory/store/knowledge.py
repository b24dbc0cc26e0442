"""Deliberate memory edits: pinned knowledge, text updates with history, soft removal,
profiles (with history), embeddings of single rows, and small look-ups the tools need."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from agents_memory.store.memories import MEMORY_COLUMNS, AdmittedText, MemoryRow
from agents_memory.store.owner.profile_sources import profile_sources_update

ProfileField = Literal["core_profile", "sub_profile"]


@dataclass(frozen=True, slots=True)
class Profiles:
    user_name: str
    core_profile: str | None
    sub_profile: str | None


def _columns(chars: int | None) -> str:
    """:data:`MEMORY_COLUMNS`, or with the message cut to its first ``chars`` characters in
    the database and no raw record (a reader that shows a budget of text; a captured turn can
    hold megabytes)."""
    if chars is None:
        return MEMORY_COLUMNS
    cut = f" left(message, {int(chars)}) AS message, NULL::text AS raw_message,"
    return MEMORY_COLUMNS.replace(" message, raw_message,", cut)


VISIBLE = (
    "(user_id = %(user)s OR (user_id, p_tag_id) IN"
    " (SELECT owner_id, tag_id FROM am_shared_pairs()))"
)
"""A row ``%(user)s`` may read: their own, or a teammate's in a project that teammate shares
(:mod:`agents_memory.store.team`; the database's policies enforce the same for a member)."""


def get_memory(
    conn: psycopg.Connection[Any],
    user_id: int,
    memory_id: int,
    *,
    chars: int | None = None,
    visible: bool = False,
) -> MemoryRow | None:
    """Row ``memory_id`` of ``user_id`` (``chars``: its text cut there, see :func:`_columns`);
    with ``visible`` also a teammate's row ``user_id`` may read (to read, never to change)."""
    owned = VISIBLE if visible else "user_id = %(user)s"
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        cur.execute(
            f"SELECT {_columns(chars)} FROM memory WHERE id = %(id)s AND {owned}",
            {"id": memory_id, "user": user_id},
        )
        return cur.fetchone()


def update_memory_text(
    conn: psycopg.Connection[Any],
    memory_id: int,
    text: AdmittedText,
    *,
    changed_by: str,
    has_vector: bool,
) -> None:
    """Replace the text (admitted: see :mod:`agents_memory.admission.admit`), keep the old one
    in ``memory_history``, queue the row again for tagging and embedding (the seed forgot to
    reset ``tag_processed``)."""
    conn.execute(
        "INSERT INTO memory_history (memory_id, old_message, changed_by)"
        " SELECT id, message, %s FROM memory WHERE id = %s",
        (changed_by, memory_id),
    )
    reset = ", embedding = NULL" if has_vector else ""
    conn.execute(
        "UPDATE memory SET message = %s, raw_message = NULL, tag_processed = false,"
        " p_tag_id = NULL, d_tag = '{}', cold_error = NULL, cold_attempts = 0,"
        " embedding_model = NULL" + reset + " WHERE id = %s",
        (text, memory_id),
    )


def archive_memory(conn: psycopg.Connection[Any], memory_id: int) -> None:
    """Soft removal: unpin, deactivate, stamp ``archived_at`` (lossless)."""
    conn.execute(
        "UPDATE memory SET is_pinned = false, is_active = false, archived_at = now() WHERE id = %s",
        (memory_id,),
    )


def set_embedding(conn: psycopg.Connection[Any], memory_id: int, vector: Any, model: str) -> None:
    conn.execute(
        "UPDATE memory SET embedding = %s, embedding_model = %s WHERE id = %s",
        (vector, model, memory_id),
    )


def get_profiles(conn: psycopg.Connection[Any], user_id: int) -> Profiles:
    row = conn.execute(
        "SELECT user_name, core_profile, sub_profile FROM users WHERE user_id = %s", (user_id,)
    ).fetchone()
    if row is None:
        return Profiles("?", None, None)
    return Profiles(row[0], row[1], row[2])


def set_profile(
    conn: psycopg.Connection[Any],
    user_id: int,
    field: ProfileField,
    value: str | None,
    *,
    changed_by: str,
    sources: Sequence[int] | None = (),
) -> None:
    """Write a profile field and record the change in ``profile_history``.

    ``sources``: the memory ids of the turns the value was made from (none for a person's own
    words; ``None``: unknown, e.g. a profile imported from elsewhere). The field's provenance
    (:mod:`agents_memory.store.owner.profile_sources`) grows by them, so a forget of any of those
    turns empties it."""
    column = "core_profile" if field == "core_profile" else "sub_profile"
    params = {
        "field": field,
        "value": value,
        "by": changed_by,
        "user": user_id,
        "unknown": sources is None,
        "sources": sorted(set(sources or ())),
    }
    conn.execute(
        sql.SQL(
            "INSERT INTO profile_history (user_id, field, old_value, new_value, changed_by,"
            " source_ids) SELECT user_id, %(field)s, {col}, %(value)s, %(by)s,"
            " CASE WHEN %(unknown)s THEN NULL ELSE %(sources)s::bigint[] END"
            " FROM users WHERE user_id = %(user)s"
        ).format(col=sql.Identifier(column)),
        params,
    )
    conn.execute(
        sql.SQL("UPDATE users SET {col} = %(value)s, {sources} WHERE user_id = %(user)s").format(
            col=sql.Identifier(column), sources=profile_sources_update(column)
        ),
        params,
    )


def latest_model(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str | None
) -> str | None:
    """The model of the newest assistant turn of this session (else of this platform)."""
    if session_id:
        row = conn.execute(
            "SELECT agent_model FROM memory WHERE user_id = %s AND agent_platform = %s"
            " AND session_id = %s AND role = 'assistant' AND agent_model IS NOT NULL"
            " ORDER BY message_at DESC LIMIT 1",
            (user_id, platform, session_id),
        ).fetchone()
        if row:
            return str(row[0])
    row = conn.execute(
        "SELECT agent_model FROM memory WHERE user_id = %s AND agent_platform = %s"
        " AND role = 'assistant' AND agent_model IS NOT NULL AND is_active"
        " ORDER BY message_at DESC LIMIT 1",
        (user_id, platform),
    ).fetchone()
    return str(row[0]) if row else None


def session_neighbours(
    conn: psycopg.Connection[Any],
    user_id: int,
    anchor: MemoryRow,
    *,
    direction: Literal["before", "after"],
    limit: int,
    chars: int | None = None,
    until: datetime | None = None,
) -> list[MemoryRow]:
    """Up to ``limit`` turns of the anchor's session (same platform and session id) nearest to
    it on one side, nearest first; archived turns included (reading is lossless); with
    ``until``, only the turns stored before it."""
    if anchor.session_id is None or limit <= 0:
        return []
    compare, order = ("<", "DESC") if direction == "before" else (">", "ASC")
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        cur.execute(
            f"SELECT {_columns(chars)} FROM memory WHERE user_id = %s AND agent_platform = %s"
            f" AND session_id = %s AND (message_at, id) {compare} (%s, %s)"
            " AND message_at < coalesce(%s, 'infinity'::timestamptz)"
            f" ORDER BY message_at {order}, id {order} LIMIT %s",
            (
                user_id,
                anchor.agent_platform,
                anchor.session_id,
                anchor.message_at,
                anchor.id,
                until,
                limit,
            ),
        )
        return cur.fetchall()


def session_first_turn(
    conn: psycopg.Connection[Any],
    user_id: int,
    session_id: str,
    *,
    chars: int | None = None,
    until: datetime | None = None,
) -> MemoryRow | None:
    """The first turn of a session (of the platform that has most of it when ids collide);
    with ``until``, stored before it."""
    with conn.cursor(row_factory=class_row(MemoryRow)) as cur:
        cur.execute(
            f"SELECT {_columns(chars)} FROM memory WHERE user_id = %s AND session_id = %s"
            " AND message_at < coalesce(%s, 'infinity'::timestamptz)"
            " ORDER BY message_at, id LIMIT 1",
            (user_id, session_id, until),
        )
        return cur.fetchone()


def session_size(
    conn: psycopg.Connection[Any], user_id: int, anchor: MemoryRow, until: datetime | None = None
) -> int:
    row = conn.execute(
        "SELECT count(*) FROM memory WHERE user_id = %s AND agent_platform = %s"
        " AND session_id = %s AND message_at < coalesce(%s, 'infinity'::timestamptz)",
        (user_id, anchor.agent_platform, anchor.session_id, until),
    ).fetchone()
    return int(row[0]) if row else 0
