"""The searches that do not rank: the newest rows (no query) and the word-level ILIKE scan
(both arms weak)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.search.rows import HIT_COLUMNS, TAG_JOIN, hit
from agents_memory.store.search.scope import TagFilter, filter_sql
from agents_memory.store.search.terms import QueryTerms
from agents_memory.store.search.types import MatchWhy, SearchFilters, SearchHit, SearchTuning


def recency(
    conn: psycopg.Connection[Any], user_id: int, filters: SearchFilters, tag: TagFilter | None
) -> tuple[SearchHit, ...]:
    """The newest rows in scope, newest first."""
    statement = sql.SQL(
        "SELECT {columns} FROM (SELECT m.* FROM memory m WHERE {filters}"
        "  ORDER BY m.message_at DESC, m.id DESC LIMIT {limit}) m {tag_join}"
        " ORDER BY m.message_at DESC, m.id DESC"
    ).format(
        columns=HIT_COLUMNS,
        filters=filter_sql(filters, tag, user_id),
        limit=sql.Literal(filters.limit),
        tag_join=TAG_JOIN,
    )
    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(statement, {}).fetchall()  # parameters: ``%%`` in a literal is one ``%``
    return tuple(hit(row, MatchWhy(arms=("recency",))) for row in rows)


def ilike(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: QueryTerms,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
) -> tuple[SearchHit, ...]:
    """Rows containing any of the query's words, most words first, then newest; only the
    newest ``tuning.ilike_scan_rows`` rows are looked at. Each row's text is lowered once and
    matched against every lowered pattern at once (what ``ILIKE`` does with a multibyte
    encoding, once per pattern); the words are counted only in the rows holding one (most
    hold none when this fallback runs)."""
    if not terms.like_patterns:
        return ()
    statement = sql.SQL(
        "SELECT {columns}, m.matched FROM ("
        "  SELECT r.*, w.matched FROM ("
        "   SELECT m.*, lower(m.message) AS lowered FROM memory m WHERE {filters}"
        "   ORDER BY m.message_at DESC, m.id DESC LIMIT {scan}) r"
        "  CROSS JOIN LATERAL (SELECT count(*) AS matched FROM unnest(%(patterns)s::text[]) p"
        "   WHERE r.lowered LIKE lower(p)) w"
        "  WHERE r.lowered LIKE ANY (ARRAY(SELECT lower(p) FROM unnest(%(patterns)s::text[]) p))"
        "  ORDER BY w.matched DESC, r.message_at DESC, r.id DESC LIMIT {limit}) m"
        " {tag_join}"
        " ORDER BY m.matched DESC, m.message_at DESC, m.id DESC"
    ).format(
        columns=HIT_COLUMNS,
        filters=filter_sql(filters, tag, user_id),
        scan=sql.Literal(tuning.ilike_scan_rows),
        limit=sql.Literal(filters.limit),
        tag_join=TAG_JOIN,
    )
    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(statement, {"patterns": list(terms.like_patterns)}).fetchall()
    return tuple(
        hit(row, MatchWhy(arms=("ilike",), words_matched=int(row["matched"]))) for row in rows
    )
