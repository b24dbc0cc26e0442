"""Session summaries (``session_summaries``, 0017): which sessions need one, what a summary is
written from, storing it, and reading it back for the brief, the console and the export.

A session is ``(user, platform, session id)``. Its summary records how many turns it covered
and the newest turn's id: a session whose turns changed since (it grew, or an import added
turns) needs a new one. The Cold Path finds the sessions to look at through a cursor on
``memory.id`` (:func:`changed_sessions` over a window of new ids), so a pass reads only what
arrived since the last one; ``stale`` ones (a forget or a rewrite left them behind) and
``draft`` ones (written while the session was still going, the LLM's version pending) are
found by their own indexes. Project lists go by git root (a session's newest one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import class_row

from agents_memory.store import meta

_CURSOR_KEY = "coldpath.sessions.seen_id.{user_id}"
HEAD_TURNS: Final = 60
"""A long session is summarised from its first this many turns…"""
TAIL_TURNS: Final = 240
"""…and its last this many (the ask is at its start, the outcome at its end)."""
TURN_CHARS: Final = 6000
MAX_ACTIONS: Final = 2000


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session as it is now (its turns counted), beside its stored summary's state."""

    agent_platform: str
    session_id: str
    turns: int
    last_turn_id: int
    started_at: datetime
    last_at: datetime
    git_root: str | None
    p_tag_id: int | None
    stored_model: str | None
    """The stored summary's model (``None``: no summary yet)."""


@dataclass(frozen=True, slots=True)
class SessionTurnRow:
    id: int
    role: str
    message: str
    message_at: datetime


@dataclass(frozen=True, slots=True)
class SessionActionRow:
    kind: str
    targets: list[str] | None
    command: str | None
    outcome: str
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class SessionSummaryRow:
    id: int
    agent_platform: str
    session_id: str
    git_root: str | None
    project: str | None
    """The canonical project tag's name, when the session has one."""
    started_at: datetime
    last_at: datetime
    turns: int
    title: str
    summary: str
    model: str


_STATE = (
    "SELECT t.agent_platform, t.session_id, count(m.id)::int AS turns, max(m.id) AS last_turn_id,"
    " min(m.message_at) AS started_at, max(m.message_at) AS last_at,"
    " (array_agg(m.git_root ORDER BY m.id DESC) FILTER (WHERE m.git_root IS NOT NULL))[1]"
    "   AS git_root,"
    " (array_agg(m.p_tag_id ORDER BY m.id DESC) FILTER (WHERE m.p_tag_id IS NOT NULL))[1]"
    "   AS p_tag_id"
    " FROM touched t JOIN memory m ON m.user_id = %(user)s"
    "  AND m.agent_platform = t.agent_platform AND m.session_id = t.session_id"
    " GROUP BY 1, 2"
)


def changed_sessions(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    after_id: int,
    upto_id: int,
    draft_before: datetime | None,
    limit: int,
) -> list[SessionState]:
    """Sessions whose summary is missing or behind: those with turns in the id window
    ``(after_id, upto_id]`` whose turns changed since their summary, the ``stale`` ones, and
    (with ``draft_before``) drafts of sessions quiet since then. Newest first."""
    with conn.cursor(row_factory=class_row(SessionState)) as cur:
        cur.execute(
            "WITH touched AS ("
            "  SELECT DISTINCT agent_platform, session_id FROM memory"
            "  WHERE user_id = %(user)s AND id > %(after)s AND id <= %(upto)s"
            "   AND session_id IS NOT NULL"
            "  UNION SELECT agent_platform, session_id FROM session_summaries"
            "  WHERE user_id = %(user)s AND (stale OR (model = 'draft'"
            "   AND %(draft_before)s::timestamptz IS NOT NULL AND last_at < %(draft_before)s))),"
            f" state AS ({_STATE})"
            " SELECT s.*, x.model AS stored_model FROM state s"
            " LEFT JOIN session_summaries x ON x.user_id = %(user)s"
            "  AND x.agent_platform = s.agent_platform AND x.session_id = s.session_id"
            " WHERE x.id IS NULL OR x.stale OR x.turns <> s.turns"
            "  OR x.last_turn_id <> s.last_turn_id"
            "  OR (x.model = 'draft' AND %(draft_before)s::timestamptz IS NOT NULL"
            "   AND x.last_at < %(draft_before)s)"
            " ORDER BY s.last_at DESC, s.session_id LIMIT %(limit)s",
            {
                "user": user_id,
                "after": after_id,
                "upto": upto_id,
                "draft_before": draft_before,
                "limit": limit,
            },
        )
        return cur.fetchall()


