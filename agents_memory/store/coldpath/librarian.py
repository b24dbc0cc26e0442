"""The librarian's bookkeeping on ``users`` and the user turns it reads.

``librarian_last_run_at`` is written at every attempt (before the LLM call: a hammer guard);
``librarian_msg_count_at_run`` only on success, so a failed run is retried once the cooldown
passes. Profile writes go through :func:`agents_memory.store.knowledge.set_profile` (history).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row


@dataclass(frozen=True, slots=True)
class LibrarianState:
    last_run_at: datetime | None
    msg_count_at_run: int | None
    user_turns: int
    """``role='user'`` rows now, archived ones included (so archiving never looks like fewer
    new turns)."""

    @property
    def new_turns(self) -> int:
        return self.user_turns - (self.msg_count_at_run or 0)


@dataclass(frozen=True, slots=True)
class UserTurn:
    id: int
    message: str
    message_at: datetime


def librarian_state(conn: psycopg.Connection[Any], user_id: int) -> LibrarianState:
    row = conn.execute(
        "SELECT u.librarian_last_run_at, u.librarian_msg_count_at_run,"
        " (SELECT count(*) FROM memory m WHERE m.user_id = u.user_id AND m.role = 'user')"
        " FROM users u WHERE u.user_id = %s",
        (user_id,),
    ).fetchone()
    if row is None:
        return LibrarianState(None, None, 0)
    return LibrarianState(row[0], None if row[1] is None else int(row[1]), int(row[2]))


def mark_attempt(conn: psycopg.Connection[Any], user_id: int, at: datetime) -> None:
    conn.execute("UPDATE users SET librarian_last_run_at = %s WHERE user_id = %s", (at, user_id))


def mark_success(conn: psycopg.Connection[Any], user_id: int, user_turns: int) -> None:
    conn.execute(
        "UPDATE users SET librarian_msg_count_at_run = %s WHERE user_id = %s",
        (user_turns, user_id),
    )


def user_turn_slices(
    conn: psycopg.Connection[Any], user_id: int, *, recent: int, oldest: int, max_chars: int
) -> tuple[list[UserTurn], list[UserTurn]]:
    """The ``recent`` newest user turns (oldest first) and the ``oldest`` first ones not
    among them (the identity anchors), each message cut to ``max_chars``."""
    with conn.cursor(row_factory=class_row(UserTurn)) as cur:
        cur.execute(
            "SELECT id, left(message, %s) AS message, message_at FROM memory"
            " WHERE user_id = %s AND role = 'user' AND is_active"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (max_chars, user_id, recent),
        )
        newest = cur.fetchall()
        cur.execute(
            "SELECT id, left(message, %s) AS message, message_at FROM memory"
            " WHERE user_id = %s AND role = 'user' AND is_active AND NOT (id = ANY(%s))"
            " ORDER BY message_at, id LIMIT %s",
            (max_chars, user_id, [t.id for t in newest], oldest),
        )
        anchors = cur.fetchall()
    return list(reversed(newest)), anchors
