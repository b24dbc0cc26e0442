"""The hybrid ranking statement (see :mod:`agents_memory.store.search` for the whole search).

One statement per search, assembled from one builder per part:

* the **full-text arm** (:mod:`agents_memory.store.search.fulltext`): the query's terms, how
  rare each is, and the best rows by BM25 (``fulltext_hits``);
* the **vector arm** walks the HNSW index (``vector_hits``);
* the **neighbours**: the session neighbours (``neighbour_span`` turns either side) of the
  best of both arms' candidates (``neighbours``);
* the **fusion**: the rows in play (both arms' candidates and the neighbours) are scored by
  both arms and the scores are fused convexly after normalisation (BM25 over the greater of
  the best row's and a floor the query's words set, cosine min-max: ``fused``); then a turn
  gains a share of its best neighbour's score and of its session's best scores (an answer
  often shares no word with the question it answers), the **date bonus** when it falls on a
  date the query names, and finally the recency prior and the pinned boost multiply it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg import sql

from agents_memory.store.search import fulltext
from agents_memory.store.search.ctes import Part, cte, empty_cte
from agents_memory.store.search.terms import QueryTerms
from agents_memory.store.search.types import SearchFilters, SearchTuning

NO_VECTOR_HITS = empty_cte("vector_hits", "id bigint, distance float8, rank bigint")
NO_NEIGHBOURS = empty_cte("neighbours", "anchor bigint, id bigint, dist bigint")
_SESSION = sql.SQL("r.agent_platform, coalesce(r.session_id, r.id::text)")


def hybrid_statement(
    *,
    terms: QueryTerms,
    dates: tuple[tuple[datetime, datetime], ...],
    vector: str | None,
    filters: SearchFilters,
    where: sql.Composable,
    tuning: SearchTuning,
    columns: sql.Composable,
    tag_join: sql.Composable,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The one retrieval statement and its parameters.

    The filters (``where``) and the row counts that shape the plan are written into the text;
    the parameters are only what changes from one query to the next (the words, the vector, the
    dates, the page size), so the statement can be planned once for every query of the same
    shape."""
    pool = tuning.pool(filters.limit)
    lexical = fulltext.runs(terms, tuning)
    parts = (
        fulltext.fulltext_arm(terms, where, tuning, pool=pool, with_vector=vector is not None),
        vector_arm(vector, where, pool),
        neighbours(where, tuning),
        fusion(lexical=lexical, with_vector=vector is not None, dates=dates, tuning=tuning),
    )
    params: dict[str, Any] = {"limit": filters.limit}
    for part in parts:
        params.update(part.params)
    statement = (
        sql.SQL("WITH ")
        + sql.SQL(", ").join(c for part in parts for c in part.ctes)
        + result_rows(lexical=lexical, columns=columns, tag_join=tag_join)
    )
    return statement, params


def vector_arm(vector: str | None, where: sql.Composable, pool: int) -> Part:
    """``vector_hits``: the ``pool`` rows nearest the query vector through the HNSW index
    (id, cosine distance, rank), or none without a vector. Relaxed iterative scans may return
    neighbours slightly out of order: they are ranked again."""
    if vector is None:
        return Part((NO_VECTOR_HITS,))
    body = sql.SQL(
        "SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank"
        " FROM (SELECT m.id, (m.embedding <=> %(qvec)s::halfvec)::float8 AS distance"
        "  FROM memory m WHERE m.embedding IS NOT NULL AND {filters}"
        "  ORDER BY m.embedding <=> %(qvec)s::halfvec LIMIT {pool}) s"
    ).format(filters=where, pool=sql.Literal(pool))
    return Part((cte("vector_hits", body),), {"qvec": vector})


def neighbours(where: sql.Composable, tuning: SearchTuning) -> Part:
    """``neighbours``: (anchor, id, dist) for the session turns up to ``neighbour_span`` either
    side of the best ``min_candidates`` rows of each arm (``neighbour_seeds``)."""
    if tuning.neighbour_span <= 0:
        return Part((NO_NEIGHBOURS,))
    seeds = sql.SQL(
        "SELECT id FROM fulltext_hits WHERE rank <= {n} UNION SELECT id FROM vector_hits"
        " WHERE rank <= {n}"
    ).format(n=sql.Literal(tuning.min_candidates))
    links = sql.SQL(
        "SELECT s.id AS anchor, n.id, n.dist FROM neighbour_seeds s JOIN memory a ON a.id = s.id"
        " CROSS JOIN LATERAL ("
        "  SELECT b.id, row_number() OVER (ORDER BY b.message_at DESC, b.id DESC) AS dist FROM ("
        "   SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
        "    AND m.session_id = a.session_id AND (m.message_at, m.id) < (a.message_at, a.id)"
        "    AND {filters} ORDER BY m.message_at DESC, m.id DESC LIMIT {span}) b"
        "  UNION ALL"
        "  SELECT b.id, row_number() OVER (ORDER BY b.message_at, b.id) AS dist FROM ("
        "   SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
        "    AND m.session_id = a.session_id AND (m.message_at, m.id) > (a.message_at, a.id)"
        "    AND {filters} ORDER BY m.message_at, m.id LIMIT {span}) b) n"
        " WHERE a.session_id IS NOT NULL"
    ).format(filters=where, span=sql.Literal(tuning.neighbour_span))
    return Part(
        (cte("neighbour_seeds", seeds, materialized=False), cte("neighbours", links)),
    )


