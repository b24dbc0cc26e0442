"""Physical forgetting: which rows a selection names, and their deletion with everything
built from them.

:func:`forget_memories` is the one deletion path (``mcp-agents-memory forget`` and, at merge,
``doctor --secrets --fix`` for what cannot be rewritten): in the caller's transaction it
records a tombstone per row (key and text hash, :mod:`agents_memory.store.tombstones`), deals
with the text derived from the rows (:func:`invalidate_derived_text`), and deletes the rows.
Their history goes with them (``ON DELETE CASCADE``, counted first), their vectors are columns
of the row, and their HNSW and GIN index entries are dead from the commit on (PostgreSQL's
VACUUM, automatic by default, reclaims the space).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from agents_memory.store.tombstones import bury_memories

SAMPLE_CHARS = 120


@dataclass(frozen=True, slots=True)
class Selection:
    """Which rows to forget: every condition given must hold (an empty selection is refused
    by the service before it gets here)."""

    ids: tuple[int, ...] = ()
    session: str | None = None
    project: str | None = None
    """A project tag (aliases resolve to the canonical tag) or a git root path."""
    platform: str | None = None
    device: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    """Exclusive."""

    @property
    def empty(self) -> bool:
        return not (
            self.ids
            or self.session
            or self.project
            or self.platform
            or self.device
            or self.since
            or self.until
        )


@dataclass(frozen=True, slots=True)
class SampleRow:
    id: int
    message_at: datetime
    agent_platform: str
    role: str
    session_id: str | None
    is_active: bool
    preview: str


@dataclass(frozen=True, slots=True)
class StaleSummary:
    """A tag summary that lost some of its sources: ``source_ids`` are the ones left."""

    id: int
    source_ids: list[int]


@dataclass(slots=True)
class DerivedOutcome:
    summaries_dropped: int = 0
    stale_summaries: list[StaleSummary] = field(default_factory=list)
    profile_reset: bool = False
    """The librarian's watermark was reset, so it builds the profiles again on its next pass."""


@dataclass(slots=True)
class ForgetCounts:
    rows: int = 0
    history: int = 0
    tombstones: int = 0
    derived: DerivedOutcome = field(default_factory=DerivedOutcome)


def _where(user_id: int, selection: Selection) -> sql.Composable:
    parts: list[sql.Composable] = [sql.SQL("m.user_id = {}").format(sql.Literal(user_id))]
    if selection.ids:
        parts.append(sql.SQL("m.id = ANY({})").format(sql.Literal(list(selection.ids))))
    if selection.session:
        parts.append(sql.SQL("m.session_id = {}").format(sql.Literal(selection.session)))
    if selection.project:
        parts.append(
            sql.SQL(
                "(m.git_root = {name} OR canonical_project_tag_id(m.p_tag_id) IN ("
                " SELECT canonical_project_tag_id(id) FROM project_tags"
                "  WHERE lower(name) = lower({name})))"
            ).format(name=sql.Literal(selection.project))
        )
    if selection.platform:
        parts.append(sql.SQL("m.agent_platform = {}").format(sql.Literal(selection.platform)))
    if selection.device:
        parts.append(sql.SQL("m.device_name = {}").format(sql.Literal(selection.device)))
    if selection.since:
        parts.append(sql.SQL("m.message_at >= {}").format(sql.Literal(selection.since)))
    if selection.until:
        parts.append(sql.SQL("m.message_at < {}").format(sql.Literal(selection.until)))
    return sql.SQL(" AND ").join(parts)


def selected_ids(conn: psycopg.Connection[Any], user_id: int, selection: Selection) -> list[int]:
    """The ids of the rows ``selection`` names (archived ones included), oldest first."""
    query = sql.SQL("SELECT m.id FROM memory m WHERE {} ORDER BY m.message_at, m.id").format(
        _where(user_id, selection)
    )
    return [int(row[0]) for row in conn.execute(query).fetchall()]


def sample_rows(conn: psycopg.Connection[Any], ids: Sequence[int], limit: int) -> list[SampleRow]:
    """Up to ``limit`` of ``ids`` (newest first), their text cut to a preview."""
    with conn.cursor(row_factory=class_row(SampleRow)) as cur:
        cur.execute(
            "SELECT id, message_at, agent_platform, role, session_id, is_active,"
            " left(message, %s) AS preview FROM memory WHERE id = ANY(%s)"
            " ORDER BY message_at DESC, id DESC LIMIT %s",
            (SAMPLE_CHARS, list(ids), limit),
        )
        return cur.fetchall()


