"""Writing a bundle's task pins and tombstones into the pool, each only where an equal row is
missing (so a second import changes nothing).

A task pin is named by a key of its ``create`` event
(:data:`~agents_memory.store.owner.bundle.PIN_KEY_SQL`): its create event comes in as a new
pin here (a new ``pin_id``), its updates join the pin that key names. A tombstone is the same
when its key (or, without one, its text hash) is; an action tombstone by its identity. The
caller owns the transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.types.json import Jsonb

from agents_memory.store.owner.bundle import PIN_KEY_SQL

_PIN_HERE: Final = (
    "(SELECT c.id FROM task_pin_events c WHERE c.user_id = u.user_id AND c.event = 'create'"
    " AND " + PIN_KEY_SQL + " = %(pin)s::text ORDER BY c.id LIMIT 1)"
)
"""The ``pin_id`` here of the pin the bundle names ``pin`` (``u`` is its user)."""

_PIN_COLUMNS: Final = (
    "%(event)s::text, %(status)s::text, %(title)s::text, %(note)s::text,"
    " %(from_agent)s::text, %(to_agent)s::text, %(project)s::text, %(payload)s::jsonb,"
    " %(device_name)s::text, %(created_at)s::timestamptz"
)

INSERTS: Final[dict[str, str]] = {
    "task_pins": (
        "WITH u AS (SELECT user_id FROM users WHERE user_name = %(user_name)s),"
        " here AS (SELECT " + _PIN_HERE + " AS pin_id FROM u),"
        " n AS (SELECT nextval(pg_get_serial_sequence('task_pin_events', 'id')) AS id"
        "   FROM here WHERE %(event)s::text = 'create' AND here.pin_id IS NULL)"
        " INSERT INTO task_pin_events (id, user_id, pin_id, event, status, title, note,"
        "  from_agent, to_agent, project, payload, device_name, created_at)"
        " SELECT n.id, u.user_id, n.id, " + _PIN_COLUMNS + " FROM n, u"
        " UNION ALL SELECT nextval(pg_get_serial_sequence('task_pin_events', 'id')),"
        "  u.user_id, here.pin_id, " + _PIN_COLUMNS + " FROM u, here"
        "  WHERE %(event)s::text = 'update' AND here.pin_id IS NOT NULL"
        "  AND NOT EXISTS (SELECT 1 FROM task_pin_events e WHERE e.pin_id = here.pin_id"
        "   AND e.event = 'update' AND e.created_at = %(created_at)s::timestamptz"
        "   AND e.status = %(status)s::text AND e.note IS NOT DISTINCT FROM %(note)s::text)"
        " RETURNING id"
    ),
    "tombstones": (
        "INSERT INTO tombstones (external_uuid, content_sha256, agent_platform, session_id,"
        " role, reason, created_at) SELECT %(external_uuid)s::text, %(content_sha256)s::text,"
        " %(agent_platform)s::text, %(session_id)s::text, %(role)s::text, %(reason)s::text,"
        " %(created_at)s::timestamptz WHERE NOT EXISTS (SELECT 1 FROM tombstones t"
        "   WHERE t.external_uuid IS NOT DISTINCT FROM %(external_uuid)s::text"
        "   AND t.user_id IS NOT DISTINCT FROM (SELECT am_me())"
        "   AND (t.external_uuid IS NOT NULL OR t.content_sha256 = %(content_sha256)s::text))"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
    "action_tombstones": (
        "INSERT INTO action_tombstones (user_id, agent_platform, session_id, external_key,"
        " reason, created_at) SELECT u.user_id, %(agent_platform)s::text,"
        " %(session_id)s::text, %(external_key)s::text, %(reason)s::text,"
        " %(created_at)s::timestamptz FROM users u WHERE u.user_name = %(user_name)s"
        " ON CONFLICT ON CONSTRAINT action_tombstones_identity DO NOTHING RETURNING id"
    ),
}
"""Each member's insert of one bundle row; it returns a row when it inserted."""


def insert_row(conn: psycopg.Connection[Any], table: str, row: dict[str, Any]) -> bool:
    """Insert one bundle row of ``table`` (a key of :data:`INSERTS`) unless an equal one is
    here; True when inserted."""
    if table == "task_pins":
        payload = row.get("payload")
        row = {**row, "payload": Jsonb(payload) if payload is not None else None}
    return conn.execute(INSERTS[table], row, prepare=True).fetchone() is not None


def pin_known(conn: psycopg.Connection[Any], user_name: str, pin: str) -> bool:
    """Whether this pool holds the pin the bundle names ``pin`` (of user ``user_name``)."""
    row = conn.execute(
        "SELECT " + _PIN_HERE + " FROM users u WHERE u.user_name = %(user_name)s",
        {"user_name": user_name, "pin": pin},
    ).fetchone()
    return row is not None and row[0] is not None


def pin_key(conn: psycopg.Connection[Any], created_at: datetime, to_agent: str, title: str) -> str:
    """The key of a pin whose create event has these values (as a bundle names it)."""
    row = conn.execute(
        "SELECT " + PIN_KEY_SQL + " FROM (SELECT %s::timestamptz AS created_at,"
        " %s::text AS to_agent, %s::text AS title) c",
        (created_at, to_agent, title),
    ).fetchone()
    assert row is not None
    return str(row[0])


def user_name(conn: psycopg.Connection[Any], user_id: int) -> str:
    row = conn.execute("SELECT user_name FROM users WHERE user_id = %s", (user_id,)).fetchone()
    assert row is not None
    return str(row[0])
