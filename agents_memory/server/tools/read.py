"""``read_memory``: read around a hit, or page through a session, within a character budget.

Seed B's load-session / get / expand in one call: ``memory_id`` (a search hit's id) gives the
turns before and after it in its session; ``session_id`` alone starts at the session's first
turn. Turns nearest the anchor are taken first, alternating after/before, until the budget is
spent; a turn that does not fit whole is clipped and ends reading on its side.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

import psycopg
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from agents_memory.clipping import MIN_SHOWN, clip
from agents_memory.daterange import period_bound
from agents_memory.recall.actions import ShownTurn, turn_lines
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text
from agents_memory.store import knowledge
from agents_memory.store.memories import MemoryRow
from agents_memory.store.recall import as_of as as_of_store


class TurnOut(BaseModel):
    id: int
    role: str
    agent_platform: str
    agent_model: str | None = None
    message_at: datetime
    message: str
    clipped: bool = False
    anchor: bool = False
    archived: bool = False
    actions: list[str] = Field(default_factory=list)
    """The tool calls this (assistant) turn made, one compact line each."""


class ReadResult(BaseModel):
    session_id: str | None = None
    agent_platform: str
    session_turns: int
    turns: list[TurnOut]
    more_before: bool
    more_after: bool
    chars: int
    next: str | None = None


def run_read_memory(
    state: ServerState,
    *,
    memory_id: int | None,
    session_id: str | None,
    before: int,
    after: int,
    max_chars: int,
    as_of: datetime | None = None,
) -> ReadResult:
    """The turns around ``memory_id`` or from ``session_id``'s start within ``max_chars``;
    with ``as_of``, as they were then (:mod:`agents_memory.store.recall.as_of`): the turns
    stored by then, a slot's value live then, each text as it read then."""
    read = max_chars + 1  # no turn can show more; one more tells that it was cut
    with state.pool.connection() as conn:
        if memory_id is not None:
            anchor = knowledge.get_memory(conn, state.user_id, memory_id, chars=read, visible=True)
            if anchor is None:
                raise ToolError(
                    f"no memory with id {memory_id}; use the `id` of a search_memory result"
                )
            if as_of is not None:
                anchor = _anchor_as_of(conn, state.user_id, anchor, as_of, read)
        elif session_id:
            anchor = knowledge.session_first_turn(
                conn, state.user_id, session_id, chars=read, until=as_of
            )
            if anchor is None:
                raise ToolError(
                    f"no session {session_id!r}"
                    + (" by then" if as_of else "")
                    + "; use the `session_id` of a search_memory result"
                )
            before = 0
        else:
            raise ToolError(
                "read_memory needs `memory_id` (a search_memory result's id) or `session_id`"
            )
        # The session is its owner's: a teammate's shared turn reads on in their session (a
        # member's connection sees only the shared rows of it: the database's policies).
        owner = anchor.user_id
        earlier = knowledge.session_neighbours(
            conn, owner, anchor, direction="before", limit=before + 1, chars=read, until=as_of
        )
        later = knowledge.session_neighbours(
            conn, owner, anchor, direction="after", limit=after + 1, chars=read, until=as_of
        )
        if as_of is not None:
            anchor, earlier, later = _texts_then(conn, (anchor, earlier, later), as_of, read)
        total = knowledge.session_size(conn, owner, anchor, as_of) if anchor.session_id else 1
        result = _within_budget(anchor, earlier, later, before, after, max_chars, total)
        shown = {t.id for t in result.turns}
        prior = next((r for r in earlier if r.id not in shown), None)  # nearest first
        done = turn_lines(
            conn,
            owner,
            [ShownTurn(t.id, t.role, t.message_at) for t in result.turns],
            platform=anchor.agent_platform,
            session_id=anchor.session_id,
            preceding=ShownTurn(prior.id, prior.role, prior.message_at) if prior else None,
        )
    for turn in result.turns:
        turn.actions = done.get(turn.id, [])
    if as_of is not None:
        _archived_then(result, (anchor, *earlier, *later), as_of)
    return result


def _anchor_as_of(
    conn: psycopg.Connection[Any], user_id: int, anchor: MemoryRow, at: datetime, chars: int
) -> MemoryRow:
    """The anchor as of ``at``: refused when it was not stored yet; a slot's value is the one
    live then (superseded or expired since, or a later value's predecessor)."""
    slot = as_of_store.slot_of(conn, anchor.id)
    if slot is not None:
        live = as_of_store.slot_value_at(conn, anchor.user_id, slot, at)
        if live is None:
            raise ToolError(f"slot {slot!r} had no live value on {at:%Y-%m-%d %H:%M} UTC")
        if live != anchor.id:
            found = knowledge.get_memory(conn, user_id, live, chars=chars, visible=True)
            anchor = found or anchor
    if anchor.message_at >= at:
        raise ToolError(
            f"memory {anchor.id} was stored on {anchor.message_at:%Y-%m-%d}, after `as_of`"
        )
    return anchor


