"""The hybrid ranking statement (see :mod:`agents_memory.store.search` for the whole search).

Two statements per search. The first counts how rare each query word is (BM25's document
frequency) and the mean document length over the newest ``stats_rows`` rows in scope — exact
for a small pool, a sample for a big one — so no term-statistics table has to be maintained at
ingest. The second does the retrieval:

* the **full-text arm** scores rows with Okapi BM25 (``k1``, ``b`` as benchmarks.md §4.5; term
  frequency from ``ts_rank_cd`` with unit weights, document length ``length(fts)``). Its
  candidates are the newest ``fts_scan_rows`` rows matching any of the query's words (in a
  big scope, where that scan could walk far: the sampled rows that match, plus the newest
  matches of the words about ``rare_rows`` rows or fewer hold, through the GIN index), plus as
  many matching every word. A common word adds score, not a long scan;
* the **vector arm** walks the HNSW index as before;
* the rows in play are both arms' candidates plus the session neighbours (``neighbour_span``
  turns either side) of the best of them. Each is scored by both arms and the scores are fused
  convexly after normalisation (BM25 / max, cosine min-max), then a turn gains a share of its
  best neighbour's score and of its session's best scores (an answer often shares no word with
  the question it answers), a bonus when it falls on a date the query names, and finally the
  recency prior and the pinned boost multiply it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from agents_memory.store.search_terms import QueryTerms
from agents_memory.store.search_types import SearchFilters, SearchTuning


@dataclass(frozen=True, slots=True)
class TermStats:
    """The query's distinct normalised terms and how rare each is among the sampled rows."""

    terms: tuple[str, ...]
    """``querytree`` text of each term (``'plan'``, ``'마이그레이션':*``)."""
    df: tuple[int, ...]
    rows: int
    """Rows sampled (the newest in scope)."""
    avgdl: float
    table_rows: float
    """Rows in the whole table (the planner's estimate), to scale a sampled frequency."""

    def idf(self) -> list[float]:
        n = self.rows
        return [math.log(1 + (n - df + 0.5) / (df + 0.5)) for df in self.df]

    def sampled(self, sample_rows: int) -> bool:
        """Whether the sample is smaller than the scope (a big pool)."""
        return self.rows >= sample_rows

    def rare_query(self, rare_rows: int) -> str | None:
        """The terms about ``rare_rows`` rows of the table or fewer hold, joined with ``|``."""
        scale = max(self.table_rows, self.rows) / self.rows
        rare = [t for df, t in zip(self.df, self.terms, strict=True) if df * scale <= rare_rows]
        return " | ".join(rare) or None


_STATS = sql.SQL(
    "WITH t AS ("
    " SELECT DISTINCT ON (querytree(x.q)) x.q, x.ord FROM ("
    "  SELECT to_tsquery('agents_memory', u.term) AS q, u.ord"
    "  FROM unnest(%(terms)s::text[]) WITH ORDINALITY u(term, ord)) x"
    " WHERE numnode(x.q) > 0 ORDER BY querytree(x.q), x.ord),"
    " w AS MATERIALIZED (SELECT m.fts FROM memory m WHERE {filters}"
    "  ORDER BY m.message_at DESC LIMIT %(stats_rows)s)"
    " SELECT querytree(t.q), (SELECT count(*) FROM w WHERE w.fts @@ t.q),"
    "  (SELECT count(*) FROM w), (SELECT coalesce(avg(length(w.fts)), 0)::float8 FROM w),"
    "  (SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass)::float8"
    " FROM t ORDER BY t.ord"
)


def term_stats(
    conn: psycopg.Connection[Any],
    terms: QueryTerms,
    where: sql.Composable,
    params: dict[str, Any],
    tuning: SearchTuning,
) -> TermStats | None:
    """Per-term document frequencies over the newest rows in scope; ``None`` when no term is
    left after stop words or the scope is empty."""
    if not terms.terms or tuning.fts_scan_rows <= 0:
        return None
    conn.execute("SELECT set_config('client_min_messages', 'warning', true)")  # stop-word notices
    rows = conn.execute(
        _STATS.format(filters=where),
        {**params, "terms": list(terms.terms), "stats_rows": tuning.stats_rows},
    ).fetchall()
    if not rows or int(rows[0][2]) == 0:
        return None
    return TermStats(
        terms=tuple(str(r[0]) for r in rows),
        df=tuple(int(r[1]) for r in rows),
        rows=int(rows[0][2]),
        avgdl=max(1.0, float(rows[0][3])),
        table_rows=float(rows[0][4]),
    )


