"""Tag summaries (the Clusterer's output, which the brief shows) and age-based archive.

A summary covers one group - a canonical project tag, a git root for rows no tag owns, or
``NO_PROJECT`` (stored as the group's ``d_tag``; no git root looks like it) for rows outside
any repository - over one period (``date_bin`` of ``period_days`` from a Monday). It is keyed
by the group and the period start (unique index, 0004), so writing it again replaces it. A
period needs a summary when it has none yet, when rows arrived that the stored one does not
cover, or when it is ``stale`` (some of its sources were forgotten).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg.rows import class_row

from agents_memory.store import meta

PERIOD_ORIGIN = datetime(2001, 1, 1, tzinfo=UTC)  # a Monday: weekly periods start on Mondays
_IDLE_KEY = "coldpath.clusterer.idle_at.{user_id}"
NO_PROJECT = "(no project)"
"""The label of the group of rows with neither a project tag nor a git root."""


@dataclass(frozen=True, slots=True)
class PeriodGroup:
    tag_id: int | None
    git_root: str | None
    """The git root (or ``NO_PROJECT``) when no project tag owns the group."""
    period_start: datetime
    ids: list[int]
    stored_ids: list[int] | None
    """Source ids of the summary already stored for this period, if any."""


@dataclass(frozen=True, slots=True)
class SummaryTurn:
    id: int
    role: str
    message: str
    message_at: datetime


def periods_to_summarise(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    before: datetime,
    period_days: int,
    limit: int | None,
) -> list[PeriodGroup]:
    """Group-periods of tagged, active rows older than ``before`` whose summary is missing
    or stale, newest period first. Rows with neither a project tag nor a git root form their
    own group, so nothing is archived without a summary the brief can show."""
    with conn.cursor(row_factory=class_row(PeriodGroup)) as cur:
        cur.execute(
            "WITH src AS ("
            "  SELECT id,"
            "   CASE WHEN p_tag_id IS NOT NULL THEN canonical_project_tag_id(p_tag_id) END"
            "     AS tag_id,"
            "   CASE WHEN p_tag_id IS NULL THEN coalesce(git_root, %(none)s) END AS git_root,"
            "   date_bin(make_interval(days => %(days)s), message_at, %(origin)s)"
            "     AS period_start"
            "  FROM memory WHERE user_id = %(user)s AND is_active AND tag_processed"
            "   AND message_at < %(before)s),"
            " groups AS (SELECT tag_id, git_root, period_start, array_agg(id ORDER BY id) AS ids"
            "  FROM src GROUP BY 1, 2, 3)"
            " SELECT g.tag_id, g.git_root, g.period_start, g.ids, s.source_ids AS stored_ids"
            " FROM groups g LEFT JOIN tag_summaries s ON s.user_id = %(user)s"
            "  AND coalesce(s.p_tag_id, 0) = coalesce(g.tag_id, 0)"
            "  AND coalesce(s.d_tag, '') = coalesce(g.git_root, '')"
            "  AND s.period_start = g.period_start"
            " WHERE s.id IS NULL OR s.stale OR NOT (g.ids <@ s.source_ids)"
            " ORDER BY g.period_start DESC, g.tag_id NULLS LAST, g.git_root"
            " LIMIT %(limit)s",
            {
                "days": period_days,
                "none": NO_PROJECT,
                "origin": PERIOD_ORIGIN,
                "user": user_id,
                "before": before,
                "limit": limit,
            },
        )
        return cur.fetchall()


def summary_turns(
    conn: psycopg.Connection[Any], ids: Sequence[int], *, max_chars: int
) -> list[SummaryTurn]:
    """The rows a summary covers (archived ones included), oldest first."""
    with conn.cursor(row_factory=class_row(SummaryTurn)) as cur:
        cur.execute(
            "SELECT id, role, left(message, %s) AS message, message_at FROM memory"
            " WHERE id = ANY(%s) ORDER BY message_at, id",
            (max_chars, list(ids)),
        )
        return cur.fetchall()


def save_summary(
    conn: psycopg.Connection[Any],
    user_id: int,
    group: PeriodGroup,
    *,
    period_end: datetime,
    summary: str,
    source_ids: Sequence[int],
    model: str,
) -> int:
    row = conn.execute(
        "INSERT INTO tag_summaries (user_id, p_tag_id, d_tag, period_start, period_end,"
        "  summary, source_ids, model) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (user_id, coalesce(p_tag_id, 0), coalesce(d_tag, ''), period_start)"
        " DO UPDATE SET period_end = EXCLUDED.period_end, summary = EXCLUDED.summary,"
        "  source_ids = EXCLUDED.source_ids, model = EXCLUDED.model, stale = false"
        " RETURNING id",
        (
            user_id,
            group.tag_id,
            group.git_root,
            group.period_start,
            period_end,
            summary,
            sorted(set(source_ids)),
            model,
        ),
    ).fetchone()
    assert row is not None
    return int(row[0])


def period_end(group: PeriodGroup, period_days: int, before: datetime) -> datetime:
    return min(group.period_start + timedelta(days=period_days), before)


def archive_older_than(
    conn: psycopg.Connection[Any], user_id: int, *, before: datetime, at: datetime, limit: int
) -> int:
    """Soft-archive up to ``limit`` active, unpinned rows older than ``before`` (lossless:
    ``is_active=false, archived_at``; search finds them with ``include_archived``)."""
    cur = conn.execute(
        "UPDATE memory SET is_active = false, archived_at = %s WHERE id IN ("
        " SELECT id FROM memory WHERE user_id = %s AND is_active AND NOT is_pinned"
        "  AND message_at < %s ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)",
        (at, user_id, before, limit),
    )
    return cur.rowcount


def idle_since(conn: psycopg.Connection[Any], user_id: int) -> datetime | None:
    """When the clusterer last found nothing to summarise (``None``: it has work, or never ran)."""
    value = meta.get(conn, _IDLE_KEY.format(user_id=user_id))
    return datetime.fromisoformat(value) if value is not None else None


def set_idle(conn: psycopg.Connection[Any], user_id: int, at: datetime | None) -> None:
    key = _IDLE_KEY.format(user_id=user_id)
    if at is None:
        meta.drop(conn, key)
    else:
        meta.put(conn, key, at.isoformat())
