"""The queries behind the session-start brief. Each is bounded (LIMIT, time window) and served
by an index, so the brief stays fast on a large pool."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row


@dataclass(frozen=True, slots=True)
class BriefTurn:
    id: int
    role: str
    message: str
    agent_platform: str
    agent_model: str | None
    device_name: str | None
    message_at: datetime
    git_root: str | None


@dataclass(frozen=True, slots=True)
class ActiveProject:
    name: str
    turns: int
    last_at: datetime


@dataclass(frozen=True, slots=True)
class TagSummaryLine:
    tag: str
    period_start: datetime
    period_end: datetime
    summary: str


@dataclass(frozen=True, slots=True)
class PendingQuestion:
    kind: str
    text: str


_TURN = "id, role, message, agent_platform, agent_model, device_name, message_at, git_root"


def pinned(conn: psycopg.Connection[Any], user_id: int, limit: int) -> list[BriefTurn]:
    with conn.cursor(row_factory=class_row(BriefTurn)) as cur:
        cur.execute(
            f"SELECT {_TURN} FROM memory WHERE user_id = %s AND is_pinned AND is_active"
            " AND slot IS NULL AND (expires_at IS NULL OR expires_at > now())"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (user_id, limit),
        )
        return cur.fetchall()


def recent_turns(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    since: datetime,
    platform: str | None,
    model: str | None,
    limit: int,
) -> list[BriefTurn]:
    """Newest first. With ``platform`` (and ``model``), that agent's turns; a user turn is
    kept with its platform's assistant turns whatever model answered it."""
    with conn.cursor(row_factory=class_row(BriefTurn)) as cur:
        cur.execute(
            f"SELECT {_TURN} FROM memory WHERE user_id = %s AND is_active AND NOT is_pinned"
            " AND message_at >= %s AND (%s::text IS NULL OR agent_platform = %s)"
            " AND (%s::text IS NULL OR role = 'user' OR agent_model = %s)"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (user_id, since, platform, platform, model, model, limit),
        )
        return cur.fetchall()


def project_turns(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    since: datetime,
    git_root: str,
    exclude_platform: str | None,
    limit: int,
) -> list[BriefTurn]:
    """Other agents' turns in the same project (same git root), newest first."""
    with conn.cursor(row_factory=class_row(BriefTurn)) as cur:
        cur.execute(
            f"SELECT {_TURN} FROM memory WHERE user_id = %s AND is_active AND NOT is_pinned"
            " AND message_at >= %s AND git_root = %s"
            " AND (%s::text IS NULL OR agent_platform <> %s)"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (user_id, since, git_root, exclude_platform, exclude_platform, limit),
        )
        return cur.fetchall()


def teammate_turns(
    conn: psycopg.Connection[Any], user_id: int, *, since: datetime, project: str, limit: int
) -> list[tuple[str, BriefTurn]]:
    """Teammates' turns in ``project`` (its aliases included) that they share, newest first,
    each with its owner's name; none without a team (one small query)."""
    rows = conn.execute(
        f"SELECT u.user_name, {', '.join('m.' + c for c in _TURN.split(', '))}"
        " FROM memory m JOIN am_person_names() u ON u.user_id = m.user_id"
        " WHERE m.user_id <> %(user)s AND m.is_active AND m.message_at >= %(since)s"
        "  AND (m.user_id, m.p_tag_id) IN (SELECT owner_id, tag_id FROM am_shared_pairs())"
        "  AND canonical_project_tag_id(m.p_tag_id) = (SELECT canonical_project_tag_id(id)"
        "   FROM project_tags WHERE name = %(project)s)"
        " ORDER BY m.message_at DESC, m.id DESC LIMIT %(limit)s",
        {"user": user_id, "since": since, "project": project, "limit": limit},
    ).fetchall()
    return [(str(r[0]), BriefTurn(*r[1:])) for r in rows]