def forget_memories(
    conn: psycopg.Connection[Any], user_id: int, ids: Sequence[int]
) -> ForgetCounts:
    """Delete ``user_id``'s rows ``ids`` for good, in the caller's transaction: tombstones
    first, then what was built from the rows, then the rows (history and vectors with them)."""
    wanted = sorted(set(ids))
    counts = ForgetCounts()
    if not wanted:
        return counts
    owned = conn.execute(
        "SELECT array_agg(id) FROM memory WHERE user_id = %s AND id = ANY(%s)", (user_id, wanted)
    ).fetchone()
    wanted = sorted(owned[0] or []) if owned else []
    if not wanted:
        return counts
    counts.tombstones = bury_memories(conn, wanted)
    counts.derived = invalidate_derived_text(conn, user_id, wanted)
    history = conn.execute(
        "SELECT count(*) FROM memory_history WHERE memory_id = ANY(%s)", (wanted,)
    ).fetchone()
    counts.history = int(history[0]) if history else 0
    cur = conn.execute("DELETE FROM memory WHERE id = ANY(%s)", (wanted,))
    counts.rows = cur.rowcount
    return counts


def invalidate_derived_text(
    conn: psycopg.Connection[Any], user_id: int, ids: Sequence[int]
) -> DerivedOutcome:
    """Everything built from rows ``ids`` (about to be forgotten, still present): tag
    summaries all of whose sources are among them are dropped; the others lose those source
    ids, are marked ``stale`` (the Clusterer writes them again) and are returned so the caller
    can rewrite their text at once from what is left; tag suggestions lose them as evidence;
    when user turns are among them (the librarian builds the profiles from user turns), the
    librarian's watermark is reset so it builds the profiles again on its next pass.

    The one place derived text is handled on a deletion (the text rewrite of ``doctor --secrets
    --fix`` is meant to share it)."""
    outcome = DerivedOutcome()
    wanted = list(ids)
    dropped = conn.execute(
        "DELETE FROM tag_summaries WHERE user_id = %s AND source_ids <@ %s::bigint[]"
        " AND source_ids && %s::bigint[]",
        (user_id, wanted, wanted),
    )
    outcome.summaries_dropped = dropped.rowcount
    with conn.cursor(row_factory=class_row(StaleSummary)) as cur:
        cur.execute(
            "UPDATE tag_summaries SET stale = true, source_ids = ARRAY("
            "  SELECT s FROM unnest(source_ids) AS s WHERE s <> ALL(%s::bigint[]) ORDER BY s)"
            " WHERE user_id = %s AND source_ids && %s::bigint[]"
            " RETURNING id, source_ids",
            (wanted, user_id, wanted),
        )
        outcome.stale_summaries = cur.fetchall()
    for column in ("evidence_memory_ids", "conflict_memory_ids"):
        conn.execute(
            sql.SQL(
                "UPDATE project_tag_alias_suggestions SET {col} = ARRAY("
                " SELECT s FROM unnest({col}) AS s WHERE s <> ALL(%s::bigint[]))"
                " WHERE user_id = %s AND {col} && %s::bigint[]"
            ).format(col=sql.Identifier(column)),
            (wanted, user_id, wanted),
        )
    users = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memory WHERE id = ANY(%s) AND role = 'user')", (wanted,)
    ).fetchone()
    if users and users[0]:
        conn.execute(
            "UPDATE users SET librarian_last_run_at = NULL, librarian_msg_count_at_run = NULL"
            " WHERE user_id = %s",
            (user_id,),
        )
        outcome.profile_reset = True
    return outcome


def replace_summary_text(conn: psycopg.Connection[Any], summary_id: int, text: str) -> None:
    """The text of a stale summary, rebuilt from the sources it has left."""
    conn.execute(
        "UPDATE tag_summaries SET summary = %s, model = 'extractive' WHERE id = %s",
        (text, summary_id),
    )


def drop_summary(conn: psycopg.Connection[Any], summary_id: int) -> None:
    conn.execute("DELETE FROM tag_summaries WHERE id = %s", (summary_id,))
