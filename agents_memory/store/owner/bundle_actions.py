"""Writing a bundle's actions (the agents' tool calls) into the pool: each found by its
identity ``(user, platform, session, key)``, its turn by the bundle's key for it (remapped
like every memory key, :data:`~agents_memory.store.owner.bundle_import.ID_OF_KEY`), inserted
only where its identity is free: an import never replaces a stored action, of this session or
another. The caller decides (:mod:`agents_memory.ops.import_actions`); the caller owns the
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg.rows import class_row

from agents_memory.store.owner.bundle_import import ID_OF_KEY

COMPARED: Final = (
    "tool",
    "kind",
    "targets",
    "command",
    "outcome",
    "exit_code",
    "excerpt",
    "lines_added",
    "lines_removed",
)
"""The columns that say what an action did: a stored action with other values is a conflict."""


@dataclass(frozen=True, slots=True)
class ActionPlace:
    """What the pool holds for one bundle action: its user, its turn (``turn_id``; ``None``
    when the bundle names none or this pool has none), whether a turn of its session is here,
    whether its identity has a tombstone, and the stored action under its identity (its
    :data:`COMPARED` values) if any."""

    user_id: int | None
    turn_id: int | None
    session_known: bool
    buried: bool
    stored: dict[str, Any] | None


_PLACE: Final = (
    "SELECT u.user_id,"
    " (SELECT " + ID_OF_KEY.format(k="%(turn)s::text") + ") AS turn_id,"
    " EXISTS (SELECT 1 FROM memory m WHERE m.user_id = u.user_id"
    "   AND m.agent_platform = %(agent_platform)s AND m.session_id = %(session_id)s::text)"
    "   AS session_known,"
    " EXISTS (SELECT 1 FROM action_tombstones t WHERE t.user_id = u.user_id"
    "   AND t.agent_platform = %(agent_platform)s"
    "   AND t.session_id IS NOT DISTINCT FROM %(session_id)s::text"
    "   AND t.external_key = %(external_key)s) AS buried,"
    " (SELECT jsonb_build_object("
    + ", ".join(f"'{c}', a.{c}" for c in COMPARED)
    + ") FROM actions a"
    "   WHERE a.user_id = u.user_id AND a.agent_platform = %(agent_platform)s"
    "   AND a.session_id IS NOT DISTINCT FROM %(session_id)s::text"
    "   AND a.external_key = %(external_key)s) AS stored"
    " FROM users u WHERE u.user_name = %(user_name)s"
)


def place_action(conn: psycopg.Connection[Any], row: dict[str, Any]) -> ActionPlace:
    """Where bundle action ``row`` would go (one query)."""
    with conn.cursor(row_factory=class_row(ActionPlace)) as cur:
        found = cur.execute(_PLACE, row, prepare=True).fetchone()
    return found if found is not None else ActionPlace(None, None, False, False, None)


_INSERT: Final = (
    "INSERT INTO actions (user_id, agent_platform, session_id, external_key, turn_key,"
    " memory_id, tool, kind, targets, command, outcome, exit_code, excerpt, lines_added,"
    " lines_removed, started_at, duration_ms, device_name, created_at)"
    " VALUES (%(user_id)s, %(agent_platform)s, %(session_id)s, %(external_key)s, %(turn_key)s,"
    " %(memory_id)s, %(tool)s, %(kind)s, %(targets)s::text[], %(command)s, %(outcome)s,"
    " %(exit_code)s, %(excerpt)s, %(lines_added)s, %(lines_removed)s,"
    " %(started_at)s::timestamptz, %(duration_ms)s, %(device_name)s,"
    " coalesce(%(created_at)s::timestamptz, now()))"
    " ON CONFLICT ON CONSTRAINT actions_identity DO NOTHING RETURNING id"
)


def insert_action(conn: psycopg.Connection[Any], row: dict[str, Any]) -> bool:
    """Insert one action (``row``: its columns, ``user_id`` and ``memory_id`` resolved)
    unless its identity is taken meanwhile; True when inserted."""
    return conn.execute(_INSERT, row, prepare=True).fetchone() is not None
