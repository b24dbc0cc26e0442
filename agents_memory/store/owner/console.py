"""What the web console reads that no other caller does: the timeline (keyset pages over
``(message_at, id)``, served by the ``memory_user_time`` index), one session's turns, the
summaries that cover them, pinned and archived rows with their edits, profile history and the
database's size; and its one write no other service has, taking a pin off. The caller owns the
transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from agents_memory.store import team

PREVIEW_CHARS: Final = 800
"""How much of a turn a timeline row carries (the session page shows it whole)."""
SESSION_TURNS: Final = 5000


@dataclass(frozen=True, slots=True)
class ConsoleTurn:
    id: int
    message_at: datetime
    agent_platform: str
    agent_model: str | None
    subagent: bool
    subagent_role: str | None
    subagent_model: str | None
    role: str
    message: str
    project: str | None
    """The canonical project tag's name (aliases resolved)."""
    device_name: str | None
    session_id: str | None
    is_active: bool
    is_pinned: bool
    source: str
    length: int
    """The whole message's length (``message`` may be a preview)."""
    by: str | None = None
    """A teammate's name when the turn is theirs (in a project they share)."""


@dataclass(frozen=True, slots=True)
class TimelineFilters:
    project: str | None = None
    platform: str | None = None
    model: str | None = None
    device: str | None = None
    role: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    """Exclusive."""
    ids: tuple[int, ...] | None = None
    """Only these turns (the timeline's action filter: the turns that made an action of a
    kind)."""


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a timeline page ends: the next page holds older rows."""

    message_at: datetime
    id: int


def visible(conn: psycopg.Connection[Any], user_id: int) -> sql.Composable:
    """Whose turns the console shows ``user_id``, on alias ``m``: their own, and each
    teammate's in a project that teammate shares. For a member, row-level security says the
    same (and leaves out what they hid); without a team it is their own rows alone."""
    own = sql.SQL("m.user_id = {}").format(sql.Literal(user_id))
    shared = team.shared_view(conn, user_id)
    if not shared:
        return own
    teammates = [
        sql.SQL("(m.user_id = {} AND m.p_tag_id = ANY({}::bigint[]))").format(
            sql.Literal(owner), sql.Literal(list(tags))
        )
        for owner, tags in shared
    ]
    return sql.SQL("({})").format(sql.SQL(" OR ").join([own, *teammates]))


def _columns(chars: int | None, user_id: int | None = None) -> sql.Composable:
    message = (
        sql.SQL("m.message") if chars is None else sql.SQL("left(m.message, {})").format(chars)
    )
    return sql.SQL(
        "m.id, m.message_at, m.agent_platform, m.agent_model, m.subagent, m.subagent_role,"
        " m.subagent_model, m.role, {message} AS message,"
        " (SELECT t.name FROM project_tags t WHERE t.id = canonical_project_tag_id(m.p_tag_id))"
        " AS project, m.device_name, m.session_id, m.is_active, m.is_pinned, m.source,"
        " length(m.message) AS length, {by} AS by"
    ).format(message=message, by=_by(user_id))


def _by(user_id: int | None) -> sql.Composable:
    """A teammate's name for a row that is not ``user_id``'s (``NULL`` for one's own)."""
    if user_id is None:
        return sql.SQL("NULL::text")
    return sql.SQL(
        "CASE WHEN m.user_id <> {} THEN (SELECT n.user_name FROM am_person_names() n"
        " WHERE n.user_id = m.user_id) END"
    ).format(sql.Literal(user_id))


def _conditions(
    conn: psycopg.Connection[Any], user_id: int, filters: TimelineFilters
) -> tuple[list[sql.Composable], list[Any]]:
    where: list[sql.Composable] = [visible(conn, user_id), sql.SQL("m.is_active")]
    params: list[Any] = []
    if filters.project:
        where.append(sql.SQL("m.p_tag_id = ANY(%s)"))
        params.append(project_tag_ids(conn, filters.project))
    for column, value in (
        ("agent_platform", filters.platform),
        ("device_name", filters.device),
        ("role", filters.role),
    ):
        if value:
            where.append(sql.SQL("m.{} = %s").format(sql.Identifier(column)))
            params.append(value)
    if filters.model:
        where.append(sql.SQL("coalesce(m.subagent_model, m.agent_model) = %s"))
        params.append(filters.model)
    if filters.since:
        where.append(sql.SQL("m.message_at >= %s"))
        params.append(filters.since)
    if filters.until:
        where.append(sql.SQL("m.message_at < %s"))
        params.append(filters.until)
    if filters.ids is not None:
        where.append(sql.SQL("m.id = ANY(%s)"))
        params.append(list(filters.ids))
    return where, params


def project_tag_ids(conn: psycopg.Connection[Any], name: str) -> list[int]:
    """The ids of project ``name``'s canonical tag and all its aliases (empty: no such tag)."""
    rows = conn.execute(
        "SELECT id FROM project_tags WHERE canonical_project_tag_id(id) ="
        " (SELECT canonical_project_tag_id(id) FROM project_tags WHERE name = %s)",
        (name.strip().lower(),),
    ).fetchall()
    return [int(r[0]) for r in rows]


def timeline_page(
    conn: psycopg.Connection[Any],
    user_id: int,
    filters: TimelineFilters,
    *,
    before: Cursor | None,
    limit: int,
) -> list[ConsoleTurn]:
    """Active turns, newest first, older than ``before`` (keyset: no OFFSET, so a page deep
    in a million rows costs what the first does)."""
    where, params = _conditions(conn, user_id, filters)
    if before is not None:
        where.append(sql.SQL("(m.message_at, m.id) < (%s, %s)"))
        params += [before.message_at, before.id]
    query = sql.SQL(
        "SELECT {columns} FROM memory m WHERE {where}"
        " ORDER BY m.message_at DESC, m.id DESC LIMIT %s"
    ).format(columns=_columns(PREVIEW_CHARS, user_id), where=sql.SQL(" AND ").join(where))
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, [*params, limit])
        return cur.fetchall()


