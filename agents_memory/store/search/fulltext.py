"""The full-text arm of the hybrid statement: the query's terms and how rare each is, Okapi
BM25, and the arm's candidates.

Term rarity (BM25's document frequency) and the mean document length are counted over the
newest ``stats_rows`` rows in scope (``sample``) — exact for a small pool, a sample for a big
one — so no term-statistics table has to be maintained at ingest; the sampled rows are read once
and serve the statistics, the candidates and their scores. Rows are scored with BM25 (``k1``,
``b`` as benchmarks.md §4.5; term frequency from ``ts_rank_cd`` with unit weights, document
length ``length(fts)``). The candidates are the newest ``fts_scan_rows`` rows matching any of
the query's words (in a big scope, where that scan could walk far: the sampled rows that match,
plus the newest matches of the words about ``rare_rows`` rows or fewer hold, through the GIN
index, plus as many holding two of those words, however old), plus as many matching every word.
A common word adds score, not a long scan.
"""

from __future__ import annotations

from psycopg import sql

from agents_memory.store.search.ctes import Part, cte, empty_cte
from agents_memory.store.search.terms import QueryTerms
from agents_memory.store.search.types import SearchTuning

# A term's frequency in a row (BM25's tf): ``ts_rank_cd`` with unit weights counts its
# occurrences. One definition for every BM25 computed, so the same text scores the same.
_TF = "ts_rank_cd('{{{{1,1,1,1}}}}'::float4[], {row}.fts, {term}.q, 0)::float8"

NO_FULLTEXT_HITS = empty_cte("fulltext_hits", "id bigint, bm25 float8, rank bigint")
NO_BM25 = sql.SQL("SELECT NULL::bigint AS id, NULL::float8 AS bm25 WHERE false")
WEIGHT = sql.SQL("(SELECT fq.w_lex FROM fulltext_query fq)")
"""The full-text arm's weight in the fusion (0 when none of the query's words is a term)."""
FLOOR = sql.SQL("(SELECT fq.lex_floor FROM fulltext_query fq)")
ALL_RARE = sql.SQL("(SELECT r.q FROM all_rare r)")
"""Every rare word of the query (``SearchTuning.rare_share``) as one tsquery (``NULL``: none)."""
"""The least BM25 the fusion divides by (``SearchTuning.lexical_floor``)."""
TERM_ROWS_VALUE = (
    "(SELECT array_agg(e.est ORDER BY u.ord) FROM unnest(%(terms)s::text[]) WITH ORDINALITY"
    "  u(term, ord) LEFT JOIN term_estimates e"
    "  ON querytree(e.q) = querytree(to_tsquery('agents_memory', u.term)))"
)
"""How many rows hold each of the query's terms (in order; ``NULL``: a stop word), as BM25
estimated them: a hit's coverage weighs the words by it
(:class:`~agents_memory.store.search.confidence.TermRarity`)."""
TERM_POOL_VALUE = "(SELECT st.n * st.scale FROM sample_stats st)"
"""The rows :data:`TERM_ROWS_VALUE`'s counts are out of."""
TERM_ROWS = sql.SQL(f"{TERM_ROWS_VALUE} AS term_rows, {TERM_POOL_VALUE} AS term_pool")
GIVEN_TERM_ROWS = sql.SQL(
    "%(ft_term_rows)s::float8[] AS term_rows, %(ft_term_pool)s::float8 AS term_pool"
)
""":data:`TERM_ROWS` as the full-text arm found them ahead
(:mod:`agents_memory.store.search.fulltext_ahead`)."""
NO_TERM_ROWS = sql.SQL("NULL::float8[] AS term_rows, NULL::float8 AS term_pool")


def fulltext_arm(
    terms: QueryTerms, where: sql.Composable, tuning: SearchTuning, *, pool: int, with_vector: bool
) -> Part:
    """The term statistics and the arm's best ``pool`` rows (``fulltext_hits``: id, bm25,
    rank), or an empty ``fulltext_hits`` when the query has no terms or the arm is off."""
    if not runs(terms, tuning):
        return Part((NO_FULLTEXT_HITS,))
    params = {
        "terms": list(terms.terms),
        "any": terms.tsquery,
        "w_lex": tuning.lexical_weight if with_vector else 1.0,
        "lex_floor": tuning.lexical_floor,
        "k1": tuning.bm25_k1,
        "b": tuning.bm25_b,
        "rare_share": tuning.rare_share,
    }
    if terms.tsquery_all is not None:
        params["all"] = terms.tsquery_all
    rare_rows = tuning.rare_rows if with_vector else tuning.rare_rows_lexical
    ctes = (
        _query_terms(),
        *_sample(where, tuning.stats_rows),
        *_term_rarity(rare_rows),
        _fulltext_query(tuning.stats_rows),
        *_scored_candidates(terms, where, tuning, pool),
    )
    return Part(ctes, params)


