"""The turns' ranking and the actions arm (:mod:`agents_memory.store.search.actions`) as one
page: reciprocal-rank fusion of the two lists, the actions list weighted by how much of the
query its best action holds, and a turn of the actions list lifted by the place of its session
among the turns' hits (a question names its task in words the session's turns hold, its answer
is in an action: "what error did the deploy hit while fixing the search index bug"). A turn
only the actions arm found is read and given ``arms=("action",)``; each hit carries the
actions found for its turn, and a turn found through its actions also its other actions (up to
:data:`CONTEXT_ACTIONS`: the read after the search that found a definition)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.search.actions import ActionTurns, actions_of
from agents_memory.store.search.rows import HIT_COLUMNS, TAG_JOIN, hit
from agents_memory.store.search.types import MatchWhy, SearchHit, SearchTuning

SURE_FLOOR = 0.25
"""The least weight share the actions list keeps however little of the query it holds."""
CONTEXT_ACTIONS = 6
"""The most actions a hit found through its actions lists (the matching ones first)."""


def with_actions(hits: tuple[SearchHit, ...], found: ActionTurns) -> tuple[SearchHit, ...]:
    """``hits`` each with the actions ``found`` for its turn."""
    return tuple(replace(h, actions=found.of(h.id)) if found.of(h.id) else h for h in hits)


def fuse(
    conn: psycopg.Connection[Any],
    user_id: int,
    hits: tuple[SearchHit, ...],
    arm: ActionTurns,
    shown: ActionTurns,
    *,
    limit: int,
    tuning: SearchTuning,
    context: bool = True,
) -> tuple[SearchHit, ...]:
    """The page: ``hits`` (the turns' ranking) fused with the actions arm's turns ``arm``;
    each hit with its actions from ``arm``, else from ``shown`` (a ``kind`` / ``file``
    filter's), and with ``context`` a found turn's other actions."""
    if tuning.action_fusion == "off" or not arm.order:
        return with_actions(hits, shown)[:limit]
    k = tuning.action_rrf_k
    weight = tuning.action_weight * max(arm.sure, SURE_FLOOR)
    scores: dict[int, float] = {}
    for rank, h in enumerate(hits, 1):
        scores[h.id] = 1.0 / (k + rank)
    action_rank = {turn: rank for rank, turn in enumerate(arm.order, 1)}
    session_rank: dict[tuple[str, str | None], int] = {}
    for rank, h in enumerate(hits, 1):
        session_rank.setdefault((h.agent_platform, h.session_id), rank)
    for turn, rank in action_rank.items():
        scores[turn] = scores.get(turn, 0.0) + weight / (k + rank)
        place = session_rank.get((arm.sessions or {}).get(turn, ("", None)))
        if place is not None and tuning.action_session_weight > 0:
            scores[turn] += tuning.action_session_weight * weight / (k + place)
    by_id = {h.id: h for h in hits}
    best = sorted(scores, key=lambda t: -scores[t])[:limit]
    by_id.update(turn_hits(conn, [t for t in best if t not in by_id]))
    more = [t for t in best if t in action_rank] if context else []
    others = actions_of(conn, user_id, more, per_turn=20)
    page: list[SearchHit] = []
    for turn in (t for t in best if t in by_id):  # a turn gone between the reads is left out
        h = by_id[turn]
        found = arm.of(turn) or shown.of(turn)
        if turn in action_rank:
            arms = h.why.arms if "action" in h.why.arms else (*h.why.arms, "action")
            h = replace(h, why=replace(h.why, arms=arms, action_rank=action_rank[turn]))
            ids = {a.id for a in found}
            found = (*found, *(a for a in others.get(turn, ()) if a.id not in ids))
        page.append(replace(h, actions=found[:CONTEXT_ACTIONS]))
    return tuple(page)


def turn_hits(conn: psycopg.Connection[Any], ids: list[int]) -> dict[int, SearchHit]:
    """The turns ``ids`` as hits found by the actions arm alone."""
    if not ids:
        return {}
    statement = sql.SQL("SELECT {columns} FROM memory m {tag_join} WHERE m.id = ANY(%s)").format(
        columns=HIT_COLUMNS, tag_join=TAG_JOIN
    )
    rows = conn.cursor(row_factory=dict_row).execute(statement, (ids,)).fetchall()
    return {int(r["id"]): hit(r, MatchWhy(arms=("action",))) for r in rows}
