"""Memory as it was at a moment, for ``read_memory`` with ``as_of`` (``search_memory``'s
``as_of`` is a filter of the search, :func:`agents_memory.store.search.scope.filter_sql`, with
the same rule): a row existed when its ``message_at`` is before the moment; a slot's value then
is the one stored before it that was neither archived (superseded values are) nor expired by
then; a row's text then is the oldest text its history kept from an edit after the moment."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg


def slot_value_at(
    conn: psycopg.Connection[Any], user_id: int, slot: str, at: datetime
) -> int | None:
    """The id of ``slot``'s value live at ``at`` (``None``: the slot had none then)."""
    row = conn.execute(
        "SELECT id FROM memory WHERE user_id = %(u)s AND slot = %(s)s AND message_at < %(at)s"
        " AND (archived_at IS NULL OR archived_at >= %(at)s)"
        " AND (superseded_at IS NULL OR superseded_at >= %(at)s)"
        " AND (expires_at IS NULL OR expires_at >= %(at)s)"
        " ORDER BY message_at DESC, id DESC LIMIT 1",
        {"u": user_id, "s": slot, "at": at},
    ).fetchone()
    return int(row[0]) if row else None


def slot_of(conn: psycopg.Connection[Any], memory_id: int) -> str | None:
    """The slot row ``memory_id`` fills or filled (``None``: it is no slot value)."""
    row = conn.execute("SELECT slot FROM memory WHERE id = %s", (memory_id,)).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def texts_at(
    conn: psycopg.Connection[Any], ids: list[int], at: datetime, *, chars: int
) -> dict[int, str]:
    """The text each of ``ids`` had at ``at`` when an edit changed it since (its first
    ``chars`` characters); rows not edited since are left out."""
    rows = conn.execute(
        "SELECT DISTINCT ON (memory_id) memory_id, left(old_message, %s) FROM memory_history"
        " WHERE memory_id = ANY(%s::bigint[]) AND created_at >= %s"
        " ORDER BY memory_id, created_at, id",
        (chars, ids, at),
    ).fetchall()
    return {int(i): str(text) for i, text in rows}
