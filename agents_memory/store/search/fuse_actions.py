"""The turns' ranking and the actions arm (:mod:`agents_memory.store.search.actions`) as one
page: reciprocal-rank fusion of the two lists, the actions list weighted by how much of the
query its best action holds; a turn only the actions arm found is read and given
``arms=("action",)``; each hit carries the actions found for its turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.search.actions import ActionTurns
from agents_memory.store.search.rows import HIT_COLUMNS, TAG_JOIN, hit
from agents_memory.store.search.types import MatchWhy, SearchHit, SearchTuning

SURE_FLOOR = 0.25
"""The least weight share the actions list keeps however little of the query it holds."""


def with_actions(hits: tuple[SearchHit, ...], found: ActionTurns) -> tuple[SearchHit, ...]:
    """``hits`` each with the actions ``found`` for its turn."""
    return tuple(replace(h, actions=found.of(h.id)) if found.of(h.id) else h for h in hits)


def fuse(
    conn: psycopg.Connection[Any],
    hits: tuple[SearchHit, ...],
    arm: ActionTurns,
    shown: ActionTurns,
    *,
    limit: int,
    tuning: SearchTuning,
) -> tuple[SearchHit, ...]:
    """The page: ``hits`` (the turns' ranking) fused with the actions arm's turns ``arm``;
    each hit with its actions from ``arm``, else from ``shown`` (a ``kind`` / ``file``
    filter's)."""
    if tuning.action_fusion == "off" or not arm.order:
        return with_actions(hits, shown)[:limit]
    k = tuning.action_rrf_k
    weight = tuning.action_weight * max(arm.sure, SURE_FLOOR)
    scores: dict[int, float] = {}
    for rank, h in enumerate(hits, 1):
        scores[h.id] = 1.0 / (k + rank)
    action_rank = {turn: rank for rank, turn in enumerate(arm.order, 1)}
    for turn, rank in action_rank.items():
        scores[turn] = scores.get(turn, 0.0) + weight / (k + rank)
    by_id = {h.id: h for h in hits}
    best = sorted(scores, key=lambda t: -scores[t])[:limit]
    by_id.update(turn_hits(conn, [t for t in best if t not in by_id]))
    page: list[SearchHit] = []
    for turn in (t for t in best if t in by_id):  # a turn gone between the reads is left out
        h = by_id[turn]
        if turn in action_rank:
            arms = h.why.arms if "action" in h.why.arms else (*h.why.arms, "action")
            h = replace(h, why=replace(h.why, arms=arms, action_rank=action_rank[turn]))
        page.append(replace(h, actions=arm.of(turn) or shown.of(turn)))
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
