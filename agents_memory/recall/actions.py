"""Giving actions (the agents' tool calls) back: one compact line per action, the actions of
the turns a reader shows, and a search over their paths, commands and error text.

Used by ``read_memory`` (each assistant turn lists its actions inline) and by
``mcp-agents-memory actions`` (find actions by words of a path, a command or an error, with
``--kind``, ``--file``, ``--outcome`` filters). The SQL is :mod:`agents_memory.store.actions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import psycopg

from agents_memory.store import actions as action_store
from agents_memory.store.actions import ActionQuery, ActionRow
from agents_memory.store.search import actions as search_actions
from agents_memory.store.search.action_text import ACTION_KINDS, FoundAction, action_line
from agents_memory.store.search.scope import filter_sql
from agents_memory.store.search.types import SearchFilters

MAX_PER_TURN: Final = 12
"""The actions one turn lists inline; the rest are counted (``… and N more``)."""

MAX_SHOWN: Final = 50
"""The actions the console lists under one turn."""

KINDS: Final = ACTION_KINDS
OUTCOMES: Final = ("ok", "error", "interrupted", "unknown")


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """A turn a reader shows: its id, role and time."""

    id: int
    role: str
    at: datetime


def turn_lines(
    conn: psycopg.Connection[Any],
    user_id: int,
    turns: Sequence[ShownTurn],
    *,
    platform: str,
    session_id: str | None,
    preceding: ShownTurn | None = None,
) -> dict[int, list[str]]:
    """For each shown assistant turn that made actions, their lines in the order they were
    made (at most :data:`MAX_PER_TURN`, then how many more): the actions linked to it, and
    those of a tool-only response in its exchange (between the user turns around it).
    ``preceding`` is the session's turn just before the first one shown (``None``: there is
    none), which bounds the first exchange."""
    answers = [t for t in turns if t.role == "assistant"]
    if not answers:
        return {}
    placed: dict[int, list[ActionRow]] = dict(
        action_store.actions_of_turns(conn, [t.id for t in answers])
    )
    if session_id:
        bounds = [*turns, preceding] if preceding is not None else list(turns)
        start = preceding.at if preceding is not None else datetime.min.replace(tzinfo=UTC)
        loose = action_store.session_actions_between(
            conn, user_id, platform, session_id, start, None
        )
        shown = {t.id for t in answers}
        for row in loose:
            owner = _exchange_turn(bounds, row.started_at)
            if owner in shown:
                placed.setdefault(owner, []).append(row)
    out: dict[int, list[str]] = {}
    for memory_id, rows in placed.items():
        rows.sort(key=lambda r: (r.started_at is None, r.started_at or datetime.min, r.id))
        lines = [action_line(row) for row in rows[:MAX_PER_TURN]]
        if len(rows) > MAX_PER_TURN:
            lines.append(f"… and {len(rows) - MAX_PER_TURN} more actions")
        out[memory_id] = lines
    return out


def _exchange_turn(turns: Sequence[ShownTurn], at: datetime | None) -> int | None:
    """The shown assistant turn of the exchange an action made at ``at`` belongs to: the
    latest one before it since the last user turn, else the first one after it before the
    next user turn (``None``: the exchange shows none)."""
    if at is None:
        return None
    ordered = sorted(turns, key=lambda t: (t.at, t.id))
    before = [t for t in ordered if t.at <= at]
    after = [t for t in ordered if t.at > at]
    if before and before[-1].role == "assistant":
        return before[-1].id
    for turn in after:
        if turn.role != "assistant":
            return None
        return turn.id
    return None


@dataclass(frozen=True, slots=True)
class ActionHit:
    """An action found by :func:`find_actions`, with the turn it belongs to."""

    row: ActionRow
    line: str

    def as_dict(self) -> dict[str, Any]:
        row = self.row
        return {
            "id": row.id,
            "kind": row.kind,
            "tool": row.tool,
            "agent_platform": row.agent_platform,
            "session_id": row.session_id,
            "memory_id": row.memory_id,
            "turn_key": row.turn_key,
            "targets": row.targets or [],
            "command": row.command,
            "outcome": row.outcome,
            "exit_code": row.exit_code,
            "excerpt": row.excerpt,
            "lines_added": row.lines_added,
            "lines_removed": row.lines_removed,
            "started_at": row.started_at.isoformat() if row.started_at else None,
            "duration_ms": row.duration_ms,
            "line": self.line,
        }


def find_actions(
    conn: psycopg.Connection[Any], user_id: int, query: ActionQuery
) -> list[ActionHit]:
    """Actions matching ``query`` (words of a path, command or error; the filters), best
    first, each with its line."""
    return [
        ActionHit(row, action_line(row)) for row in action_store.find_actions(conn, user_id, query)
    ]


def actions_shown(
    conn: psycopg.Connection[Any], user_id: int, turn_ids: Sequence[int], kind: str | None = None
) -> dict[int, tuple[FoundAction, ...]]:
    """The actions each of the shown turns ``turn_ids`` made (of ``kind`` when given): the
    console's session page and its timeline list them under their turn."""
    return search_actions.actions_of(conn, user_id, turn_ids, kind=kind, per_turn=MAX_SHOWN)


def turns_that_acted(conn: psycopg.Connection[Any], user_id: int, kind: str) -> tuple[int, ...]:
    """The turns that made an action of ``kind`` (those of the newest
    :data:`~agents_memory.store.search.actions.FILTER_ACTIONS` such actions), newest first."""
    filters = SearchFilters(action_kind=kind)
    return search_actions.filtered_turns(
        conn, user_id, filters, filter_sql(filters, None, user_id)
    ).order