# BM25 of the rows of ``{rows}`` (columns id, fts), one grouped pass: a term's frequency is
# computed only where the term matches (``@@`` is a cheap lookup, ``ts_rank_cd`` is not).
_BM25 = sql.SQL(
    "SELECT r.id, sum(q.idf * x.tf * (%(k1)s + 1)"
    "  / (x.tf + %(k1)s * (1 - %(b)s + %(b)s * length(r.fts) / %(avgdl)s)))::float8 AS bm25"
    " FROM {rows} r CROSS JOIN unnest(%(tq)s::tsquery[], %(idf)s::float8[]) q(q, idf)"
    " CROSS JOIN LATERAL"
    "  (SELECT ts_rank_cd('{{1,1,1,1}}'::float4[], r.fts, q.q, 0)::float8 AS tf) x"
    " WHERE r.fts @@ q.q GROUP BY r.id"
)


_FTS_ARM = sql.SQL(
    "cand AS MATERIALIZED (SELECT DISTINCT ON (u.id) u.* FROM ({candidates}) u ORDER BY u.id),"
    " fts AS MATERIALIZED ("
    " SELECT c.id, coalesce(s.bm25, 0) AS bm25,"
    "  row_number() OVER (ORDER BY coalesce(s.bm25, 0) DESC, c.message_at DESC, c.id DESC) AS rank"
    " FROM cand c LEFT JOIN ({bm25}) s ON s.id = c.id"
    " ORDER BY coalesce(s.bm25, 0) DESC, c.message_at DESC, c.id DESC LIMIT %(pool)s)"
)
_FTS_CANDIDATES = sql.SQL(
    "(SELECT m.id, m.message_at, m.fts FROM memory m"
    " WHERE m.fts @@ {tsquery}::tsquery AND {filters}"
    " ORDER BY m.message_at DESC LIMIT %(scan)s)"
)
# In a big scope: the sampled (newest) rows that match any word, without a scan past them.
_FTS_WINDOW = sql.SQL(
    "(SELECT w.id, w.message_at, w.fts FROM (SELECT m.id, m.message_at, m.fts FROM memory m"
    " WHERE {filters} ORDER BY m.message_at DESC LIMIT %(stats_rows)s) w"
    " WHERE w.fts @@ %(any)s::tsquery)"
)
_NO_FTS_ARM = sql.SQL(
    "fts AS (SELECT NULL::bigint AS id, NULL::float8 AS bm25, NULL::bigint AS rank WHERE false)"
)
# Relaxed iterative scans may return neighbours slightly out of order: rank them again.
_VECTOR_ARM = sql.SQL(
    "vec AS MATERIALIZED ("
    " SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank"
    " FROM (SELECT m.id, (m.embedding <=> %(qvec)s::halfvec)::float8 AS distance"
    "  FROM memory m WHERE m.embedding IS NOT NULL AND {filters}"
    "  ORDER BY m.embedding <=> %(qvec)s::halfvec LIMIT %(pool)s) s)"
)
_NO_VECTOR_ARM = sql.SQL(
    "vec AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"
)
# The session neighbours of the best candidates of either arm, ``dist`` turns away.
_LINKS = sql.SQL(
    " seeds AS (SELECT id FROM fts WHERE rank <= %(ctx_seeds)s"
    "  UNION SELECT id FROM vec WHERE rank <= %(ctx_seeds)s),"
    " links AS MATERIALIZED ("
    "  SELECT s.id AS anchor, n.id, n.dist FROM seeds s JOIN memory a ON a.id = s.id"
    "  CROSS JOIN LATERAL ("
    "   SELECT b.id, row_number() OVER (ORDER BY b.message_at DESC, b.id DESC) AS dist FROM ("
    "    SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
    "     AND m.session_id = a.session_id AND (m.message_at, m.id) < (a.message_at, a.id)"
    "     AND {filters} ORDER BY m.message_at DESC, m.id DESC LIMIT %(span)s) b"
    "   UNION ALL"
    "   SELECT b.id, row_number() OVER (ORDER BY b.message_at, b.id) AS dist FROM ("
    "    SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
    "     AND m.session_id = a.session_id AND (m.message_at, m.id) > (a.message_at, a.id)"
    "     AND {filters} ORDER BY m.message_at, m.id LIMIT %(span)s) b) n"
    "  WHERE a.session_id IS NOT NULL),"
)
_SESSION = sql.SQL("r.agent_platform, coalesce(r.session_id, r.id::text)")
_FUSE = sql.SQL(
    " inplay AS MATERIALIZED ("
    "  SELECT m.id, m.agent_platform, m.session_id, m.message_at, m.is_pinned, m.fts,"
    "   {cosine} AS cos"
    "  FROM (SELECT id FROM fts UNION SELECT id FROM vec UNION SELECT id FROM links) e"
    "  JOIN memory m ON m.id = e.id),"
    " lex AS ({bm25}),"
    " norm AS MATERIALIZED ("
    "  SELECT p.id, p.agent_platform, p.session_id, p.message_at, p.is_pinned, p.cos,"
    "   coalesce(l.bm25, 0) AS bm25,"
    "   %(w_lex)s * coalesce(l.bm25 / nullif(max(l.bm25) OVER (), 0), 0)"
    "   + %(w_vec)s * coalesce((p.cos - min(p.cos) OVER ())"
    "    / nullif(max(p.cos) OVER () - min(p.cos) OVER (), 0),"
    "    CASE WHEN p.cos IS NULL THEN 0 ELSE 1 END) AS fused"
    "  FROM inplay p LEFT JOIN lex l ON l.id = p.id),"
    " near AS ("
    "  SELECT x.id, max(o.fused * CASE WHEN x.dist > 1 THEN %(decay)s ELSE 1 END) AS near"
    "  FROM (SELECT anchor AS id, id AS other, dist FROM links"
    "   UNION ALL SELECT id, anchor, dist FROM links) x"
    "  JOIN norm o ON o.id = x.other GROUP BY x.id),"
    " ranked AS ("
    "  SELECT r.*, r.fused + %(neighbour)s * coalesce(nb.near, 0) AS local"
    "  FROM norm r LEFT JOIN near nb ON nb.id = r.id),"
    " ordered AS ("
    "  SELECT r.*, row_number() OVER (PARTITION BY {session} ORDER BY r.local DESC) AS srank"
    "  FROM ranked r),"
    " scored AS ("
    "  SELECT r.*,"
    "   %(session_w)s * avg(r.local) FILTER (WHERE r.srank <= 3) OVER (PARTITION BY {session})"
    "    AS sess,"
    "   {dated} AS dated,"
    "   0.5 + 0.5 * power(2.0::float8, -greatest(0, extract(epoch FROM now() - r.message_at))"
    "    / 86400.0 / %(halflife)s) AS recency,"
    "   CASE WHEN r.is_pinned THEN %(pinned)s::float8 ELSE 1.0 END AS pinned"
    "  FROM ordered r),"
    " top AS ("
    "  SELECT s.*, (s.local + s.sess + s.dated) * s.recency * s.pinned AS score FROM scored s"
    "  ORDER BY score DESC, s.message_at DESC, s.id DESC LIMIT %(limit)s)"
    " SELECT {columns}, f.rank, CASE WHEN %(w_lex)s > 0 THEN tp.bm25 END, v.rank, tp.cos,"
    "  tp.fused, tp.local - tp.fused + tp.sess, tp.dated, tp.recency, tp.pinned, tp.score,"
    "  (SELECT count(*) FROM fts), (SELECT count(*) FROM vec), (SELECT 1 - min(distance) FROM vec)"
    " FROM top tp JOIN memory m ON m.id = tp.id LEFT JOIN fts f ON f.id = tp.id"
    " LEFT JOIN vec v ON v.id = tp.id {tag_join}"
    " ORDER BY tp.score DESC, m.message_at DESC, m.id DESC"
)
_DATED = sql.SQL(
    "CASE WHEN EXISTS (SELECT 1 FROM unnest(%(d_from)s::timestamptz[], %(d_to)s::timestamptz[])"
    " d(a, b) WHERE r.message_at >= d.a AND r.message_at < d.b) THEN %(date_w)s::float8"
    " ELSE 0::float8 END"
)