Rows = tuple[MemoryRow, list[MemoryRow], list[MemoryRow]]


def _texts_then(conn: psycopg.Connection[Any], rows: Rows, at: datetime, chars: int) -> Rows:
    """Each row with the text it had at ``at`` (an edit since kept the older text)."""
    anchor, earlier, later = rows
    ids = [anchor.id, *(r.id for r in earlier), *(r.id for r in later)]
    old = as_of_store.texts_at(conn, ids, at, chars=chars)

    def then(row: MemoryRow) -> MemoryRow:
        return replace(row, message=old[row.id]) if row.id in old else row

    return then(anchor), [then(r) for r in earlier], [then(r) for r in later]


def _archived_then(result: ReadResult, rows: tuple[MemoryRow, ...], at: datetime) -> None:
    """A turn reads archived when it was by ``at`` (a value superseded later was live then)."""
    archived_at = {r.id: r.archived_at for r in rows}
    for turn in result.turns:
        when = archived_at.get(turn.id)
        turn.archived = when is not None and when < at


def _within_budget(
    anchor: MemoryRow,
    earlier: list[MemoryRow],
    later: list[MemoryRow],
    before: int,
    after: int,
    max_chars: int,
    total: int,
) -> ReadResult:
    """Take the anchor, then the nearest turns alternately after and before it, while they
    fit ``max_chars``."""
    room = max_chars
    first = _clip(anchor, room, anchor=True)
    room -= len(first.message)
    taken: dict[str, list[TurnOut]] = {"before": [], "after": []}
    sides: dict[str, list[MemoryRow]] = {"before": earlier[:before], "after": later[:after]}
    open_sides = {side for side, rows in sides.items() if rows}
    step = 0
    while open_sides:
        for side in ("after", "before"):
            if side not in open_sides:
                continue
            rows = sides[side]
            if step >= len(rows) or room < MIN_SHOWN:
                open_sides.discard(side)
                continue
            turn = _clip(rows[step], room)
            taken[side].append(turn)
            room -= len(turn.message)
            if turn.clipped:
                open_sides.discard(side)
        step += 1
    turns = [*reversed(taken["before"]), first, *taken["after"]]
    more_before = len(earlier) > len(taken["before"])
    more_after = len(later) > len(taken["after"]) or turns[-1].clipped
    return ReadResult(
        session_id=anchor.session_id,
        agent_platform=anchor.agent_platform,
        session_turns=total,
        turns=turns,
        more_before=more_before,
        more_after=more_after,
        chars=sum(len(t.message) for t in turns),
        next=_next_hint(turns, more_before, more_after),
    )


def _clip(row: MemoryRow, room: int, *, anchor: bool = False) -> TurnOut:
    text, clipped = clip(row.message, room)
    return TurnOut(
        id=row.id,
        role=row.role,
        agent_platform=row.agent_platform,
        agent_model=row.agent_model,
        message_at=row.message_at,
        message=text,
        clipped=clipped,
        anchor=anchor,
        archived=not row.is_active,
    )


def _next_hint(turns: list[TurnOut], more_before: bool, more_after: bool) -> str | None:
    hints = []
    last = turns[-1]
    if last.clipped:
        hints.append(
            f"the rest of turn {last.id}: read_memory memory_id={last.id} before=0 after=0 "
            "with a larger max_chars"
        )
    elif more_after:
        hints.append(f"read on: read_memory memory_id={last.id} before=0 after=10")
    if more_before:
        hints.append(f"read back: read_memory memory_id={turns[0].id} before=10 after=0")
    return "; ".join(hints) or None


ANNOTATIONS = ToolAnnotations(
    title="Read around a memory",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=ANNOTATIONS)
    def read_memory(
        ctx: ServerContext,
        memory_id: Annotated[
            int | None,
            Field(description="A search hit's id."),
        ] = None,
        session_id: Annotated[
            Text | None,
            Field(description="Or a whole session."),
        ] = None,
        before: Annotated[int, Field(ge=0, le=50)] = 3,
        after: Annotated[int, Field(ge=0, le=50)] = 3,
        max_chars: Annotated[
            int,
            Field(
                ge=500,
                le=50_000,
                description="Character budget.",
            ),
        ] = 6000,
        as_of: Text | None = None,
    ) -> ReadResult:
        """A hit with its neighbours and tool calls, or a session from its start; `next`
        says how on."""
        return run_read_memory(
            state_of(ctx),
            memory_id=memory_id,
            session_id=session_id,
            before=before,
            after=after,
            max_chars=max_chars,
            as_of=moment(as_of, datetime.now(UTC)),
        )


def moment(text: str | None, now: datetime) -> datetime | None:
    """The end of the period ``text`` names (``search_memory``'s ``as_of`` rule,
    :func:`agents_memory.daterange.period_bound`), relative to ``now``."""
    if text is None or not text.strip():
        return None
    try:
        return period_bound(text.strip(), now, start=False)
    except ValueError as exc:
        raise ToolError(f"as_of {text!r} not understood: {exc}") from exc
