"""Bringing an archived row back (``mcp-agents-memory restore``); archiving itself is
:func:`agents_memory.store.knowledge.archive_memory` and the Clusterer's age-based archive."""

from __future__ import annotations

from typing import Any, Literal

import psycopg

RestoreOutcome = Literal["restored", "not-archived", "unknown"]


def unarchive_memory(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> RestoreOutcome:
    """Make ``user_id``'s row ``memory_id`` active again (``is_active``, no ``archived_at``)."""
    row = conn.execute(
        "SELECT is_active FROM memory WHERE id = %s AND user_id = %s FOR UPDATE",
        (memory_id, user_id),
    ).fetchone()
    if row is None:
        return "unknown"
    if row[0]:
        return "not-archived"
    conn.execute(
        "UPDATE memory SET is_active = true, archived_at = NULL WHERE id = %s", (memory_id,)
    )
    return "restored"
