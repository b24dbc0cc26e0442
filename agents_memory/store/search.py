"""Hybrid search over memories: a BM25 full-text arm and a vector arm, fused by score.

The ranking (:mod:`agents_memory.store.search_rank`) scores the candidates of both arms and
their session neighbours with BM25 (term rarity sampled over the newest rows in scope) and the
cosine to the query vector, fuses the normalised scores, lets a turn borrow from its neighbours
and its session, favours turns on a date the query names, and multiplies a gentle recency prior
on ``message_at`` and a boost for pinned rows.

When both arms are weak (no full-text hit and the best cosine below the fallback threshold) a
word-level ILIKE scan over the newest rows runs instead. Without a query the newest rows come
first. Without the vector column (no pgvector) or without a query vector only the full-text arm
runs. Every hit says why it matched (:class:`MatchWhy`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from agents_memory.store.search_rank import hybrid_statement
from agents_memory.store.search_terms import QueryTerms, query_dates, query_terms
from agents_memory.store.search_types import (
    MAX_LIMIT,
    Arm,
    MatchWhy,
    SearchFilters,
    SearchHit,
    SearchResult,
    SearchTuning,
    Used,
)

__all__ = [
    "MAX_LIMIT",
    "MatchWhy",
    "SearchFilters",
    "SearchHit",
    "SearchResult",
    "SearchTuning",
    "explain_search",
    "find_user_id",
    "search_memories",
]


def find_user_id(conn: psycopg.Connection[Any], user_name: str) -> int | None:
    """The id of ``user_name`` without creating it (a search must not write)."""
    row = conn.execute("SELECT user_id FROM users WHERE user_name = %s", (user_name,)).fetchone()
    return int(row[0]) if row else None


@dataclass(frozen=True, slots=True)
class _TagFilter:
    canonical_id: int
    name: str
    member_ids: list[int]


def _resolve_p_tag(conn: psycopg.Connection[Any], name: str) -> _TagFilter | None:
    row = conn.execute(
        "WITH target AS (SELECT canonical_project_tag_id(id) AS cid FROM project_tags"
        "  WHERE lower(name) = lower(%(n)s) ORDER BY (name = %(n)s) DESC, id LIMIT 1)"
        " SELECT t.cid, c.name, (SELECT array_agg(p.id) FROM project_tags p"
        "  WHERE canonical_project_tag_id(p.id) = t.cid)"
        " FROM target t JOIN project_tags c ON c.id = t.cid",
        {"n": name},
    ).fetchone()
    if row is None:
        return None
    return _TagFilter(int(row[0]), str(row[1]), [int(i) for i in row[2]])


def _filter_sql(filters: SearchFilters, tag: _TagFilter | None, user_id: int) -> sql.Composable:
    """The WHERE conditions every arm shares, on alias ``m``, their values written in: a plan
    made once for the statement is then made for this user's and these filters' row counts."""
    parts: list[sql.Composable] = [sql.SQL("m.user_id = {}").format(_literal(user_id))]
    if not filters.include_archived:
        parts.append(sql.SQL("m.is_active"))
    if filters.role is not None:
        parts.append(sql.SQL("m.role = {}").format(_literal(filters.role)))
    if filters.agent_platform not in (None, "", "*"):
        parts.append(sql.SQL("m.agent_platform = {}").format(_literal(filters.agent_platform)))
    if filters.device_scope == "local":
        parts.append(
            sql.SQL("(m.device_name = {} OR m.is_pinned)").format(_literal(filters.device_name))
        )
    if tag is not None:
        parts.append(sql.SQL("m.p_tag_id = ANY({}::bigint[])").format(_literal(tag.member_ids)))
    if filters.date_range is not None and filters.date_range.start is not None:
        parts.append(sql.SQL("m.message_at >= {}").format(_literal(filters.date_range.start)))
    if filters.date_range is not None and filters.date_range.end is not None:
        parts.append(sql.SQL("m.message_at < {}").format(_literal(filters.date_range.end)))
    return sql.SQL(" AND ").join(parts)


def _literal(value: Any) -> sql.Composable:
    """``value`` quoted as an SQL literal, its ``%`` doubled: the statements carrying it are
    executed with parameters (``params`` may be empty), so psycopg reads ``%`` as a
    placeholder's start and ``%%`` as one ``%``."""
    return sql.SQL(sql.Literal(value).as_string(None).replace("%", "%%"))