def runs(terms: QueryTerms, tuning: SearchTuning) -> bool:
    """Whether the full-text arm runs: the query has terms and the arm is not turned off."""
    return bool(terms.terms) and tuning.fts_scan_rows > 0


def _query_terms() -> sql.Composed:
    """``query_terms``: each distinct normalised term of the query with its position."""
    return cte(
        "query_terms",
        sql.SQL(
            "SELECT DISTINCT ON (querytree(x.q)) x.q, x.ord FROM ("
            " SELECT to_tsquery('agents_memory', u.term) AS q, u.ord"
            " FROM unnest(%(terms)s::text[]) WITH ORDINALITY u(term, ord)) x"
            " WHERE numnode(x.q) > 0 ORDER BY querytree(x.q), x.ord"
        ),
    )


def _sample(where: sql.Composable, stats_rows: int) -> tuple[sql.Composed, ...]:
    """``sample``: the newest ``stats_rows`` rows in scope, read once; ``sample_hits``: those
    matching any term (newest first, ``rn``); ``sample_term_hits``: each (row, term) match
    with the term's frequency in the row; ``sample_stats``: the sample's size, mean document
    length and how many rows of the table each sampled row stands for (``scale``: the
    planner's row count over the sample's)."""
    return (
        cte(
            "sample",
            sql.SQL(
                "SELECT m.id, m.message_at, m.fts FROM memory m WHERE {filters}"
                " ORDER BY m.message_at DESC LIMIT {stats_rows}"
            ).format(filters=where, stats_rows=sql.Literal(stats_rows)),
        ),
        cte(
            "sample_hits",
            sql.SQL(
                "SELECT s.id, s.message_at, s.fts, length(s.fts) AS len,"
                " row_number() OVER (ORDER BY s.message_at DESC) AS rn"
                " FROM sample s WHERE s.fts @@ (SELECT to_tsquery('agents_memory', %(any)s))"
            ),
        ),
        cte(
            "sample_term_hits",
            sql.SQL(
                "SELECT h.id, h.len, t.ord, " + _TF.format(row="h", term="t") + " AS tf"
                " FROM sample_hits h CROSS JOIN query_terms t WHERE h.fts @@ t.q"
            ).format(),  # ``{{`` in the term frequency's text is one ``{``
        ),
        cte(
            "sample_stats",
            sql.SQL(
                "SELECT count(*)::float8 AS n,"
                " greatest(1, coalesce(avg(length(s.fts)), 0))::float8 AS avgdl,"
                " greatest(count(*), (SELECT reltuples FROM pg_class"
                "  WHERE oid = 'memory'::regclass))::float8 / greatest(count(*), 1) AS scale"
                " FROM sample s"
            ),
        ),
    )


def _term_rarity(rare_rows: int) -> tuple[sql.Composed, ...]:
    """``term_stats``: each term's BM25 idf and estimated rows in the whole table.
    ``common_terms``: the query's words ANALYZE found common, looked up in the copy the Cold
    Path keeps (:mod:`agents_memory.store.search.lexemes`), or read from the statistics while
    there is no copy — a word the sample lacks may still be common in the table (topics
    cluster in time), and all its matches would be read. ``term_estimates`` takes the greater
    estimate; ``rare_terms`` are the terms at most ``rare_rows`` rows hold and
    ``rarest_terms`` the rarest eight of them (at most 28 pairs for a long query)."""
    return (
        cte(
            "term_stats",
            sql.SQL(
                "SELECT t.q, t.ord, ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS idf,"
                " d.df * st.scale AS est FROM query_terms t CROSS JOIN sample_stats st"
                " CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM sample_term_hits h"
                "  WHERE h.ord = t.ord) d"
            ),
        ),
        cte(
            "common_terms",
            sql.SQL(
                "SELECT l.term, l.est_rows FROM search_lexemes l"
                " WHERE l.term IN (SELECT querytree(t.q) FROM query_terms t)"
                " UNION ALL SELECT c.term, c.est_rows FROM (SELECT quote_literal(f.lexeme) AS term,"
                "  f.est_rows FROM memory_common_lexemes(0) f) c WHERE NOT EXISTS"
                "  (SELECT 1 FROM search_lexemes) AND c.term IN"
                "  (SELECT querytree(t.q) FROM query_terms t)"
            ),
        ),
        cte(
            "term_estimates",
            sql.SQL(
                "SELECT ts.q, ts.ord, greatest(ts.est, (SELECT coalesce(max(c.est_rows), 0)"
                " FROM common_terms c WHERE c.term = querytree(ts.q))) AS est FROM term_stats ts"
            ),
        ),
        cte(
            "rare_terms",
            sql.SQL(
                "SELECT e.q, e.ord, e.est FROM term_estimates e WHERE e.est <= {rare_rows}"
            ).format(rare_rows=sql.Literal(rare_rows)),
        ),
        cte(
            "rarest_terms",
            sql.SQL("SELECT r.q, r.ord FROM rare_terms r ORDER BY r.est, r.ord LIMIT 8"),
        ),
    )