def hybrid_statement(
    *,
    stats: TermStats | None,
    dates: tuple[tuple[datetime, datetime], ...],
    vector: str | None,
    filters: SearchFilters,
    where: sql.Composable,
    params: dict[str, Any],
    tuning: SearchTuning,
    columns: sql.Composable,
    tag_join: sql.Composable,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The retrieval statement and its parameters (``params`` holds the filters' values)."""
    has_vec = vector is not None
    w_lex = (tuning.lexical_weight if has_vec else 1.0) if stats is not None else 0.0
    params = {
        **params,
        "pool": tuning.pool(filters.limit),
        "limit": filters.limit,
        "ctx_seeds": tuning.min_candidates,
        "span": tuning.neighbour_span,
        "decay": tuning.neighbour_decay,
        "neighbour": tuning.neighbour_weight,
        "session_w": tuning.session_weight,
        "w_lex": w_lex,
        "w_vec": (1.0 - w_lex) if has_vec else 0.0,
        "halflife": tuning.recency_halflife_days,
        "pinned": tuning.pinned_boost,
    }
    fts_arm: sql.Composable = _NO_FTS_ARM
    bm25: sql.Composable = sql.SQL("SELECT NULL::bigint AS id, NULL::float8 AS bm25 WHERE false")
    if stats is not None:
        params["any"] = " | ".join(stats.terms)
        candidates = [_FTS_CANDIDATES.format(tsquery=sql.SQL("%(any)s"), filters=where)]
        rare = stats.rare_query(tuning.rare_rows)
        if stats.sampled(tuning.stats_rows):
            candidates = [_FTS_WINDOW.format(filters=where)]
            if rare is not None:
                candidates.append(
                    _FTS_CANDIDATES.format(tsquery=sql.SQL("%(rare)s"), filters=where)
                )
                params["rare"] = rare
        if len(stats.terms) > 1:
            candidates.append(_FTS_CANDIDATES.format(tsquery=sql.SQL("%(all)s"), filters=where))
            params["all"] = " & ".join(stats.terms)
        fts_arm = _FTS_ARM.format(
            bm25=_BM25.format(rows=sql.SQL("cand")),
            candidates=sql.SQL(" UNION ALL ").join(candidates),
        )
        bm25 = _BM25.format(rows=sql.SQL("inplay"))
        params.update(
            scan=tuning.fts_scan_rows,
            stats_rows=tuning.stats_rows,
            tq=list(stats.terms),
            idf=stats.idf(),
            k1=tuning.bm25_k1,
            b=tuning.bm25_b,
            avgdl=stats.avgdl,
        )
    vec_arm: sql.Composable = _NO_VECTOR_ARM
    cosine: sql.Composable = sql.SQL("NULL::float8")
    if vector is not None:
        vec_arm = _VECTOR_ARM.format(filters=where)
        cosine = sql.SQL("(1 - (m.embedding <=> %(qvec)s::halfvec))::float8")
        params["qvec"] = vector
    dated: sql.Composable = sql.SQL("0::float8")
    if dates and tuning.date_weight > 0:
        dated = _DATED
        params.update(
            d_from=[a for a, _ in dates], d_to=[b for _, b in dates], date_w=tuning.date_weight
        )
    links: sql.Composable = _LINKS.format(filters=where)
    if tuning.neighbour_span <= 0:
        links = sql.SQL(
            " links AS (SELECT NULL::bigint AS anchor, NULL::bigint AS id, NULL::bigint AS dist"
            " WHERE false),"
        )
    statement = (
        sql.SQL("WITH {fts}, {vec},").format(fts=fts_arm, vec=vec_arm)
        + links
        + _FUSE.format(
            bm25=bm25,
            cosine=cosine,
            session=_SESSION,
            dated=dated,
            columns=columns,
            tag_join=tag_join,
        )
    )
    return statement, params
