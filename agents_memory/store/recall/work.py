"""The queries behind the brief's "recent work": the files the agents' actions touched most in
the last sessions, and the last failing command. Both bounded (the short-term window, a few
sessions, LIMIT) and served by the memory's and the actions' identity indexes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import class_row


@dataclass(frozen=True, slots=True)
class TouchedFile:
    path: str
    touches: int
    """Edits and writes that did not fail."""
    sessions: int
    last_at: datetime | None


@dataclass(frozen=True, slots=True)
class FailedCommand:
    command: str
    excerpt: str | None
    exit_code: int | None
    agent_platform: str
    at: datetime
    git_root: str | None
    """The project of its session (``None``: none known)."""


_SESSIONS: Final = (
    "SELECT agent_platform, session_id, max(message_at) AS last_at FROM memory"
    " WHERE user_id = %(user)s AND session_id IS NOT NULL AND message_at >= %(since)s"
    " AND (%(root)s::text IS NULL OR git_root = %(root)s::text)"
    " GROUP BY 1, 2 ORDER BY 3 DESC LIMIT %(sessions)s"
)


def touched_files(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    git_root: str | None,
    since: datetime,
    sessions: int,
    limit: int,
) -> list[TouchedFile]:
    """The files edited or written most in the last ``sessions`` sessions since ``since``
    (of the project at ``git_root``, or of any), most touched first, then the latest."""
    with conn.cursor(row_factory=class_row(TouchedFile)) as cur:
        cur.execute(
            f"WITH s AS ({_SESSIONS})"
            " SELECT t AS path, count(*)::int AS touches,"
            " count(DISTINCT (a.agent_platform, a.session_id))::int AS sessions,"
            " max(coalesce(a.started_at, a.created_at)) AS last_at"
            " FROM s JOIN actions a ON a.user_id = %(user)s AND a.agent_platform = s.agent_platform"
            "   AND a.session_id = s.session_id"
            " CROSS JOIN LATERAL unnest(a.targets) AS t"
            " WHERE a.kind IN ('edit', 'write') AND a.outcome IN ('ok', 'unknown')"
            " GROUP BY t ORDER BY 2 DESC, 4 DESC NULLS LAST, 1 LIMIT %(limit)s",
            {
                "user": user_id,
                "since": since,
                "root": git_root,
                "sessions": sessions,
                "limit": limit,
            },
        )
        return cur.fetchall()


def last_failed_command(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    git_root: str | None,
    since: datetime,
    sessions: int,
) -> FailedCommand | None:
    """The newest shell command that failed in the last ``sessions`` sessions since ``since``:
    one of the project at ``git_root`` first, else the newest of any project's last sessions
    (its project says where). Served by the actions' identity index, session by session."""
    with conn.cursor(row_factory=class_row(FailedCommand)) as cur:
        cur.execute(
            f"WITH here AS ({_SESSIONS}), anywhere AS ("
            + _SESSIONS.replace("%(root)s", "NULL")
            + "), s AS (SELECT * FROM here UNION SELECT * FROM anywhere)"
            " SELECT a.command, a.excerpt, a.exit_code, a.agent_platform,"
            "   coalesce(a.started_at, a.created_at) AS at,"
            "   coalesce((SELECT m.git_root FROM memory m WHERE m.id = a.memory_id),"
            "     (SELECT m.git_root FROM memory m WHERE m.user_id = a.user_id"
            "       AND m.agent_platform = a.agent_platform AND m.session_id = a.session_id"
            "       AND m.git_root IS NOT NULL LIMIT 1)) AS git_root"
            " FROM s JOIN actions a ON a.user_id = %(user)s AND a.agent_platform = s.agent_platform"
            "   AND a.session_id = s.session_id"
            " WHERE a.kind = 'shell' AND a.command IS NOT NULL"
            "   AND (a.outcome = 'error' OR a.exit_code <> 0)"
            " ORDER BY EXISTS (SELECT 1 FROM here h WHERE h.agent_platform = a.agent_platform"
            "   AND h.session_id = a.session_id) AND %(root)s::text IS NOT NULL DESC,"
            " 5 DESC, a.id DESC LIMIT 1",
            {"user": user_id, "since": since, "root": git_root, "sessions": sessions},
        )
        return cur.fetchone()
