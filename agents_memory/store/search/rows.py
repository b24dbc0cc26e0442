"""The columns every kind of search returns for a hit, and a hit made of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql

from agents_memory.store.search.types import Arm, MatchWhy, SearchHit

HIT_READ_CHARS = 64_000
"""A hit's text is read up to this many characters (a captured turn can hold megabytes; the
hit's confidence looks for the query's words in this much of it, and what leaves is clipped
further, :data:`~agents_memory.store.search.types.HIT_MAX_CHARS`)."""
HIT_COLUMNS = sql.SQL(
    "m.id, m.role, left(m.message, {read}), m.agent_platform, m.agent_model, m.session_id,"
    " t.name, m.d_tag, m.is_pinned, m.message_at, m.device_name, m.cwd, NOT m.is_active,"
    " length(m.message)"
).format(read=sql.Literal(HIT_READ_CHARS))
"""On alias ``m`` (the memory row) and ``t`` (its canonical project tag, :data:`TAG_JOIN`)."""
HIT_WIDTH = 14
"""How many columns :data:`HIT_COLUMNS` holds (a search's own columns follow them)."""
TAG_JOIN = sql.SQL("LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(m.p_tag_id)")


def hit(row: Sequence[Any], why: MatchWhy) -> SearchHit:
    """A hit from the :data:`HIT_COLUMNS` at the start of ``row``."""
    return SearchHit(
        id=int(row[0]),
        role=str(row[1]),
        message=str(row[2]),
        agent_platform=str(row[3]),
        agent_model=row[4],
        session_id=row[5],
        p_tag=row[6],
        d_tag=tuple(row[7] or ()),
        is_pinned=bool(row[8]),
        message_at=row[9],
        device_name=row[10],
        cwd=row[11],
        archived=bool(row[12]),
        chars=int(row[13]),
        why=why,
    )


def hybrid_hit(row: Sequence[Any]) -> SearchHit:
    """A hit from a row of the hybrid statement (its score columns follow the hit's)."""
    fts_rank, fts_score, vec_rank, similarity, fused, context, dated = row[HIT_WIDTH:][:7]
    recency, pinned, score = row[HIT_WIDTH + 7 :][:3]
    extra = row[HIT_WIDTH + 13 :]
    project, all_rare = (extra[0], extra[1]) if len(extra) >= 2 else (None, None)
    arms: list[Arm] = []
    if fts_rank is not None:
        arms.append("fulltext")
    if vec_rank is not None:
        arms.append("vector")
    if not arms:
        arms.append("context")
    why = MatchWhy(
        arms=tuple(arms),
        fts_rank=_opt_int(fts_rank),
        fts_score=_opt_float(fts_score),
        vector_rank=_opt_int(vec_rank),
        similarity=_opt_float(similarity),
        fused_score=float(fused),
        context_boost=float(context),
        date_boost=float(dated) if dated else None,
        project_boost=float(project) if project else None,
        all_rare=bool(all_rare) if all_rare else None,
        recency_factor=float(recency),
        pinned_factor=float(pinned),
        score=float(score),
    )
    return hit(row, why)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