def search_memories(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    query: str | None,
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> SearchResult:
    """Search ``user_id``'s memories. Read-only; runs in its own transaction (a savepoint when
    the caller already has one open) because the HNSW settings are ``SET LOCAL``."""
    with conn.transaction():
        tag: _TagFilter | None = None
        if filters.p_tag:
            tag = _resolve_p_tag(conn, filters.p_tag)
            if tag is None:
                return SearchResult(
                    used="none",
                    note=f"unknown project tag {filters.p_tag!r}: nothing is tagged with it "
                    "or with an alias of it",
                )
        tag_name = tag.name if tag else None
        if query is None or not query.strip():
            hits = _recency(conn, user_id, filters, tag)
            return SearchResult(used="recency", hits=hits, p_tag=tag_name)
        terms = query_terms(query)
        vector, note = _prepare(conn, query_vector, filters, tuning)
        hybrid = _hybrid(conn, user_id, query, vector, filters, tag, tuning)
        if hybrid.fts_hits > 0 or (
            hybrid.top_similarity is not None and hybrid.top_similarity >= tuning.fallback_threshold
        ):
            return SearchResult(
                used=hybrid.used,
                hits=hybrid.hits,
                note=note,
                top_similarity=hybrid.top_similarity,
                p_tag=tag_name,
                vector_used=vector is not None,
            )
        fallback = _ilike(conn, user_id, terms, filters, tag, tuning)
        weak = (
            "no full-text match"
            if hybrid.top_similarity is None
            else f"no full-text match and the best similarity {hybrid.top_similarity:.3f} is"
            f" below {tuning.fallback_threshold}"
        )
        if not fallback and hybrid.hits:
            return SearchResult(
                used=hybrid.used,
                hits=hybrid.hits,
                note=_join_notes(note, f"{weak}; no word matches either: weak matches shown"),
                top_similarity=hybrid.top_similarity,
                threshold=tuning.fallback_threshold,
                p_tag=tag_name,
                vector_used=vector is not None,
            )
        return SearchResult(
            used="ilike",
            hits=fallback,
            note=_join_notes(note, f"{weak}; matched by words instead"),
            top_similarity=hybrid.top_similarity,
            threshold=tuning.fallback_threshold,
            p_tag=tag_name,
            vector_used=vector is not None,
        )


def explain_search(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    query: str,
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> str:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the hybrid statement a search would run, with the plan
    it would run (generic when it is planned once; for benches and tests; the ``p_tag``
    filter is not resolved here)."""
    with conn.transaction():
        vector, _note = _prepare(conn, query_vector, filters, tuning)
        statement, params = _hybrid_statement(user_id, query, vector, filters, None, tuning)
        if not _plan_once(filters, tuning):
            plan = conn.execute(sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + statement, params)
            return "\n".join(str(r[0]) for r in plan.fetchall())
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            if match[1] not in names:
                names.append(match[1])
            return f"${names.index(match[1]) + 1}"

        # ``%%`` is one ``%`` (in a literal); each ``%(name)s`` becomes a numbered parameter.
        text = re.sub(
            r"%%|%\((\w+)\)s",
            lambda m: "%" if m[0] == "%%" else number(m),
            statement.as_string(conn),
        )
        types = sql.SQL(", ").join(sql.SQL(_explain_type(n, params[n])) for n in names)
        args = sql.SQL(", ").join(sql.Literal(params[n]) for n in names)
        name = sql.Identifier(f"agents_memory_explain_{uuid.uuid4().hex}")
        with _generic_plans(conn):
            conn.execute(sql.SQL("PREPARE {} ({}) AS ").format(name, types) + sql.SQL(text))
            try:
                rows = conn.execute(
                    sql.SQL("EXPLAIN (ANALYZE, BUFFERS) EXECUTE {} ({})").format(name, args)
                ).fetchall()
            finally:
                if conn.info.transaction_status != TransactionStatus.INERROR:
                    conn.execute(sql.SQL("DEALLOCATE {}").format(name))
        return "\n".join(str(r[0]) for r in rows)


def _plan_once(filters: SearchFilters, tuning: SearchTuning) -> bool:
    """Whether to plan the statement once and keep the plan (about 1.3 MB of the server's memory
    per statement and connection). Not with a date-range filter: its bounds, written into the
    statement, are new on almost every call ("the last week" moves with the clock), so a kept
    plan would serve one search."""
    return tuning.plan_once and filters.date_range is None


@contextmanager
def _generic_plans(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Prepared statements run in the block get a plan made for any parameter values (a generic
    plan: the hybrid statement's plan depends on none of them); the setting is put back after,
    for whatever the transaction runs next."""
    before = conn.execute(
        "SELECT current_setting('plan_cache_mode'),"
        " set_config('plan_cache_mode', 'force_generic_plan', true)"
    ).fetchone()
    yield
    if before is not None:
        conn.execute("SELECT set_config('plan_cache_mode', %s, true)", (before[0],))


def _explain_type(name: str, value: Any) -> str:
    """The type of the hybrid statement's parameter ``name`` for a server-side ``PREPARE``."""
    if name == "qvec":
        return "halfvec"
    if isinstance(value, list):
        return "timestamptz[]" if name.startswith("d_") else "text[]"
    if isinstance(value, str):
        return "text"
    return "int8" if isinstance(value, int) else "float8"


def _prepare(
    conn: psycopg.Connection[Any],
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> tuple[str | None, str | None]:
    """One round trip before the search: the transaction's settings (no stop-word notices;
    iterative HNSW scans, so filtered rows are replaced and never starve the page) and the
    vector column's dimensions. Returns the query vector as a ``halfvec`` literal, or ``None``
    and why not."""
    hnsw = query_vector is not None
    row = conn.execute(
        "SELECT set_config('client_min_messages', 'warning', true),"
        " CASE WHEN %(hnsw)s THEN set_config('hnsw.iterative_scan', 'relaxed_order', true) END,"
        " CASE WHEN %(hnsw)s THEN set_config('hnsw.ef_search', %(ef)s, true) END,"
        " CASE WHEN %(hnsw)s THEN set_config('hnsw.max_scan_tuples', %(tuples)s, true) END,"
        " (SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass('memory')"
        "  AND a.attname = 'embedding' AND NOT a.attisdropped)",
        {
            "hnsw": hnsw,
            "ef": str(tuning.ef_search(filters.limit)),
            "tuples": str(tuning.hnsw_max_scan_tuples),
        },
    ).fetchone()
    if query_vector is None:
        return None, None
    dim = int(row[4]) if row is not None and row[4] is not None and int(row[4]) > 0 else None
    return _usable_vector(dim, query_vector)


def _join_notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _usable_vector(
    dim: int | None, query_vector: np.ndarray[Any, Any]
) -> tuple[str | None, str | None]:
    """The query vector as a ``halfvec`` literal, or ``None`` and why not."""
    if dim is None:
        return None, "no vector column (pgvector unavailable): full-text only"
    flat = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    if flat.shape[0] != dim:
        return None, (
            f"the query vector has {flat.shape[0]} dimensions, stored vectors {dim}: full-text only"
        )
    if not np.all(np.isfinite(flat)) or not np.any(flat):
        return None, "the query vector is empty or not finite: full-text only"
    return "[" + ",".join(f"{x:.6g}" for x in flat.tolist()) + "]", None


# --- the hybrid statement --------------------------------------------------------------------

_HIT_COLUMNS = sql.SQL(
    "m.id, m.role, m.message, m.agent_platform, m.agent_model, m.session_id, t.name,"
    " m.d_tag, m.is_pinned, m.message_at, m.device_name, m.cwd"
)
_TAG_JOIN = sql.SQL("LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(m.p_tag_id)")


@dataclass(frozen=True, slots=True)
class _Hybrid:
    used: Used
    hits: tuple[SearchHit, ...]
    fts_hits: int
    top_similarity: float | None


def _hybrid_statement(
    user_id: int,
    query: str,
    vector: str | None,
    filters: SearchFilters,
    tag: _TagFilter | None,
    tuning: SearchTuning,
) -> tuple[sql.Composed, dict[str, Any]]:
    return hybrid_statement(
        terms=query_terms(query),
        dates=query_dates(query, tuning.date_slack_days),
        vector=vector,
        filters=filters,
        where=_filter_sql(filters, tag, user_id),
        tuning=tuning,
        columns=_HIT_COLUMNS,
        tag_join=_TAG_JOIN,
    )


def _hybrid(
    conn: psycopg.Connection[Any],
    user_id: int,
    query: str,
    vector: str | None,
    filters: SearchFilters,
    tag: _TagFilter | None,
    tuning: SearchTuning,
) -> _Hybrid:
    statement, params = _hybrid_statement(user_id, query, vector, filters, tag, tuning)
    if _plan_once(filters, tuning):
        # Prepared: planned once per connection for any words, then only executed.
        with _generic_plans(conn):
            rows = conn.execute(statement, params, prepare=True).fetchall()
    else:
        rows = conn.execute(statement, params, prepare=False).fetchall()
    hits = tuple(_hybrid_hit(row) for row in rows)
    if not rows:
        return _Hybrid("fulltext" if vector is None else "hybrid", (), 0, None)
    fts_hits, vec_hits, top_similarity = int(rows[0][22]), int(rows[0][23]), rows[0][24]
    used: Used = "hybrid"
    if vec_hits == 0:
        used = "fulltext"
    elif fts_hits == 0:
        used = "vector"
    top = float(top_similarity) if top_similarity is not None else None
    return _Hybrid(used, hits, fts_hits, top)


def _hybrid_hit(row: Sequence[Any]) -> SearchHit:
    fts_rank, fts_score, vec_rank, similarity, fused, context, dated = row[12:19]
    recency, pinned, score = row[19:22]
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
        recency_factor=float(recency),
        pinned_factor=float(pinned),
        score=float(score),
    )
    return _hit(row, why)


def _hit(row: Sequence[Any], why: MatchWhy) -> SearchHit:
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
        why=why,
    )


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


# --- recency listing and the ILIKE fallback --------------------------------------------------


def _recency(
    conn: psycopg.Connection[Any], user_id: int, filters: SearchFilters, tag: _TagFilter | None
) -> tuple[SearchHit, ...]:
    statement = sql.SQL(
        "SELECT {columns} FROM (SELECT m.* FROM memory m WHERE {filters}"
        "  ORDER BY m.message_at DESC, m.id DESC LIMIT {limit}) m {tag_join}"
        " ORDER BY m.message_at DESC, m.id DESC"
    ).format(
        columns=_HIT_COLUMNS,
        filters=_filter_sql(filters, tag, user_id),
        limit=sql.Literal(filters.limit),
        tag_join=_TAG_JOIN,
    )
    rows = conn.execute(statement, {}).fetchall()  # parameters: ``%%`` in a literal is one ``%``
    return tuple(_hit(row, MatchWhy(arms=("recency",))) for row in rows)


def _ilike(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: QueryTerms,
    filters: SearchFilters,
    tag: _TagFilter | None,
    tuning: SearchTuning,
) -> tuple[SearchHit, ...]:
    """Rows containing any of the query's words, most words first, then newest; only the
    newest ``tuning.ilike_scan_rows`` rows are looked at."""
    if not terms.like_patterns:
        return ()
    statement = sql.SQL(
        "SELECT {columns}, m.matched FROM ("
        "  SELECT r.*, w.matched FROM ("
        "   SELECT m.* FROM memory m WHERE {filters}"
        "   ORDER BY m.message_at DESC, m.id DESC LIMIT {scan}) r"
        "  CROSS JOIN LATERAL (SELECT count(*) AS matched FROM unnest(%(patterns)s::text[]) p"
        "   WHERE r.message ILIKE p) w"
        "  WHERE w.matched > 0"
        "  ORDER BY w.matched DESC, r.message_at DESC, r.id DESC LIMIT {limit}) m"
        " {tag_join}"
        " ORDER BY m.matched DESC, m.message_at DESC, m.id DESC"
    ).format(
        columns=_HIT_COLUMNS,
        filters=_filter_sql(filters, tag, user_id),
        scan=sql.Literal(tuning.ilike_scan_rows),
        limit=sql.Literal(filters.limit),
        tag_join=_TAG_JOIN,
    )
    rows = conn.execute(statement, {"patterns": list(terms.like_patterns)}).fetchall()
    return tuple(_hit(row, MatchWhy(arms=("ilike",), words_matched=int(row[12]))) for row in rows)
