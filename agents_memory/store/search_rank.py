"""The hybrid ranking statement (see :mod:`agents_memory.store.search` for the whole search).

One statement per search. It first counts how rare each query word is (BM25's document
frequency) and the mean document length over the newest ``stats_rows`` rows in scope — exact
for a small pool, a sample for a big one — so no term-statistics table has to be maintained at
ingest; the sampled rows are read once and serve the statistics, the candidates and their
scores. Then:

* the **full-text arm** scores rows with Okapi BM25 (``k1``, ``b`` as benchmarks.md §4.5; term
  frequency from ``ts_rank_cd`` with unit weights, document length ``length(fts)``). Its
  candidates are the newest ``fts_scan_rows`` rows matching any of the query's words (in a
  big scope, where that scan could walk far: the sampled rows that match, plus the newest
  matches of the words about ``rare_rows`` rows or fewer hold, through the GIN index, plus as
  many holding two of those words, however old), plus as many matching every word. A common
  word adds score, not a long scan;
* the **vector arm** walks the HNSW index as before;
* the rows in play are both arms' candidates plus the session neighbours (``neighbour_span``
  turns either side) of the best of them. Each is scored by both arms and the scores are fused
  convexly after normalisation (BM25 over the greater of the best row's and a floor the
  query's words set, cosine min-max), then a turn gains a share of its best neighbour's score
  and of its session's best scores (an answer often shares no word with the question it
  answers), a bonus when it falls on a date the query names, and finally the recency prior
  and the pinned boost multiply it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg import sql

from agents_memory.store.search_terms import QueryTerms
from agents_memory.store.search_types import SearchFilters, SearchTuning

# A term's frequency in a row (BM25's tf): ``ts_rank_cd`` with unit weights counts its
# occurrences. One definition for every BM25 computed, so the same text scores the same.
_TF = "ts_rank_cd('{{{{1,1,1,1}}}}'::float4[], {row}.fts, {term}.q, 0)::float8"

# The query's terms and how rare each is among the newest ``stats_rows`` rows in scope (``w``),
# read once and shared by the statistics and the candidates: ``wm`` are the sampled rows that
# match any term and ``wp`` each (row, term) match with the term's frequency in the row, which
# give the document frequencies and the BM25 of those rows in one pass. ``tq``: each distinct
# normalised term with its BM25 idf and estimated frequency in the whole table (the planner's
# row count scales the sample's); ``qs``: the rare words' tsquery, the weights and the floor
# of the BM25 normalisation (``SearchTuning.lexical_floor`` times the BM25 of an average row
# holding once each query word the sample holds). A word the sample lacks may still be common
# in the table (topics cluster in time), and its matches would all be read: ``mce`` (read only
# for a sampled scope) are the query's words ANALYZE found common, looked up in the copy the
# Cold Path keeps (``store/lexemes.py``), or read from the statistics while there is no copy;
# ``te`` takes the greater estimate. ``rq``: the rare terms, whose tsqueries (any one,
# ``rare``; any two, ``rare2``, of the rarest eight: at most 28 pairs for a long query) the
# candidates are read with.
_TERMS = sql.SQL(
    "t AS MATERIALIZED ("
    " SELECT DISTINCT ON (querytree(x.q)) x.q, x.ord FROM ("
    "  SELECT to_tsquery('agents_memory', u.term) AS q, u.ord"
    "  FROM unnest(%(terms)s::text[]) WITH ORDINALITY u(term, ord)) x"
    " WHERE numnode(x.q) > 0 ORDER BY querytree(x.q), x.ord),"
    " w AS MATERIALIZED (SELECT m.id, m.message_at, m.fts FROM memory m WHERE {filters}"
    "  ORDER BY m.message_at DESC LIMIT {stats_rows}),"
    " wm AS MATERIALIZED (SELECT w.id, w.message_at, w.fts, length(w.fts) AS len,"
    "  row_number() OVER (ORDER BY w.message_at DESC) AS rn"
    "  FROM w WHERE w.fts @@ (SELECT to_tsquery('agents_memory', %(any)s))),"
    " wp AS MATERIALIZED (SELECT wm.id, wm.len, t.ord, " + _TF.format(row="wm", term="t") + " AS tf"
    "  FROM wm CROSS JOIN t WHERE wm.fts @@ t.q),"
    " wn AS MATERIALIZED (SELECT count(*)::float8 AS n,"
    "  greatest(1, coalesce(avg(length(w.fts)), 0))::float8 AS avgdl,"
    "  greatest(count(*), (SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass))::float8"
    "   / greatest(count(*), 1) AS scale FROM w),"
    " tq AS MATERIALIZED ("
    "  SELECT t.q, t.ord, ln(1 + (wn.n - d.df + 0.5) / (d.df + 0.5)) AS idf,"
    "   d.df * wn.scale AS est FROM t CROSS JOIN wn"
    "  CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM wp WHERE wp.ord = t.ord) d),"
    " mce AS MATERIALIZED (SELECT s.term, s.est_rows FROM search_lexemes s"
    "  WHERE s.term IN (SELECT querytree(t.q) FROM t)"
    "  UNION ALL SELECT c.term, c.est_rows FROM (SELECT quote_literal(f.lexeme) AS term,"
    "   f.est_rows FROM memory_common_lexemes(0) f) c WHERE NOT EXISTS"
    "   (SELECT 1 FROM search_lexemes) AND c.term IN (SELECT querytree(t.q) FROM t)),"
    " te AS MATERIALIZED (SELECT tq.q, tq.ord, greatest(tq.est, (SELECT"
    "  coalesce(max(mce.est_rows), 0) FROM mce WHERE mce.term = querytree(tq.q))) AS est FROM tq),"
    " rq AS MATERIALIZED (SELECT te.q, te.ord, te.est FROM te WHERE te.est <= {rare_rows}),"
    " rp AS MATERIALIZED (SELECT rq.q, rq.ord FROM rq ORDER BY rq.est, rq.ord LIMIT 8),"
    " qs AS MATERIALIZED (SELECT"
    "  CASE WHEN wn.n >= {stats_rows} THEN (SELECT string_agg(querytree(rq.q), ' | '"
    "   ORDER BY rq.ord) FROM rq)::tsquery END AS rare,"
    "  CASE WHEN wn.n >= {stats_rows} THEN (SELECT string_agg('(' || querytree(a.q) || ' & '"
    "   || querytree(b.q) || ')', ' | ' ORDER BY a.ord, b.ord)"
    "   FROM rp a JOIN rp b ON a.ord < b.ord)::tsquery END AS rare2,"
    "  wn.n >= {stats_rows} AS sampled,"
    "  CASE WHEN EXISTS (SELECT 1 FROM tq) THEN %(w_lex)s::float8 ELSE 0 END AS w_lex,"
    "  %(lex_floor)s * coalesce((SELECT sum(tq.idf) FROM tq WHERE tq.est > 0), 0) AS lex_floor,"
    "  wn.avgdl FROM wn),"
)

# Summed in term order, so the same text scores the same bits whichever way it is computed
# (duplicates then tie exactly and the newest wins).
_BM25_TERMS = (
    "sum(q.idf * x.tf * (%(k1)s + 1)"
    "  / (x.tf + %(k1)s * (1 - %(b)s + %(b)s * {length} / qs.avgdl)) ORDER BY q.ord)::float8"
    " AS bm25"
)
# BM25 of the rows of ``{rows}`` (columns id, fts), one grouped pass: a term's frequency is
# computed only where the term matches (``@@`` is a cheap lookup, ``ts_rank_cd`` is not).
_BM25 = sql.SQL(
    "SELECT r.id, " + _BM25_TERMS.format(length="length(r.fts)") + " FROM {rows} r"
    " CROSS JOIN tq q CROSS JOIN qs CROSS JOIN LATERAL"
    "  (SELECT " + _TF.format(row="r", term="q") + " AS tf) x"
    " WHERE r.fts @@ q.q GROUP BY r.id"
)
# BM25 of the sampled rows, from the matches already found.
_BM25_SAMPLED = sql.SQL(
    "SELECT x.id, " + _BM25_TERMS.format(length="x.len") + " FROM wp x"
    " JOIN tq q ON q.ord = x.ord CROSS JOIN qs GROUP BY x.id"
)

# Candidates of the full-text arm, each row once, scored (``cs``); the arm is the best ``pool``.
_FTS_ARM = sql.SQL(
    " cand AS MATERIALIZED (SELECT DISTINCT ON (u.id) u.* FROM ({candidates}) u ORDER BY u.id),"
    " cs AS MATERIALIZED (SELECT c.id, c.message_at, coalesce(s.bm25, 0) AS bm25"
    "  FROM cand c LEFT JOIN ({bm25}) s ON s.id = c.id),"
    " fts AS MATERIALIZED ("
    "  SELECT c.id, c.bm25, row_number() OVER (ORDER BY c.bm25 DESC, c.message_at DESC, c.id DESC)"
    "   AS rank FROM cs c ORDER BY c.bm25 DESC, c.message_at DESC, c.id DESC LIMIT {pool})"
)
# The sampled (newest) rows that match any word: all of them in a big scope, else the newest
# ``scan`` (then the sample is the whole scope).
_FTS_WINDOW = sql.SQL(
    "(SELECT wm.id, wm.message_at, wm.fts FROM wm"
    " WHERE wm.rn <= {scan} OR (SELECT qs.sampled FROM qs))"
)
# In a big scope, the newest matches of the rare words through the GIN index: ordering by an
# expression the time index cannot serve keeps the planner from walking that index newest-first
# looking for words only a few hundred rows hold. Then the newest rows holding two rare words
# (``rare2``), which the newest single-word matches may have crowded out: in a long history, a
# name and a topic word together are worth reaching back for.
_FTS_RARE = sql.SQL(
    "(SELECT m.id, m.message_at, m.fts FROM memory m"
    " WHERE m.fts @@ (SELECT qs.{query} FROM qs) AND {filters}"
    " ORDER BY m.message_at + interval '0 s' DESC LIMIT {scan})"
)
# The newest rows holding every word, through the GIN index as well (the statement is planned
# once for any words), when the rarest of them is estimated to hold at most ``conj_rows`` rows
# in the table: reading a conjunction's matches costs about as many rows as its rarest word
# holds. Words that are all common ("fix the test") would cost thousands of rows for matches
# the sampled (newest) rows already hold enough of.
_FTS_ALL = sql.SQL(
    "(SELECT m.id, m.message_at, m.fts FROM memory m"
    " WHERE (SELECT count(*) > 1 AND min(tq.est) <= {conj_rows} FROM tq)"
    " AND m.fts @@ (SELECT to_tsquery('agents_memory', %(all)s)) AND {filters}"
    " ORDER BY m.message_at + interval '0 s' DESC LIMIT {scan})"
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
    "  ORDER BY m.embedding <=> %(qvec)s::halfvec LIMIT {pool}) s)"
)
_NO_VECTOR_ARM = sql.SQL(
    "vec AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"
)
# The session neighbours of the best candidates of either arm, ``dist`` turns away.
_LINKS = sql.SQL(
    " seeds AS (SELECT id FROM fts WHERE rank <= {ctx_seeds}"
    "  UNION SELECT id FROM vec WHERE rank <= {ctx_seeds}),"
    " links AS MATERIALIZED ("
    "  SELECT s.id AS anchor, n.id, n.dist FROM seeds s JOIN memory a ON a.id = s.id"
    "  CROSS JOIN LATERAL ("
    "   SELECT b.id, row_number() OVER (ORDER BY b.message_at DESC, b.id DESC) AS dist FROM ("
    "    SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
    "     AND m.session_id = a.session_id AND (m.message_at, m.id) < (a.message_at, a.id)"
    "     AND {filters} ORDER BY m.message_at DESC, m.id DESC LIMIT {span}) b"
    "   UNION ALL"
    "   SELECT b.id, row_number() OVER (ORDER BY b.message_at, b.id) AS dist FROM ("
    "    SELECT m.id, m.message_at FROM memory m WHERE m.agent_platform = a.agent_platform"
    "     AND m.session_id = a.session_id AND (m.message_at, m.id) > (a.message_at, a.id)"
    "     AND {filters} ORDER BY m.message_at, m.id LIMIT {span}) b) n"
    "  WHERE a.session_id IS NOT NULL),"
)
_SESSION = sql.SQL("r.agent_platform, coalesce(r.session_id, r.id::text)")
_FUSE = sql.SQL(
    " inplay AS MATERIALIZED ("
    "  SELECT m.id, m.agent_platform, m.session_id, m.message_at, m.is_pinned, m.fts,"
    "   {cosine} AS cos"
    "  FROM (SELECT id FROM fts UNION SELECT id FROM vec UNION SELECT id FROM links) e"
    "  JOIN memory m ON m.id = e.id),"
    " lex AS ({lex}),"
    " norm AS MATERIALIZED ("
    "  SELECT p.id, p.agent_platform, p.session_id, p.message_at, p.is_pinned, p.cos,"
    "   coalesce(l.bm25, 0) AS bm25,"
    "   {w_lex} * coalesce(l.bm25 / nullif(greatest(max(l.bm25) OVER (), {lex_floor}), 0), 0)"
    "   + {w_vec} * coalesce((p.cos - min(p.cos) OVER ())"
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
    " SELECT {columns}, f.rank, CASE WHEN {w_lex} > 0 THEN tp.bm25 END, v.rank, tp.cos,"
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


# BM25 of the candidates: the sampled ones' from their matches, the others' computed.
_CAND_BM25 = sql.SQL("{sampled} UNION ALL ({rest})").format(
    sampled=_BM25_SAMPLED,
    rest=_BM25.format(
        rows=sql.SQL(
            "(SELECT c.id, c.fts FROM cand c WHERE NOT EXISTS (SELECT 1 FROM wm"
            " WHERE wm.id = c.id))"
        )
    ),
)
# BM25 of the rows in play: the candidates' scores, computed only for the others.
_LEX = sql.SQL(
    "SELECT c.id, c.bm25 FROM cs c JOIN inplay p ON p.id = c.id UNION ALL ({bm25})"
).format(
    bm25=_BM25.format(
        rows=sql.SQL(
            "(SELECT p.id, p.fts FROM inplay p WHERE NOT EXISTS (SELECT 1 FROM cs c"
            " WHERE c.id = p.id))"
        )
    )
)
_NO_LEX = sql.SQL("SELECT NULL::bigint AS id, NULL::float8 AS bm25 WHERE false")


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
    has_vec = vector is not None
    lexical = bool(terms.terms) and tuning.fts_scan_rows > 0
    scan = sql.Literal(tuning.fts_scan_rows)
    params: dict[str, Any] = {
        "limit": filters.limit,
        "decay": tuning.neighbour_decay,
        "neighbour": tuning.neighbour_weight,
        "session_w": tuning.session_weight,
        "halflife": tuning.recency_halflife_days,
        "pinned": tuning.pinned_boost,
    }
    pool = sql.Literal(tuning.pool(filters.limit))
    prefix: sql.Composable = sql.SQL("")
    fts_arm: sql.Composable = _NO_FTS_ARM
    lex: sql.Composable = _NO_LEX
    w_lex: sql.Composable = sql.SQL("0::float8")
    lex_floor: sql.Composable = sql.SQL("0::float8")
    if lexical:
        prefix = _TERMS.format(
            filters=where,
            stats_rows=sql.Literal(tuning.stats_rows),
            rare_rows=sql.Literal(tuning.rare_rows if has_vec else tuning.rare_rows_lexical),
        )
        candidates = [
            _FTS_WINDOW.format(scan=scan),
            _FTS_RARE.format(query=sql.Identifier("rare"), filters=where, scan=scan),
            _FTS_RARE.format(query=sql.Identifier("rare2"), filters=where, scan=scan),
        ]
        if terms.tsquery_all is not None:
            candidates.append(
                _FTS_ALL.format(
                    filters=where, scan=scan, conj_rows=sql.Literal(tuning.conjunction_rows)
                )
            )
            params["all"] = terms.tsquery_all
        fts_arm = _FTS_ARM.format(
            bm25=_CAND_BM25,
            candidates=sql.SQL(" UNION ALL ").join(candidates),
            pool=pool,
        )
        lex = _LEX
        w_lex = sql.SQL("(SELECT qs.w_lex FROM qs)")
        lex_floor = sql.SQL("(SELECT qs.lex_floor FROM qs)")
        params.update(
            terms=list(terms.terms),
            any=terms.tsquery,
            w_lex=tuning.lexical_weight if has_vec else 1.0,
            lex_floor=tuning.lexical_floor,
            k1=tuning.bm25_k1,
            b=tuning.bm25_b,
        )
    w_vec: sql.Composable = sql.SQL("(1 - {w_lex})").format(w_lex=w_lex)
    if not has_vec:
        w_vec = sql.SQL("0::float8")
    vec_arm: sql.Composable = _NO_VECTOR_ARM
    cosine: sql.Composable = sql.SQL("NULL::float8")
    if vector is not None:
        vec_arm = _VECTOR_ARM.format(filters=where, pool=pool)
        cosine = sql.SQL("(1 - (m.embedding <=> %(qvec)s::halfvec))::float8")
        params["qvec"] = vector
    dated: sql.Composable = sql.SQL("0::float8")
    if dates and tuning.date_weight > 0:
        dated = _DATED
        params.update(
            d_from=[a for a, _ in dates], d_to=[b for _, b in dates], date_w=tuning.date_weight
        )
    links: sql.Composable = _LINKS.format(
        filters=where,
        span=sql.Literal(tuning.neighbour_span),
        ctx_seeds=sql.Literal(tuning.min_candidates),
    )
    if tuning.neighbour_span <= 0:
        links = sql.SQL(
            " links AS (SELECT NULL::bigint AS anchor, NULL::bigint AS id, NULL::bigint AS dist"
            " WHERE false),"
        )
    statement = (
        sql.SQL("WITH {prefix}{fts}, {vec},").format(prefix=prefix, fts=fts_arm, vec=vec_arm)
        + links
        + _FUSE.format(
            lex=lex,
            w_lex=w_lex,
            lex_floor=lex_floor,
            w_vec=w_vec,
            cosine=cosine,
            session=_SESSION,
            dated=dated,
            columns=columns,
            tag_join=tag_join,
        )
    )
    return statement, params