def active_projects(
    conn: psycopg.Connection[Any], user_id: int, *, since: datetime, limit: int
) -> list[ActiveProject]:
    """Projects by last use in the window: canonical tags when tagged, else git roots."""
    with conn.cursor(row_factory=class_row(ActiveProject)) as cur:
        cur.execute(
            "WITH recent AS ("
            "  SELECT p_tag_id, git_root, message_at FROM memory"
            "  WHERE user_id = %s AND is_active AND message_at >= %s"
            "    AND (p_tag_id IS NOT NULL OR git_root IS NOT NULL)),"
            " by_tag AS (SELECT canonical_project_tag_id(p_tag_id) AS tag, count(*) AS n,"
            "    max(message_at) AS last_at FROM recent WHERE p_tag_id IS NOT NULL GROUP BY 1),"
            " by_root AS (SELECT git_root, count(*) AS n, max(message_at) AS last_at"
            "    FROM recent WHERE p_tag_id IS NULL GROUP BY 1)"
            " SELECT name, turns::int, last_at FROM ("
            "  SELECT t.name, b.n AS turns, b.last_at FROM by_tag b"
            "    JOIN project_tags t ON t.id = b.tag WHERE NOT t.paused"
            "  UNION ALL"
            "  SELECT r.git_root, r.n, r.last_at FROM by_root r) AS p"
            " ORDER BY last_at DESC, name LIMIT %s",
            (user_id, since, limit),
        )
        return cur.fetchall()


def tag_summaries(
    conn: psycopg.Connection[Any], user_id: int, *, before: datetime, limit: int
) -> list[TagSummaryLine]:
    """The newest summary per group (project tag, git root, or no project) of history older
    than the short-term window; the groups with the most recent summaries first."""
    with conn.cursor(row_factory=class_row(TagSummaryLine)) as cur:
        cur.execute(
            "SELECT tag, period_start, period_end, summary FROM ("
            " SELECT DISTINCT ON (coalesce(t.name, s.d_tag))"
            "  coalesce(t.name, s.d_tag) AS tag, s.period_start, s.period_end, s.summary"
            "  FROM tag_summaries s LEFT JOIN project_tags t ON t.id = s.p_tag_id"
            "  WHERE s.user_id = %s AND s.period_start < %s"
            "  ORDER BY coalesce(t.name, s.d_tag), s.period_end DESC) AS newest"
            " ORDER BY period_end DESC, tag LIMIT %s",
            (user_id, before, limit),
        )
        return cur.fetchall()


def pending_questions(
    conn: psycopg.Connection[Any], user_id: int, limit: int
) -> list[PendingQuestion]:
    rows = conn.execute(
        "(SELECT 'new tag', 'new project tag \"' || name || '\"?' || coalesce(' (' ||"
        "   recommendation || ')', ''), created_at FROM project_tag_new_suggestions"
        "  WHERE user_id = %s AND status = 'pending')"
        " UNION ALL"
        " (SELECT 'alias', '\"' || s.name || '\" -> \"' || t.name || '\"? (' || a.relation"
        "   || ')', a.created_at FROM project_tag_alias_suggestions a"
        "   JOIN project_tags s ON s.id = a.source_tag_id"
        "   JOIN project_tags t ON t.id = a.target_tag_id"
        "  WHERE a.user_id = %s AND a.status = 'pending')"
        " ORDER BY 3 DESC LIMIT %s",
        (user_id, user_id, limit),
    ).fetchall()
    return [PendingQuestion(str(r[0]), str(r[1])) for r in rows]


def project_tag_for_root(conn: psycopg.Connection[Any], git_root: str) -> str | None:
    """The canonical project tag recorded for a git root, if any."""
    row = conn.execute(
        "SELECT t.name FROM project_tags p JOIN project_tags t"
        " ON t.id = canonical_project_tag_id(p.id) WHERE p.git_root = %s LIMIT 1",
        (git_root,),
    ).fetchone()
    return str(row[0]) if row else None


def project_tag_for_git(
    conn: psycopg.Connection[Any], git_root: str | None, git_remote: str | None
) -> str | None:
    """The canonical project tag of a checkout: by its root on this machine, else by its
    remote (a teammate's clone of the same repository lives at another path)."""
    if not git_root and not git_remote:
        return None
    row = conn.execute(
        "SELECT t.name FROM project_tags p JOIN project_tags t"
        " ON t.id = canonical_project_tag_id(p.id)"
        " WHERE p.git_root = %s OR p.git_remote = %s ORDER BY (p.git_root = %s) DESC LIMIT 1",
        (git_root, git_remote, git_root),
    ).fetchone()
    return str(row[0]) if row else None