def session_state(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> SessionState | None:
    """One session as it is now (``None``: it has no turns left)."""
    with conn.cursor(row_factory=class_row(SessionState)) as cur:
        cur.execute(
            "WITH touched AS (SELECT %(platform)s::text AS agent_platform,"
            f"  %(session)s::text AS session_id), state AS ({_STATE})"
            " SELECT s.*, NULL::text AS stored_model FROM state s",
            {"user": user_id, "platform": platform, "session": session_id},
        )
        return cur.fetchone()


def newest_memory_id(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT coalesce(max(id), 0) FROM memory").fetchone()
    return int(row[0]) if row else 0


def session_turns(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> list[SessionTurnRow]:
    """The turns a summary is written from, oldest first: all of a short session; the first
    :data:`HEAD_TURNS` and last :data:`TAIL_TURNS` of a long one; each bounded."""
    with conn.cursor(row_factory=class_row(SessionTurnRow)) as cur:
        cur.execute(
            "WITH s AS (SELECT id, role, message, message_at,"
            "  row_number() OVER (ORDER BY message_at, id) AS n,"
            "  count(*) OVER () AS total"
            "  FROM memory WHERE user_id = %(user)s AND agent_platform = %(platform)s"
            "  AND session_id = %(session)s)"
            " SELECT id, role, left(message, %(chars)s) AS message, message_at FROM s"
            " WHERE n <= %(head)s OR n > total - %(tail)s ORDER BY message_at, id",
            {
                "user": user_id,
                "platform": platform,
                "session": session_id,
                "chars": TURN_CHARS,
                "head": HEAD_TURNS,
                "tail": TAIL_TURNS,
            },
        )
        return cur.fetchall()


def session_actions(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> list[SessionActionRow]:
    """The session's actions in the order they ran (at most :data:`MAX_ACTIONS`, the last)."""
    with conn.cursor(row_factory=class_row(SessionActionRow)) as cur:
        cur.execute(
            "SELECT kind, targets, command, outcome, exit_code FROM ("
            " SELECT id, kind, targets, left(command, 500) AS command, outcome, exit_code,"
            "  coalesce(started_at, created_at) AS at FROM actions"
            " WHERE user_id = %s AND agent_platform = %s AND session_id = %s"
            " ORDER BY at DESC, id DESC LIMIT %s) a ORDER BY at, id",
            (user_id, platform, session_id, MAX_ACTIONS),
        )
        return cur.fetchall()


@dataclass(frozen=True, slots=True)
class NewSessionSummary:
    title: str
    summary: str
    terms: str
    model: str
    """``extractive``, ``draft`` (extractive while the session goes on) or ``llm``."""


_INSERT: Final = (
    "INSERT INTO session_summaries (user_id, agent_platform, session_id, git_root, p_tag_id,"
    "  started_at, last_at, turns, last_turn_id, title, summary, terms, model)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (user_id, agent_platform, session_id)"
)


def _values(user_id: int, state: SessionState, written: NewSessionSummary) -> tuple[Any, ...]:
    return (
        user_id,
        state.agent_platform,
        state.session_id,
        state.git_root,
        state.p_tag_id,
        state.started_at,
        state.last_at,
        state.turns,
        state.last_turn_id,
        written.title,
        written.summary,
        written.terms,
        written.model,
    )


def save_session_summary(
    conn: psycopg.Connection[Any], user_id: int, state: SessionState, written: NewSessionSummary
) -> int:
    row = conn.execute(
        _INSERT + " DO UPDATE SET"
        "  git_root = EXCLUDED.git_root, p_tag_id = EXCLUDED.p_tag_id,"
        "  started_at = EXCLUDED.started_at, last_at = EXCLUDED.last_at,"
        "  turns = EXCLUDED.turns, last_turn_id = EXCLUDED.last_turn_id,"
        "  title = EXCLUDED.title, summary = EXCLUDED.summary, terms = EXCLUDED.terms,"
        "  model = EXCLUDED.model, stale = false"
        " RETURNING id",
        _values(user_id, state, written),
    ).fetchone()
    assert row is not None
    return int(row[0])


def add_session_summary(
    conn: psycopg.Connection[Any], user_id: int, state: SessionState, written: NewSessionSummary
) -> int | None:
    """Store ``written`` unless the session has a summary already (an import's way: this
    pool's own stays); its id, or ``None`` when one was there."""
    row = conn.execute(
        _INSERT + " DO NOTHING RETURNING id", _values(user_id, state, written)
    ).fetchone()
    return None if row is None else int(row[0])


def drop_session_summary(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> None:
    conn.execute(
        "DELETE FROM session_summaries WHERE user_id = %s AND agent_platform = %s"
        " AND session_id = %s",
        (user_id, platform, session_id),
    )


def seen_id(conn: psycopg.Connection[Any], user_id: int) -> int:
    """The newest memory id the summariser has looked at (0: none yet)."""
    value = meta.get(conn, _CURSOR_KEY.format(user_id=user_id))
    return int(value) if value is not None else 0


def set_seen_id(conn: psycopg.Connection[Any], user_id: int, value: int) -> None:
    meta.put(conn, _CURSOR_KEY.format(user_id=user_id), str(value))


# --- reading summaries back ------------------------------------------------------------------
_SUMMARY_COLUMNS = (
    "s.id, s.agent_platform, s.session_id, s.git_root, t.name AS project, s.started_at,"
    " s.last_at, s.turns, s.title, s.summary, s.model"
)
_TAG = "LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(s.p_tag_id)"


def session_summary(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> SessionSummaryRow | None:
    with conn.cursor(row_factory=class_row(SessionSummaryRow)) as cur:
        cur.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries s {_TAG}"
            " WHERE s.user_id = %s AND s.agent_platform = %s AND s.session_id = %s",
            (user_id, platform, session_id),
        )
        return cur.fetchone()


def recent_session_summaries(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    git_root: str | None,
    project: str | None = None,
    same_project_only: bool = False,
    limit: int,
    offset: int = 0,
) -> list[SessionSummaryRow]:
    """The newest summaries: the project's (its git root, or its tag and aliases) first,
    then, unless ``same_project_only``, the others."""
    here = (
        "coalesce((%(root)s::text IS NOT NULL AND s.git_root = %(root)s::text) OR"
        " (%(project)s::text IS NOT NULL AND t.name = %(project)s::text), false)"
    )
    only = f" AND {here}" if same_project_only else ""
    with conn.cursor(row_factory=class_row(SessionSummaryRow)) as cur:
        cur.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries s {_TAG}"
            f" WHERE s.user_id = %(user)s{only}"
            f" ORDER BY {here} DESC, s.last_at DESC, s.id DESC"
            " LIMIT %(limit)s OFFSET %(offset)s",
            {
                "user": user_id,
                "root": git_root,
                "project": project,
                "limit": limit,
                "offset": offset,
            },
        )
        return cur.fetchall()


def summaries_of_sessions(
    conn: psycopg.Connection[Any], user_id: int, keys: Sequence[tuple[str, str]]
) -> list[SessionSummaryRow]:
    """The summaries of these ``(platform, session id)`` sessions (those that have one)."""
    if not keys:
        return []
    platforms = [k[0] for k in keys]
    sessions = [k[1] for k in keys]
    with conn.cursor(row_factory=class_row(SessionSummaryRow)) as cur:
        cur.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries s {_TAG}"
            " JOIN unnest(%s::text[], %s::text[]) AS k(p, sid)"
            "  ON s.agent_platform = k.p AND s.session_id = k.sid"
            " WHERE s.user_id = %s ORDER BY s.last_at DESC",
            (platforms, sessions, user_id),
        )
        return cur.fetchall()


def exported_summary(
    conn: psycopg.Connection[Any], platform: str, session_id: str
) -> tuple[str, str] | None:
    """``(title, summary)`` of a session for the Markdown export (whoever's it is)."""
    row = conn.execute(
        "SELECT title, summary FROM session_summaries WHERE agent_platform = %s"
        " AND session_id = %s ORDER BY id LIMIT 1",
        (platform, session_id),
    ).fetchone()
    return (str(row[0]), str(row[1])) if row else None
