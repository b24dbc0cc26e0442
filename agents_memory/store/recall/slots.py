"""Fact slots: a pinned memory may fill a named slot (``db.staging.port``); one live value per
slot and user. A new value supersedes the live one, which stays as history: unpinned and
archived (found by search only with ``include_archived``), pointing at its successor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row


@dataclass(frozen=True, slots=True)
class SlotValue:
    id: int
    slot: str
    message: str
    message_at: datetime
    expires_at: datetime | None


_COLUMNS = "id, slot, message, message_at, expires_at"


def lock_slot(conn: psycopg.Connection[Any], user_id: int, slot: str) -> None:
    """Serialise writers of one slot until the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (user_id, slot))


def live_value(conn: psycopg.Connection[Any], user_id: int, slot: str) -> SlotValue | None:
    """The slot's current value, expired or not (``None`` when the slot is empty)."""
    with conn.cursor(row_factory=class_row(SlotValue)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM memory WHERE user_id = %s AND slot = %s"
            " AND superseded_by IS NULL AND is_active",
            (user_id, slot),
        )
        return cur.fetchone()


def fill_slot(
    conn: psycopg.Connection[Any],
    user_id: int,
    memory_id: int,
    slot: str | None,
    expires_at: datetime | None,
) -> int | None:
    """Make ``memory_id`` the slot's value (and set its expiry); the previous value is
    superseded. Returns the superseded row's id. Call :func:`lock_slot` first."""
    previous: int | None = None
    if slot is not None:
        row = conn.execute(
            "UPDATE memory SET superseded_by = %s, superseded_at = now(), is_pinned = false,"
            " is_active = false, archived_at = now()"
            " WHERE user_id = %s AND slot = %s AND superseded_by IS NULL AND is_active"
            " AND id <> %s RETURNING id",
            (memory_id, user_id, slot, memory_id),
        ).fetchone()
        previous = int(row[0]) if row else None
    conn.execute(
        "UPDATE memory SET slot = %s, expires_at = %s WHERE id = %s",
        (slot, expires_at, memory_id),
    )
    return previous


def live_slots(conn: psycopg.Connection[Any], user_id: int, limit: int) -> list[SlotValue]:
    """Every slot's live, unexpired value, by slot name."""
    with conn.cursor(row_factory=class_row(SlotValue)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM memory WHERE user_id = %s AND slot IS NOT NULL"
            " AND superseded_by IS NULL AND is_active"
            " AND (expires_at IS NULL OR expires_at > now()) ORDER BY slot LIMIT %s",
            (user_id, limit),
        )
        return cur.fetchall()