def turns_after(
    conn: psycopg.Connection[Any],
    user_id: int,
    filters: TimelineFilters,
    *,
    after_id: int,
    limit: int,
) -> list[ConsoleTurn]:
    """Active turns stored after row ``after_id`` (the live feed), newest first."""
    where, params = _conditions(conn, user_id, filters)
    where.append(sql.SQL("m.id > %s"))
    params.append(after_id)
    query = sql.SQL(
        "SELECT {columns} FROM memory m WHERE {where}"
        " ORDER BY m.message_at DESC, m.id DESC LIMIT %s"
    ).format(columns=_columns(PREVIEW_CHARS, user_id), where=sql.SQL(" AND ").join(where))
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, [*params, limit])
        return cur.fetchall()


def newest_id(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT coalesce(max(id), 0) FROM memory").fetchone()
    return int(row[0]) if row else 0


def turn_session(
    conn: psycopg.Connection[Any], user_id: int, memory_id: int
) -> tuple[str, str | None] | None:
    """Row ``memory_id``'s platform and session id (``None``: no such row)."""
    query = sql.SQL("SELECT agent_platform, session_id FROM memory m WHERE id = %s AND {}")
    row = conn.execute(query.format(visible(conn, user_id)), (memory_id,)).fetchone()
    return (str(row[0]), row[1]) if row else None


def session_turns(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> list[ConsoleTurn]:
    """The session's turns in the order they were said (archived ones included, marked); a
    teammate's session in a project they share too."""
    query = sql.SQL(
        "SELECT {columns} FROM memory m WHERE {whose} AND m.agent_platform = %s"
        " AND m.session_id = %s ORDER BY m.message_at, m.id LIMIT %s"
    ).format(columns=_columns(None, user_id), whose=visible(conn, user_id))
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, (platform, session_id, SESSION_TURNS))
        return cur.fetchall()


def single_turn(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> list[ConsoleTurn]:
    """Row ``memory_id`` alone (a turn saved outside any session)."""
    query = sql.SQL("SELECT {columns} FROM memory m WHERE {whose} AND m.id = %s").format(
        columns=_columns(None, user_id), whose=visible(conn, user_id)
    )
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, (memory_id,))
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class CoveringSummary:
    id: int
    project: str | None
    d_tag: str | None
    period_start: datetime
    period_end: datetime
    summary: str


def summaries_covering(
    conn: psycopg.Connection[Any], user_id: int, memory_ids: Sequence[int]
) -> list[CoveringSummary]:
    """The tag summaries built from any of ``memory_ids``."""
    with conn.cursor(row_factory=class_row(CoveringSummary)) as cur:
        cur.execute(
            "SELECT s.id, t.name AS project, s.d_tag, s.period_start, s.period_end, s.summary"
            " FROM tag_summaries s LEFT JOIN project_tags t ON t.id = s.p_tag_id"
            " WHERE s.user_id = %s AND s.source_ids && %s::bigint[] ORDER BY s.period_end DESC",
            (user_id, list(memory_ids)),
        )
        return cur.fetchall()


def pinned_facts(conn: psycopg.Connection[Any], user_id: int, limit: int) -> list[ConsoleTurn]:
    query = sql.SQL(
        "SELECT {columns} FROM memory m WHERE m.user_id = %s AND m.is_pinned"
        " ORDER BY m.message_at DESC LIMIT %s"
    ).format(columns=_columns(None))
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, (user_id, limit))
        return cur.fetchall()


