"""Running the hybrid statement: the transaction's settings, the query vector as the vector
column takes it, planning once per connection and shape, and the rows read back as hits."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.search.confidence import TermRarity
from agents_memory.store.search.fulltext_ahead import FulltextAhead, given_part
from agents_memory.store.search.rows import HIT_COLUMNS, TAG_JOIN, hybrid_hit
from agents_memory.store.search.scope import TagFilter, filter_sql
from agents_memory.store.search.statement import hybrid_statement
from agents_memory.store.search.terms import ParsedQuery
from agents_memory.store.search.types import SearchFilters, SearchHit, SearchTuning, Used


def prepare_session(
    conn: psycopg.Connection[Any],
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> tuple[str | None, str | None]:
    """One round trip before the search: the transaction's settings (no stop-word notices;
    a ``float8`` printed in its shortest exact form whatever the server's default; iterative
    HNSW scans, so filtered rows are replaced and never starve the page) and the
    vector column's dimensions. Returns the query vector as a ``halfvec`` literal, or ``None``
    and why not."""
    cur = send_settings(conn, query_vector is not None, filters, tuning)
    return vector_literal(cur, query_vector)


def send_settings(
    conn: psycopg.Connection[Any], hnsw: bool, filters: SearchFilters, tuning: SearchTuning
) -> psycopg.Cursor[Any]:
    """Send :func:`prepare_session`'s statement (the HNSW settings when ``hnsw``) and return
    its cursor, read by :func:`vector_literal`: in a pipeline it travels with the statements
    sent beside it."""
    return conn.execute(
        "SELECT set_config('client_min_messages', 'warning', true),"
        " set_config('extra_float_digits', '3', true),"
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
    )


def vector_literal(
    settings: psycopg.Cursor[Any], query_vector: np.ndarray[Any, Any] | None
) -> tuple[str | None, str | None]:
    """The query vector as a ``halfvec`` literal for the vector column :func:`send_settings`
    read (its cursor, ``settings``), or ``None`` and why not."""
    row = settings.fetchone()
    if query_vector is None:
        return None, None
    dim = int(row[5]) if row is not None and row[5] is not None and int(row[5]) > 0 else None
    return _usable_vector(dim, query_vector)


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


def plan_once(filters: SearchFilters, tuning: SearchTuning) -> bool:
    """Whether to plan the statement once and keep the plan (about 1.3 MB of the server's memory
    per statement and connection). Not with a date-range filter: its bounds, written into the
    statement, are new on almost every call ("the last week" moves with the clock), so a kept
    plan would serve one search."""
    return tuning.plan_once and filters.date_range is None and filters.only_ids is None


@contextmanager
def generic_plans(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Prepared statements run in the block get a plan made for any parameter values (a generic
    plan: the hybrid statement's plan depends on none of them); the setting is put back after,
    for whatever the transaction runs next. The block runs in a pipeline: the setting, the
    block's statements and the setting put back go to the server in one round trip (the value
    before is kept on the server, so the client need not wait for it); their rows are read after
    the block. (A libpq older than 14 has no pipeline: then three round trips, same result.)"""
    with (
        conn.pipeline() if psycopg.Pipeline.is_supported() else nullcontext(),
        generic_plans_sent(conn),
    ):
        yield


@contextmanager
def generic_plans_sent(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """:func:`generic_plans` in the caller's pipeline (the setting and the setting put back
    sent around the block's statements, none of their rows read)."""
    conn.execute(
        "SELECT set_config('agents_memory.plan_cache_mode', current_setting('plan_cache_mode'),"
        " true), set_config('plan_cache_mode', 'force_generic_plan', true)"
    )
    yield
    conn.execute(
        "SELECT set_config('plan_cache_mode',"
        " current_setting('agents_memory.plan_cache_mode'), true)"
    )


def search_statement(
    user_id: int,
    query: ParsedQuery,
    vector: str | None,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
    ahead: FulltextAhead | None = None,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The hybrid statement for ``user_id``'s search of ``query`` and its parameters (with
    ``ahead``, the full-text arm's results read instead of the arm run)."""
    return hybrid_statement(
        terms=query.terms,
        date_terms=query.date_terms,
        dates=query.dates,
        anchors=query.anchors,
        projects=query.projects,
        vector=vector,
        filters=filters,
        where=filter_sql(filters, tag, user_id),
        tuning=tuning,
        columns=HIT_COLUMNS,
        tag_join=TAG_JOIN,
        given=None if ahead is None else given_part(ahead, query, tuning),
    )


@dataclass(frozen=True, slots=True)
class Hybrid:
    """What the hybrid statement found, and how strong its arms were."""

    used: Used
    hits: tuple[SearchHit, ...]
    fts_hits: int
    top_similarity: float | None
    arms: tuple[float | None, ...] = ()
    """The arms' confidence inputs (full-text coverage, best cosine, candidates' mean and
    deviation)."""
    rarity: TermRarity | None = None
    """How many rows hold each of the query's terms (``None``: the full-text arm did not run
    or nothing was found)."""


def run_hybrid(
    conn: psycopg.Connection[Any],
    user_id: int,
    query: ParsedQuery,
    vector: str | None,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
    ahead: FulltextAhead | None = None,
) -> Hybrid:
    """Run the hybrid statement (prepared and planned once when :func:`plan_once`); with
    ``ahead`` (the full-text arm run for a search with a vector, or without, as this one),
    the rest of it."""
    if ahead is not None and ahead.with_vector != (vector is not None):
        ahead = None  # the vector did not come: the arm runs again, weighted for that
    statement, params = search_statement(user_id, query, vector, filters, tag, tuning, ahead)
    cur = conn.cursor(row_factory=dict_row)
    if plan_once(filters, tuning):
        # Prepared: planned once per connection for any words, then only executed.
        with generic_plans(conn):
            cur.execute(statement, params, prepare=True)
        rows = cur.fetchall()
    else:
        rows = cur.execute(statement, params, prepare=False).fetchall()
    hits = tuple(hybrid_hit(row) for row in rows)
    if not rows:
        return Hybrid("fulltext" if vector is None else "hybrid", (), 0, None)
    first = rows[0]
    fts_hits, vec_hits = int(first["fts_hits"]), int(first["vec_hits"])
    used: Used = "hybrid"
    if vec_hits == 0:
        used = "fulltext"
    elif fts_hits == 0:
        used = "vector"
    top = first["top_similarity"]
    arms = tuple(
        None if first[k] is None else float(first[k])
        for k in ("arm_lex", "vec_top", "vec_mean", "vec_sd")
    )
    rarity = None
    if first["term_rows"] is not None and first["term_pool"] is not None:
        counts = tuple(None if n is None else float(n) for n in first["term_rows"])
        rarity = TermRarity(counts, float(first["term_pool"]))
    return Hybrid(used, hits, fts_hits, float(top) if top is not None else None, arms, rarity)