def _fulltext_query(stats_rows: int) -> sql.Composed:
    """``fulltext_query`` (one row): the tsqueries of the rare words the candidates are read
    with (any one, ``rare``; any two of the rarest, ``rare2``; only in a scope bigger than the
    sample, ``sampled``), the arm's weight in the fusion, the floor of its normalisation
    (``SearchTuning.lexical_floor`` times the BM25 of an average row holding once each query
    word the sample holds) and the mean document length."""
    return cte(
        "fulltext_query",
        sql.SQL(
            "SELECT"
            " CASE WHEN st.n >= {stats_rows} THEN (SELECT string_agg(querytree(r.q), ' | '"
            "  ORDER BY r.ord) FROM rare_terms r)::tsquery END AS rare,"
            " CASE WHEN st.n >= {stats_rows} THEN (SELECT string_agg('(' || querytree(a.q)"
            "  || ' & ' || querytree(b.q) || ')', ' | ' ORDER BY a.ord, b.ord)"
            "  FROM rarest_terms a JOIN rarest_terms b ON a.ord < b.ord)::tsquery END AS rare2,"
            " st.n >= {stats_rows} AS sampled,"
            " CASE WHEN EXISTS (SELECT 1 FROM term_stats) THEN %(w_lex)s::float8 ELSE 0 END"
            "  AS w_lex,"
            " %(lex_floor)s * coalesce((SELECT sum(ts.idf) FROM term_stats ts WHERE ts.est > 0),"
            "  0) AS lex_floor,"
            " st.avgdl FROM sample_stats st"
        ).format(stats_rows=sql.Literal(stats_rows)),
    )


# --- BM25 --------------------------------------------------------------------------------------

# Summed in term order, so the same text scores the same bits whichever way it is computed
# (duplicates then tie exactly and the newest wins).
_BM25_TERMS = (
    "sum(q.idf * x.tf * (%(k1)s + 1)"
    "  / (x.tf + %(k1)s * (1 - %(b)s + %(b)s * {length} / fq.avgdl)) ORDER BY q.ord)::float8"
    " AS bm25"
)


def _bm25(rows: sql.Composable) -> sql.Composed:
    """BM25 of ``rows`` (a subquery with columns id, fts), one grouped pass: a term's frequency
    is computed only where the term matches (``@@`` is a cheap lookup, ``ts_rank_cd`` is
    not)."""
    return sql.SQL(
        "SELECT r.id, " + _BM25_TERMS.format(length="length(r.fts)") + " FROM {rows} r"
        " CROSS JOIN term_stats q CROSS JOIN fulltext_query fq CROSS JOIN LATERAL"
        "  (SELECT " + _TF.format(row="r", term="q") + " AS tf) x"
        " WHERE r.fts @@ q.q GROUP BY r.id"
    ).format(rows=rows)


def _bm25_of_candidates() -> sql.Composed:
    """BM25 of the candidates: the sampled ones' from the matches already found, the others'
    computed."""
    sampled = sql.SQL(
        "SELECT x.id, " + _BM25_TERMS.format(length="x.len") + " FROM sample_term_hits x"
        " JOIN term_stats q ON q.ord = x.ord CROSS JOIN fulltext_query fq GROUP BY x.id"
    )
    rest = _bm25(sql.SQL("(SELECT c.id, c.fts FROM fulltext_candidates c WHERE NOT c.in_sample)"))
    return sampled + sql.SQL(" UNION ALL (") + rest + sql.SQL(")")


def bm25_in_play() -> sql.Composed:
    """BM25 of the rows in play (CTE ``in_play``): the candidates' scores, computed only for
    the others."""
    rest = _bm25(
        sql.SQL(
            "(SELECT x.id, x.fts FROM (SELECT u.id, u.fts, u.own,"
            " bool_or(NOT u.own) OVER (PARTITION BY u.id) AS scored FROM ("
            "  SELECT p.id, p.fts, true AS own FROM in_play p"
            "  UNION ALL SELECT c.id, NULL::tsvector, false FROM candidate_scores c) u) x"
            " WHERE x.own AND NOT x.scored)"
        )
    )
    return (
        sql.SQL(
            "SELECT c.id, c.bm25 FROM candidate_scores c JOIN in_play p ON p.id = c.id UNION ALL ("
        )
        + rest
        + sql.SQL(")")
    )


# --- candidates ----------------------------------------------------------------------------