def date_bonus(
    dates: tuple[tuple[datetime, datetime], ...], tuning: SearchTuning
) -> tuple[sql.Composable, dict[str, Any]]:
    """The bonus of a row (alias ``r``) falling on a date the query names, and its
    parameters."""
    if not dates or tuning.date_weight <= 0:
        return sql.SQL("0::float8"), {}
    bonus = sql.SQL(
        "CASE WHEN EXISTS (SELECT 1 FROM unnest(%(d_from)s::timestamptz[],"
        " %(d_to)s::timestamptz[]) d(a, b) WHERE r.message_at >= d.a AND r.message_at < d.b)"
        " THEN %(date_w)s::float8 ELSE 0::float8 END"
    )
    params = {
        "d_from": [a for a, _ in dates],
        "d_to": [b for _, b in dates],
        "date_w": tuning.date_weight,
    }
    return bonus, params


def fusion(
    *,
    lexical: bool,
    with_vector: bool,
    dates: tuple[tuple[datetime, datetime], ...],
    tuning: SearchTuning,
) -> Part:
    """The rows in play scored by both arms, fused, given their context and date bonus, and
    the best ``limit`` of them (``top_hits``)."""
    dated, date_params = date_bonus(dates, tuning)
    params = {
        "decay": tuning.neighbour_decay,
        "neighbour": tuning.neighbour_weight,
        "session_w": tuning.session_weight,
        "halflife": tuning.recency_halflife_days,
        "pinned": tuning.pinned_boost,
        **date_params,
    }
    ctes = (
        _in_play(with_vector),
        cte(
            "in_play_bm25",
            fulltext.bm25_in_play() if lexical else fulltext.NO_BM25,
            materialized=False,
        ),
        _fused(lexical, with_vector),
        *_context(),
        _scored(dated),
        _top_hits(),
    )
    return Part(ctes, params)


def _in_play(with_vector: bool) -> sql.Composed:
    """``in_play``: both arms' candidates and the neighbours, with their cosine to the query
    vector."""
    cosine = sql.SQL("NULL::float8")
    if with_vector:
        cosine = sql.SQL("(1 - (m.embedding <=> %(qvec)s::halfvec))::float8")
    return cte(
        "in_play",
        sql.SQL(
            "SELECT m.id, m.agent_platform, m.session_id, m.message_at, m.is_pinned, m.fts,"
            " {cosine} AS cos"
            " FROM (SELECT id FROM fulltext_hits UNION SELECT id FROM vector_hits"
            "  UNION SELECT id FROM neighbours) e"
            " JOIN memory m ON m.id = e.id"
        ).format(cosine=cosine),
    )


def _lexical_weight(lexical: bool) -> sql.Composable:
    """The full-text arm's weight in the fusion (0 when it does not run)."""
    return fulltext.WEIGHT if lexical else sql.SQL("0::float8")


def _weights(lexical: bool, with_vector: bool) -> tuple[sql.Composable, sql.Composable]:
    """The full-text and vector arms' weights in the fusion."""
    w_lex = _lexical_weight(lexical)
    if not with_vector:
        return w_lex, sql.SQL("0::float8")
    return w_lex, sql.SQL("(1 - {w_lex})").format(w_lex=w_lex)


