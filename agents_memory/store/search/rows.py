"""The columns every kind of search returns for a hit, and a hit made of them, read by name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg import sql

from agents_memory.store.search.arms import MIN_SPREAD_ROWS
from agents_memory.store.search.types import Arm, MatchWhy, SearchHit

HIT_READ_CHARS = 64_000
"""A hit's text is read up to this many characters (a captured turn can hold megabytes; the
hit's confidence looks for the query's words in this much of it, and what leaves is clipped
further, :data:`~agents_memory.store.search.types.HIT_MAX_CHARS`)."""
HIT_COLUMNS = sql.SQL(
    "m.id, m.role, left(m.message, {read}) AS message, m.agent_platform, m.agent_model,"
    " m.session_id, t.name AS p_tag, m.d_tag, m.is_pinned, m.message_at, m.device_name, m.cwd,"
    " NOT m.is_active AS archived, length(m.message) AS chars"
).format(read=sql.Literal(HIT_READ_CHARS))
"""On alias ``m`` (the memory row) and ``t`` (its canonical project tag, :data:`TAG_JOIN`);
a search's own columns follow them, each with its own name."""
TAG_JOIN = sql.SQL("LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(m.p_tag_id)")

Row = Mapping[str, Any]
"""A result row by column name (``psycopg.rows.dict_row``)."""


def hit(row: Row, why: MatchWhy) -> SearchHit:
    """A hit from the :data:`HIT_COLUMNS` of ``row``."""
    return SearchHit(
        id=int(row["id"]),
        role=str(row["role"]),
        message=str(row["message"]),
        agent_platform=str(row["agent_platform"]),
        agent_model=row["agent_model"],
        session_id=row["session_id"],
        p_tag=row["p_tag"],
        d_tag=tuple(row["d_tag"] or ()),
        is_pinned=bool(row["is_pinned"]),
        message_at=row["message_at"],
        device_name=row["device_name"],
        cwd=row["cwd"],
        archived=bool(row["archived"]),
        chars=int(row["chars"]),
        why=why,
    )


def hybrid_hit(row: Row) -> SearchHit:
    """A hit from a row of the hybrid statement (its score columns follow the hit's,
    :func:`~agents_memory.store.search.statement.result_rows`)."""
    arms: list[Arm] = []
    if row["fts_rank"] is not None:
        arms.append("fulltext")
    if row["vector_rank"] is not None:
        arms.append("vector")
    if not arms:
        arms.append("context")
    why = MatchWhy(
        arms=tuple(arms),
        fts_rank=_opt_int(row["fts_rank"]),
        fts_score=_opt_float(row["fts_score"]),
        vector_rank=_opt_int(row["vector_rank"]),
        similarity=_opt_float(row["similarity"]),
        similarity_z=_z(row),
        fused_score=float(row["fused"]),
        context_boost=float(row["context"]),
        date_boost=float(row["dated"]) if row["dated"] else None,
        project_boost=float(row["project"]) if row["project"] else None,
        all_rare=bool(row["all_rare"]) if row["all_rare"] else None,
        recency_factor=float(row["recency"]),
        pinned_factor=float(row["pinned"]),
        score=float(row["score"]),
    )
    return hit(row, why)


def _z(row: Row) -> float | None:
    """The row's cosine in standard deviations above the vector candidates' mean (the
    statement's ``vec_mean`` / ``vec_sd``), when there are enough candidates to judge."""
    sim, mean, sd = row["similarity"], row["vec_mean"], row["vec_sd"]
    if sim is None or mean is None or not sd or int(row["vec_hits"]) < MIN_SPREAD_ROWS:
        return None
    return round((float(sim) - float(mean)) / float(sd), 3)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