def _scored_candidates(
    terms: QueryTerms, where: sql.Composable, tuning: SearchTuning, pool: int
) -> tuple[sql.Composed, ...]:
    """``fulltext_candidates`` (each row once), ``candidate_scores`` (their BM25) and
    ``fulltext_hits``: the best ``pool`` of them, ranked."""
    scan = sql.Literal(tuning.fts_scan_rows)
    candidates = [
        _sampled_matches(scan),
        _rare_matches("rare", where, scan),
        _rare_matches("rare2", where, scan),
    ]
    if terms.tsquery_all is not None:
        candidates.append(_all_word_matches(where, scan, tuning.conjunction_rows))
    return (
        cte(
            "fulltext_candidates",
            sql.SQL(
                "SELECT DISTINCT ON (w.id) w.id, w.message_at, w.fts, w.in_sample FROM ("
                " SELECT u.id, u.message_at, u.fts, bool_or(u.sampled) OVER (PARTITION BY u.id)"
                "  AS in_sample, bool_or(u.kept) OVER (PARTITION BY u.id) AS kept FROM ("
            )
            + sql.SQL(" UNION ALL ").join(candidates)
            + sql.SQL(") u) w WHERE w.kept ORDER BY w.id"),
        ),
        cte(
            "candidate_scores",
            sql.SQL(
                "SELECT c.id, c.message_at, coalesce(s.bm25, 0) AS bm25"
                " FROM fulltext_candidates c LEFT JOIN ({bm25}) s ON s.id = c.id"
            ).format(bm25=_bm25_of_candidates()),
        ),
        cte(
            "all_rare",
            sql.SQL(
                "SELECT string_agg(querytree(te.q), ' & ' ORDER BY te.ord)::tsquery AS q"
                " FROM term_estimates te CROSS JOIN sample_stats st"
                " WHERE te.est <= %(rare_share)s * st.n * st.scale"
                " AND EXISTS (SELECT 1 FROM fulltext_candidates c WHERE c.fts @@ te.q)"
            ),
        ),
        cte(
            "fulltext_hits",
            sql.SQL(
                "SELECT c.id, c.bm25,"
                " row_number() OVER (ORDER BY c.bm25 DESC, c.message_at DESC, c.id DESC) AS rank"
                " FROM candidate_scores c ORDER BY c.bm25 DESC, c.message_at DESC, c.id DESC"
                " LIMIT {pool}"
            ).format(pool=sql.Literal(pool)),
        ),
    )


def _sampled_matches(scan: sql.Composable) -> sql.Composed:
    """The sampled (newest) rows that match any word: all of them in a big scope, else the
    newest ``scan`` (then the sample is the whole scope)."""
    return sql.SQL(
        "(SELECT h.id, h.message_at, h.fts, true AS sampled,"
        " h.rn <= {scan} OR (SELECT fq.sampled FROM fulltext_query fq) AS kept FROM sample_hits h)"
    ).format(scan=scan)


def _rare_matches(query: str, where: sql.Composable, scan: sql.Composable) -> sql.Composed:
    """In a big scope, the newest matches of the rare words (``rare``) through the GIN index:
    ordering by an expression the time index cannot serve keeps the planner from walking that
    index newest-first looking for words only a few hundred rows hold. With ``rare2``, the
    newest rows holding two rare words, which the newest single-word matches may have crowded
    out: in a long history, a name and a topic word together are worth reaching back for."""
    return sql.SQL(
        "(SELECT m.id, m.message_at, m.fts, false AS sampled, true AS kept FROM memory m"
        " WHERE m.fts @@ (SELECT fq.{query} FROM fulltext_query fq) AND {filters}"
        " ORDER BY m.message_at + interval '0 s' DESC LIMIT {scan})"
    ).format(query=sql.Identifier(query), filters=where, scan=scan)


def _all_word_matches(where: sql.Composable, scan: sql.Composable, conj_rows: int) -> sql.Composed:
    """The newest rows holding every word, through the GIN index as well (the statement is
    planned once for any words), when the rarest of them is estimated to hold at most
    ``conj_rows`` rows in the table: reading a conjunction's matches costs about as many rows
    as its rarest word holds. Words that are all common ("fix the test") would cost thousands
    of rows for matches the sampled (newest) rows already hold enough of."""
    return sql.SQL(
        "(SELECT m.id, m.message_at, m.fts, false AS sampled, true AS kept FROM memory m"
        " WHERE (SELECT count(*) > 1 AND min(t.est) <= {conj_rows} FROM term_stats t)"
        " AND m.fts @@ (SELECT to_tsquery('agents_memory', %(all)s)) AND {filters}"
        " ORDER BY m.message_at + interval '0 s' DESC LIMIT {scan})"
    ).format(conj_rows=sql.Literal(conj_rows), filters=where, scan=scan)