def archived_memories(
    conn: psycopg.Connection[Any], user_id: int, limit: int, *, source: str | None = None
) -> list[ConsoleTurn]:
    """Archived rows (``manage_knowledge remove``, the age-based archive), newest first; only
    those stored by ``source`` (e.g. ``manage_knowledge``) when given."""
    query = sql.SQL(
        "SELECT {columns} FROM memory m WHERE m.user_id = %s AND NOT m.is_active"
        " AND (%s::text IS NULL OR m.source = %s) ORDER BY m.message_at DESC LIMIT %s"
    ).format(columns=_columns(PREVIEW_CHARS))
    with conn.cursor(row_factory=class_row(ConsoleTurn)) as cur:
        cur.execute(query, (user_id, source, source, limit))
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class Edit:
    memory_id: int
    old_message: str
    changed_by: str
    created_at: datetime


def memory_edits(conn: psycopg.Connection[Any], memory_ids: Sequence[int]) -> list[Edit]:
    """The earlier texts of ``memory_ids``, newest first."""
    with conn.cursor(row_factory=class_row(Edit)) as cur:
        cur.execute(
            "SELECT memory_id, old_message, changed_by, created_at FROM memory_history"
            " WHERE memory_id = ANY(%s) ORDER BY created_at DESC, id DESC",
            (list(memory_ids),),
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class ProfileEdit:
    field: str
    old_value: str | None
    new_value: str | None
    changed_by: str
    created_at: datetime


def profile_history(conn: psycopg.Connection[Any], user_id: int, limit: int) -> list[ProfileEdit]:
    with conn.cursor(row_factory=class_row(ProfileEdit)) as cur:
        cur.execute(
            "SELECT field, old_value, new_value, changed_by, created_at FROM profile_history"
            " WHERE user_id = %s ORDER BY created_at DESC, id DESC LIMIT %s",
            (user_id, limit),
        )
        return cur.fetchall()


def database_size(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def session_count(conn: psycopg.Connection[Any], user_id: int) -> dict[str, int]:
    """Captured sessions per platform."""
    rows = conn.execute(
        "SELECT agent_platform, count(DISTINCT session_id) FROM memory"
        " WHERE user_id = %s AND session_id IS NOT NULL GROUP BY agent_platform",
        (user_id,),
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def unpin_memory(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> bool:
    """Take the pin off ``memory_id`` (it stays an active memory); ``False``: not pinned."""
    done = conn.execute(
        "UPDATE memory SET is_pinned = false WHERE id = %s AND user_id = %s AND is_pinned",
        (memory_id, user_id),
    )
    return done.rowcount > 0
