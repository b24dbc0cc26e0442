"""Turns the tagger left without a project, grouped by the folder they were written in, and
filing such a group under a project by hand (``tags file``, the console's Projects page)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import class_row

MAX_FOLDERS: Final = 200


@dataclass(frozen=True, slots=True)
class UntaggedFolder:
    cwd: str | None
    """``None``: the client recorded no folder."""
    turns: int
    sessions: int
    platforms: list[str]
    last_at: datetime | None


_UNTAGGED = "user_id = %s AND is_active AND tag_processed AND p_tag_id IS NULL"


def untagged_folders(
    conn: psycopg.Connection[Any], user_id: int, limit: int = MAX_FOLDERS
) -> list[UntaggedFolder]:
    """The folders of untagged turns, the one with the most turns first."""
    with conn.cursor(row_factory=class_row(UntaggedFolder)) as cur:
        cur.execute(
            "SELECT cwd, count(*)::int AS turns, count(DISTINCT session_id)::int AS sessions,"
            " array_agg(DISTINCT agent_platform ORDER BY agent_platform) AS platforms,"
            f" max(message_at) AS last_at FROM memory WHERE {_UNTAGGED}"
            " GROUP BY cwd ORDER BY count(*) DESC, cwd NULLS LAST LIMIT %s",
            (user_id, min(limit, MAX_FOLDERS)),
        )
        return cur.fetchall()


def untagged_count(conn: psycopg.Connection[Any], user_id: int) -> int:
    row = conn.execute(f"SELECT count(*) FROM memory WHERE {_UNTAGGED}", (user_id,)).fetchone()
    return int(row[0]) if row else 0


def file_folder(conn: psycopg.Connection[Any], user_id: int, tag_id: int, cwd: str | None) -> int:
    """File every untagged turn written in ``cwd`` (``None``: no folder recorded) under
    ``tag_id``; the number filed."""
    cur = conn.execute(
        f"UPDATE memory SET p_tag_id = %s WHERE {_UNTAGGED} AND cwd IS NOT DISTINCT FROM %s",
        (tag_id, user_id, cwd),
    )
    return cur.rowcount
