"""Writing a bundle's actions (the agents' tool calls) into the pool: each found by its
identity ``(user, platform, session, key)``, its turn by the bundle's key for it (remapped
like every memory key, :data:`~agents_memory.store.owner.bundle_import.ID_OF_KEY`), inserted
only where its identity is free: an import never replaces a stored action, of this session or
another. The caller decides (:mod:`agents_memory.ops.import_actions`); the caller owns the
transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

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


_STORED: Final = "jsonb_build_object(" + ", ".join(f"'{c}', a.{c}" for c in COMPARED) + ")"
"""A stored action's :data:`COMPARED` values (``a`` is the action row)."""

_PLACES: Final = (
    # `=` on every identity column (a NULL session in a branch of its own): the identity's
    # index serves each lookup, also in a database whose statistics do not know the table yet
    "SELECT u.user_id,"
    " (SELECT " + ID_OF_KEY.format(k="x.turn") + ") AS turn_id,"
    " EXISTS (SELECT 1 FROM memory m WHERE m.user_id = u.user_id"
    "   AND m.agent_platform = x.agent_platform AND m.session_id = x.session_id)"
    "   AS session_known,"
    " EXISTS (SELECT 1 FROM action_tombstones t WHERE t.user_id = u.user_id"
    "   AND t.agent_platform = x.agent_platform AND t.session_id = x.session_id"
    "   AND t.external_key = x.external_key UNION ALL SELECT 1 FROM action_tombstones t"
    "   WHERE x.session_id IS NULL AND t.user_id = u.user_id"
    "   AND t.agent_platform = x.agent_platform AND t.session_id IS NULL"
    "   AND t.external_key = x.external_key) AS buried,"
    " coalesce((SELECT " + _STORED + " FROM actions a WHERE a.user_id = u.user_id"
    "   AND a.agent_platform = x.agent_platform AND a.session_id = x.session_id"
    "   AND a.external_key = x.external_key),"
    " (SELECT " + _STORED + " FROM actions a WHERE x.session_id IS NULL"
    "   AND a.user_id = u.user_id AND a.agent_platform = x.agent_platform"
    "   AND a.session_id IS NULL AND a.external_key = x.external_key)) AS stored"
    " FROM jsonb_to_recordset(%s::jsonb) AS x(n int, user_name text, agent_platform text,"
    "   session_id text, external_key text, turn text)"
    " LEFT JOIN users u ON u.user_name = x.user_name ORDER BY x.n"
)


def place_actions(
    conn: psycopg.Connection[Any], rows: Sequence[dict[str, Any]]
) -> list[ActionPlace]:
    """Where each of ``rows`` would go (one query for the batch, in their order)."""
    keys = ("user_name", "agent_platform", "session_id", "external_key", "turn")
    batch = [{"n": n, **{k: row.get(k) for k in keys}} for n, row in enumerate(rows)]
    with conn.cursor(row_factory=class_row(ActionPlace)) as cur:
        return cur.execute(_PLACES, (Jsonb(batch),)).fetchall()


_INSERT_MANY: Final = (
    "INSERT INTO actions (user_id, agent_platform, session_id, external_key, turn_key,"
    " memory_id, tool, kind, targets, command, outcome, exit_code, excerpt, lines_added,"
    " lines_removed, started_at, duration_ms, device_name, created_at)"
    " SELECT x.user_id, x.agent_platform, x.session_id, x.external_key, x.turn_key,"
    " x.memory_id, x.tool, x.kind, x.targets, x.command, x.outcome, x.exit_code, x.excerpt,"
    " x.lines_added, x.lines_removed, x.started_at, x.duration_ms, x.device_name,"
    " coalesce(x.created_at, now())"
    " FROM jsonb_to_recordset(%s::jsonb) AS x(user_id bigint, agent_platform text,"
    "   session_id text, external_key text, turn_key text, memory_id bigint, tool text,"
    "   kind text, targets text[], command text, outcome text, exit_code int, excerpt text,"
    "   lines_added int, lines_removed int, started_at timestamptz, duration_ms int,"
    "   device_name text, created_at timestamptz)"
    " ON CONFLICT ON CONSTRAINT actions_identity DO NOTHING"
    " RETURNING agent_platform, session_id, external_key"
)


def insert_actions(
    conn: psycopg.Connection[Any], rows: Sequence[dict[str, Any]]
) -> set[tuple[str, str | None, str]]:
    """Insert ``rows`` (their columns, ``user_id`` and ``memory_id`` resolved; identities
    distinct) where their identity is free; the identities inserted."""
    if not rows:
        return set()
    found = conn.execute(_INSERT_MANY, (Jsonb(list(rows)),)).fetchall()
    return {(str(p), s, str(k)) for p, s, k in found}


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
