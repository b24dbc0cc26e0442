"""Physical forgetting: which rows a selection names, and their deletion with everything
built from them.

:func:`forget_memories` is the one deletion path: in the caller's transaction it records a
tombstone per row (key and text hash, :mod:`agents_memory.store.capture.tombstones`), deals with the
text built from the rows through :func:`agents_memory.store.owner.derived.update_derived` (the path
``doctor --secrets --fix`` takes for a rewrite), and deletes the rows. Their history goes with
them (``ON DELETE CASCADE``, counted first), their vectors are columns of the row (the next
turn's vector, made from their end, is dropped too), and their HNSW and GIN index entries are
dead from the commit on (PostgreSQL's VACUUM, automatic by default, reclaims the space).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from agents_memory.store.actions import forget_actions
from agents_memory.store.capture.tombstones import bury_memories
from agents_memory.store.owner.derived import DerivedOutcome, StaleSummary, update_derived

__all__ = [
    "DerivedOutcome",
    "ForgetCounts",
    "SampleRow",
    "Selection",
    "StaleSummary",
    "forget_memories",
    "sample_rows",
    "selected_ids",
]

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


@dataclass(slots=True)
class ForgetCounts:
    rows: int = 0
    history: int = 0
    tombstones: int = 0
    actions: int = 0
    """The actions (tool calls) of the forgotten turns, and of sessions left without turns."""
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
    counts.actions = forget_actions(conn, user_id, wanted)
    counts.derived = update_derived(conn, wanted, rewrite=None)
    history = conn.execute(
        "SELECT count(*) FROM memory_history WHERE memory_id = ANY(%s)", (wanted,)
    ).fetchone()
    counts.history = int(history[0]) if history else 0
    cur = conn.execute("DELETE FROM memory WHERE id = ANY(%s)", (wanted,))
    counts.rows = cur.rowcount
    return counts


def replace_summary_text(conn: psycopg.Connection[Any], summary_id: int, text: str) -> None:
    """The text of a stale summary, rebuilt from the sources it has left."""
    conn.execute(
        "UPDATE tag_summaries SET summary = %s, model = 'extractive' WHERE id = %s",
        (text, summary_id),
    )


def drop_summary(conn: psycopg.Connection[Any], summary_id: int) -> None:
    conn.execute("DELETE FROM tag_summaries WHERE id = %s", (summary_id,))
