"""Task pins: an append-only log of hand-offs between agents (``task_pin_events``).

A pin is the history of one ``pin_id`` (the id of its ``create`` event); its current state is
its newest event. Rows are only ever inserted: there is no update or delete here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

PinStatus = Literal["pending", "in_progress", "done", "failed"]
OPEN_STATUSES: tuple[PinStatus, ...] = ("pending", "in_progress")


@dataclass(frozen=True, slots=True)
class PinEvent:
    id: int
    pin_id: int
    event: str
    status: str
    title: str
    note: str | None
    from_agent: str | None
    to_agent: str
    project: str | None
    payload: Any
    device_name: str | None
    created_at: datetime
    user_id: int | None = None
    """Whose log the pin is in: its sender."""
    to_user_id: int | None = None
    """The teammate the pin is for (``None``: the sender's own agents)."""


@dataclass(frozen=True, slots=True)
class NewPin:
    to_agent: str
    title: str
    from_agent: str | None
    project: str | None
    payload: Any
    device_name: str | None
    to_user_id: int | None = None
    """A teammate's person (migration 0022: they read it and append its progress)."""


ANY_AGENT = "*"
"""``to_agent`` of a pin for any of a teammate's agents."""


_COLUMNS = (
    "id, pin_id, event, status, title, note, from_agent, to_agent, project, payload,"
    " device_name, created_at, user_id, to_user_id"
)
_MINE = "(user_id = %(user)s OR to_user_id = %(user)s)"
"""The pins a person sees: those they sent, and those addressed to them."""


def create_pin(conn: psycopg.Connection[Any], user_id: int, pin: NewPin) -> PinEvent:
    """Append the ``create`` event of a new pin (status ``pending``)."""
    with conn.cursor(row_factory=class_row(PinEvent)) as cur:
        cur.execute(
            "WITH n AS (SELECT nextval(pg_get_serial_sequence('task_pin_events', 'id')) AS id)"
            " INSERT INTO task_pin_events (id, user_id, pin_id, event, status, title,"
            "  from_agent, to_agent, project, payload, device_name, to_user_id)"
            " SELECT n.id, %s, n.id, 'create', 'pending', %s, %s, %s, %s, %s, %s, %s FROM n"
            f" RETURNING {_COLUMNS}",
            (
                user_id,
                pin.title,
                pin.from_agent,
                pin.to_agent,
                pin.project,
                Jsonb(pin.payload) if pin.payload is not None else None,
                pin.device_name,
                pin.to_user_id,
            ),
        )
        row = cur.fetchone()
    assert row is not None
    return row


def append_update(
    conn: psycopg.Connection[Any],
    user_id: int,
    pin_id: int,
    *,
    status: PinStatus,
    note: str | None,
    by_agent: str | None,
    device_name: str | None,
) -> PinEvent:
    """Append an ``update`` event (the pin's title, recipient, project and payload carry over,
    in its sender's log: the addressee's progress too); the caller has checked the transition
    against :func:`current`."""
    with conn.cursor(row_factory=class_row(PinEvent)) as cur:
        cur.execute(
            "INSERT INTO task_pin_events (user_id, pin_id, event, status, title, note,"
            "  from_agent, to_agent, project, payload, device_name, to_user_id)"
            " SELECT user_id, pin_id, 'update', %(status)s, title, %(note)s, %(by)s, to_agent,"
            "  project, payload, %(device)s, to_user_id"
            f" FROM task_pin_events WHERE id = %(pin)s AND {_MINE}"
            f" RETURNING {_COLUMNS}",
            {
                "status": status,
                "note": note,
                "by": by_agent,
                "device": device_name,
                "pin": pin_id,
                "user": user_id,
            },
        )
        row = cur.fetchone()
    assert row is not None
    return row


def lock_pin(conn: psycopg.Connection[Any], user_id: int, pin_id: int) -> None:
    """Serialise updates of one pin until the transaction ends (a row lock on its ``create``
    event; nothing is modified)."""
    conn.execute(
        f"SELECT 1 FROM task_pin_events WHERE id = %(pin)s AND {_MINE} FOR UPDATE",
        {"pin": pin_id, "user": user_id},
    )


def history(conn: psycopg.Connection[Any], user_id: int, pin_id: int) -> list[PinEvent]:
    """Every event of one pin, oldest first (empty when there is no such pin for
    ``user_id``: one they sent or one addressed to them)."""
    with conn.cursor(row_factory=class_row(PinEvent)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM task_pin_events WHERE {_MINE} AND pin_id = %(pin)s"
            " ORDER BY id",
            {"user": user_id, "pin": pin_id},
        )
        return cur.fetchall()


def current(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    to_agent: str | None = None,
    statuses: tuple[str, ...] | None = None,
    project: str | None = None,
    limit: int = 50,
) -> list[PinEvent]:
    """The newest event of each pin (its current state), newest pins first, filtered by
    recipient, current status and project. With ``to_agent``: the pins for that agent of
    ``user_id``'s (their own, and a teammate's addressed to them or to any of their agents)."""
    with conn.cursor(row_factory=class_row(PinEvent)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM ("
            f"  SELECT DISTINCT ON (pin_id) {_COLUMNS} FROM task_pin_events"
            f"   WHERE {_MINE} AND (%(to)s::text IS NULL OR (coalesce(to_user_id, user_id)"
            "    = %(user)s AND to_agent IN (%(to)s, '*')))"
            "   AND (%(project)s::text IS NULL OR project = %(project)s)"
            "   ORDER BY pin_id, id DESC) AS latest"
            " WHERE %(statuses)s::text[] IS NULL OR status = ANY(%(statuses)s)"
            " ORDER BY pin_id DESC LIMIT %(limit)s",
            {
                "user": user_id,
                "to": to_agent,
                "project": project,
                "statuses": list(statuses) if statuses else None,
                "limit": limit,
            },
        )
        return cur.fetchall()