def _fused(lexical: bool, with_vector: bool) -> sql.Composed:
    """``fused``: each row in play with its BM25 and the arms' normalised scores, weighted."""
    w_lex, w_vec = _weights(lexical, with_vector)
    floor = fulltext.FLOOR if lexical else sql.SQL("0::float8")
    return cte(
        "fused",
        sql.SQL(
            "SELECT p.id, p.agent_platform, p.session_id, p.message_at, p.is_pinned, p.cos,"
            " coalesce(l.bm25, 0) AS bm25,"
            " {w_lex} * coalesce(l.bm25 / nullif(greatest(max(l.bm25) OVER (), {floor}), 0), 0)"
            " + {w_vec} * coalesce((p.cos - min(p.cos) OVER ())"
            "  / nullif(max(p.cos) OVER () - min(p.cos) OVER (), 0),"
            "  CASE WHEN p.cos IS NULL THEN 0 ELSE 1 END) AS fused"
            " FROM in_play p LEFT JOIN in_play_bm25 l ON l.id = p.id"
        ).format(w_lex=w_lex, floor=floor, w_vec=w_vec),
    )


def _context() -> tuple[sql.Composed, ...]:
    """``neighbour_boost``: the best fused score among a row's neighbours (decayed beyond one
    turn); ``local_scores``: the fused score plus a share of it; ``session_ranked``: each
    row's place in its session."""
    return (
        cte(
            "neighbour_boost",
            sql.SQL(
                "SELECT x.id, max(o.fused * CASE WHEN x.dist > 1 THEN %(decay)s ELSE 1 END)"
                " AS near FROM (SELECT anchor AS id, id AS other, dist FROM neighbours"
                "  UNION ALL SELECT id, anchor, dist FROM neighbours) x"
                " JOIN fused o ON o.id = x.other GROUP BY x.id"
            ),
            materialized=False,
        ),
        cte(
            "local_scores",
            sql.SQL(
                "SELECT r.*, r.fused + %(neighbour)s * coalesce(nb.near, 0) AS local"
                " FROM fused r LEFT JOIN neighbour_boost nb ON nb.id = r.id"
            ),
            materialized=False,
        ),
        cte(
            "session_ranked",
            sql.SQL(
                "SELECT r.*, row_number() OVER (PARTITION BY {session} ORDER BY r.local DESC)"
                " AS srank FROM local_scores r"
            ).format(session=_SESSION),
            materialized=False,
        ),
    )


def _scored(dated: sql.Composable) -> sql.Composed:
    """``scored``: a share of the session's best three scores, the date bonus, the recency
    prior and the pinned boost of each row."""
    return cte(
        "scored",
        sql.SQL(
            "SELECT r.*,"
            " %(session_w)s * avg(r.local) FILTER (WHERE r.srank <= 3) OVER (PARTITION BY"
            "  {session}) AS sess,"
            " {dated} AS dated,"
            " 0.5 + 0.5 * power(2.0::float8, -greatest(0, extract(epoch FROM now() - r.message_at))"
            "  / 86400.0 / %(halflife)s) AS recency,"
            " CASE WHEN r.is_pinned THEN %(pinned)s::float8 ELSE 1.0 END AS pinned"
            " FROM session_ranked r"
        ).format(session=_SESSION, dated=dated),
        materialized=False,
    )


def _top_hits() -> sql.Composed:
    """``top_hits``: the best ``limit`` rows by final score."""
    return cte(
        "top_hits",
        sql.SQL(
            "SELECT s.*, (s.local + s.sess + s.dated) * s.recency * s.pinned AS score"
            " FROM scored s ORDER BY score DESC, s.message_at DESC, s.id DESC LIMIT %(limit)s"
        ),
        materialized=False,
    )


def result_rows(
    *, lexical: bool, columns: sql.Composable, tag_join: sql.Composable
) -> sql.Composed:
    """The final SELECT: ``columns`` of each top hit, then (from index ``HIT_WIDTH`` on) its
    full-text rank and BM25, vector rank and cosine, fused score, context boost, date bonus, recency
    and pinned factors, score, and the arms' hit counts and best cosine."""
    w_lex = _lexical_weight(lexical)
    return sql.SQL(
        " SELECT {columns}, f.rank, CASE WHEN {w_lex} > 0 THEN tp.bm25 END, v.rank, tp.cos,"
        "  tp.fused, tp.local - tp.fused + tp.sess, tp.dated, tp.recency, tp.pinned, tp.score,"
        "  (SELECT count(*) FROM fulltext_hits), (SELECT count(*) FROM vector_hits),"
        "  (SELECT 1 - min(distance) FROM vector_hits)"
        " FROM top_hits tp JOIN memory m ON m.id = tp.id LEFT JOIN fulltext_hits f"
        "  ON f.id = tp.id LEFT JOIN vector_hits v ON v.id = tp.id {tag_join}"
        " ORDER BY tp.score DESC, m.message_at DESC, m.id DESC"
    ).format(columns=columns, w_lex=w_lex, tag_join=tag_join)
