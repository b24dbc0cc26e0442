"""Capture cursors: how far each transcript file has been read, per device.

Read and advance them inside the transaction that stores the rows they produced: a rolled
back transaction then leaves neither rows nor a moved cursor. ``lock_cursor`` takes a row lock
so two daemons (or a daemon and a backfill) take turns on one file instead of racing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from agents_memory.store.capture import MINE


@dataclass(frozen=True, slots=True)
class Cursor:
    platform: str
    device_name: str
    path: str
    dev: int | None = None
    inode: int | None = None
    size: int = 0
    offset: int = 0
    last_line_hash: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    rows_captured: int = 0
    issues: int = 0
    last_issue: str | None = None
    repaired: int = 0
    """Records kept after their invalid UTF-8 was replaced by U+FFFD."""
    rescans: int = 0
    last_capture_at: datetime | None = None
    updated_at: datetime | None = None

    def restarted(self) -> Cursor:
        """The same file read again from the start (it shrank, was replaced or rewritten)."""
        return replace(
            self, offset=0, size=0, last_line_hash=None, state={}, rescans=self.rescans + 1
        )


_COLUMNS = (
    'platform, device_name, path, dev, inode, size, "offset", last_line_hash, state,'
    " unknown_kinds, rows_captured, issues, last_issue, repaired, rescans, last_capture_at,"
    " updated_at"
)


def get_cursor(conn: psycopg.Connection[Any], device_name: str, path: str) -> Cursor | None:
    with conn.cursor(row_factory=class_row(Cursor)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM capture_cursors WHERE device_name = %s AND path = %s"
            f" AND user_id {MINE}",
            (device_name, path),
        )
        return cur.fetchone()


def lock_cursor(
    conn: psycopg.Connection[Any], platform: str, device_name: str, path: str
) -> Cursor:
    """Create the cursor if missing and lock it ``FOR UPDATE`` until the transaction ends."""
    if conn.autocommit:
        raise ValueError("lock_cursor() needs a transaction")
    conn.execute(
        "INSERT INTO capture_cursors (platform, device_name, path) VALUES (%s, %s, %s)"
        " ON CONFLICT (device_name, path, user_id) DO NOTHING",
        (platform, device_name, path),
    )
    with conn.cursor(row_factory=class_row(Cursor)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM capture_cursors WHERE device_name = %s AND path = %s"
            f" AND user_id {MINE} FOR UPDATE",
            (device_name, path),
        )
        found = cur.fetchone()
    assert found is not None
    return found


def save_cursor(
    conn: psycopg.Connection[Any],
    cursor: Cursor,
    *,
    rows: int = 0,
    unknown: Mapping[str, int] | None = None,
    issues: int = 0,
    last_issue: str | None = None,
    repaired: int = 0,
) -> None:
    """Write ``cursor``, adding ``rows``/``unknown``/``issues``/``repaired`` to its running
    totals."""
    kinds = Counter(cursor.unknown_kinds)
    kinds.update(unknown or {})
    conn.execute(
        "UPDATE capture_cursors SET platform = %s, dev = %s, inode = %s, size = %s,"
        ' "offset" = %s, last_line_hash = %s, state = %s, unknown_kinds = %s,'
        " rows_captured = rows_captured + %s, issues = issues + %s,"
        " last_issue = coalesce(%s, last_issue), repaired = repaired + %s, rescans = %s,"
        " last_capture_at = CASE WHEN %s > 0 THEN now() ELSE last_capture_at END,"
        " updated_at = now()"
        f" WHERE device_name = %s AND path = %s AND user_id {MINE}",
        (
            cursor.platform,
            cursor.dev,
            cursor.inode,
            cursor.size,
            cursor.offset,
            cursor.last_line_hash,
            Jsonb(cursor.state),
            Jsonb(dict(kinds)),
            rows,
            issues,
            last_issue,
            repaired,
            cursor.rescans,
            rows,
            cursor.device_name,
            cursor.path,
        ),
    )


@contextmanager
def deferred_flush(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Commits inside the block return before their WAL reaches the disk
    (``synchronous_commit = off``); leaving the block flushes them all with one durable commit.

    Safe for capture, and only for it: rows and their cursor commit together, so a server crash
    inside the block loses the newest commits whole (rows and cursor, in commit order) and the
    files are read again from the older cursor. Nothing is lost and nothing doubles; once the
    block is left everything is as durable as with synchronous commits.
    """
    if conn.autocommit:
        raise ValueError("deferred_flush() needs a non-autocommit connection")
    conn.execute("SET synchronous_commit = off")
    conn.commit()
    yield
    with conn.transaction():
        # A transaction with an xid writes a commit record, and a synchronous commit flushes
        # the WAL up to it: every deferred commit before it included.
        conn.execute("SET LOCAL synchronous_commit = on")
        conn.execute("SELECT pg_current_xact_id()")
    conn.execute("RESET synchronous_commit")
    conn.commit()


def list_cursors(conn: psycopg.Connection[Any], device_name: str | None = None) -> list[Cursor]:
    with conn.cursor(row_factory=class_row(Cursor)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM capture_cursors WHERE user_id {MINE}"
            " AND (%s::text IS NULL OR device_name = %s) ORDER BY platform, path",
            (device_name, device_name),
        )
        return cur.fetchall()
