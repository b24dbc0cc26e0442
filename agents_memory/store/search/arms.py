"""How sure each arm of the hybrid search is of its best hits, per query, and the weights the
fusion gives the arms from that (:mod:`agents_memory.store.search.statement`).

* **Full text** is as sure as its best hits cover the query's rare vocabulary: the share of the
  query's words, each weighed by its rarity in the whole table (BM25's idf over the estimated
  row counts, the common words the Cold Path keeps included), that the best of its first
  ``arm_top`` hits holds (a rare word: at most ``rare_share`` of the rows, or one row, hold
  it). A hit holding only common words ("logs", "tests", "get rid of") is
  weak evidence, however many rows hold them; a hit holding the one rare identifier of the
  query is strong.
* **Vector** is as sure as its best cosine stands out of the spread of its candidates' cosines
  (how many of their standard deviations above their mean): an embedder's cosines sit in a
  narrow band whose place moves from query to query, so the raw cosine says little. With
  fewer than :data:`MIN_SPREAD_ROWS` candidates it has no opinion. A query that names a day
  is one it cannot read (a vector does not hold the calendar): its confidence is then scaled
  by ``SearchTuning.dated_vector_confidence``.

A sure arm's first hits keep a place in the page (:func:`kept_slots`): the full-text arm's
first ``kept_slots[0]`` hits that hold every rare word of the query, and the vector arm's first
``kept_slots[1]`` when its confidence is ``vector_sure`` or more. They enter at the bottom of
the page, in place of the weakest rows, and keep their own score and order.

Each arm's weight in the fusion is its base weight (``SearchTuning.lexical_weight`` and the
rest), kept whole when the arm is sure (its confidence at least ``arm_confidence_neutral``, or
no opinion) and scaled down with its confidence when it is not (to ``arm_confidence_floor`` of
it at confidence 0); the two are then scaled to sum to one, so the fused score keeps its range
and the context, date and project terms their meaning. An unsure arm steps back; a sure arm
gains weight only from the other arm's doubt.
"""

from __future__ import annotations

from psycopg import sql

from agents_memory.store.search import fulltext
from agents_memory.store.search.ctes import cte

MIN_SPREAD_ROWS = 20
"""Fewer vector candidates than this have no spread to judge their best against: the vector
arm then has no opinion (``SearchTuning.arm_confidence_neutral``)."""


def _lexical(lexical: bool, given: bool = False) -> sql.Composable:
    """The full-text arm's coverage (:func:`lexical_coverage`); 0 when the arm does not run;
    with ``given``, the parameter ``ft_lex`` (the arm ran ahead,
    :mod:`agents_memory.store.search.fulltext_ahead`)."""
    if not lexical:
        return sql.SQL("0::float8")
    if given:
        return sql.SQL("%(ft_lex)s::float8")
    return lexical_coverage()


def lexical_coverage() -> sql.Composable:
    """The full-text arm's coverage of the query's rare vocabulary, the words of a named date
    left out (the date bonus matches those); ``NULL`` when the query has no rare word (no
    opinion: the arm's base weight stands). Reads the arm's CTEs."""
    return sql.SQL(
        "(SELECT max(c.cover) FROM (SELECT coalesce(sum(w.idf) FILTER (WHERE fc.fts @@ w.q), 0)"
        "  / nullif(sum(w.idf), 0) AS cover"
        "  FROM (SELECT f.id FROM fulltext_hits f WHERE f.rank <= %(arm_top)s::int) h"
        "  JOIN fulltext_candidates fc ON fc.id = h.id"
        "  CROSS JOIN (SELECT e.q, ln(1 + (st.n * st.scale - e.est + 0.5) / (e.est + 0.5)) AS idf"
        "   FROM term_estimates e CROSS JOIN sample_stats st"
        "   WHERE e.est <= greatest(1, %(rare_share)s::float8 * st.n * st.scale)"
        "   AND e.ord <> ALL(%(date_terms)s::bigint[])) w"
        "  GROUP BY h.id) c)"
    )


def _factor(confidence: str) -> sql.Composable:
    """What an arm's confidence does to its weight: an arm at least as sure as
    ``arm_confidence_neutral`` (or with no opinion) keeps its whole base weight; a less sure one
    steps back, down to ``arm_confidence_floor`` of it when it is not sure at all."""
    return sql.SQL(
        "(%(conf_floor)s::float8 + (1 - %(conf_floor)s::float8)"
        " * least(1, coalesce({c}, %(conf_neutral)s::float8) / %(conf_neutral)s::float8))"
    ).format(c=sql.SQL(confidence))


def arm_confidence(
    lexical: bool, with_vector: bool, weighted: bool, *, given: bool = False
) -> sql.Composed:
    """``arm_confidence`` (one row): the full-text arm's coverage (``lex``; the parameter
    ``ft_lex`` when ``given``), the vector arm's best cosine, its candidates' mean and standard
    deviation and its confidence (``vec``), and the arms' weights in the fusion (``w_lex``,
    ``w_vec``; the fixed base weights unless ``weighted``)."""
    vec: sql.Composable = sql.SQL(
        "NULL::float8 AS vec_top, NULL::float8 AS vec_mean, NULL::float8 AS vec_sd,"
        " NULL::float8 AS vec"
    )
    if with_vector:
        vec = sql.SQL(
            "v.top AS vec_top, v.mean AS vec_mean, v.sd AS vec_sd,"
            " CASE WHEN v.n >= {min_rows} THEN least(1, greatest(0,"
            "  ((v.top - v.mean) / nullif(v.sd, 0) - %(vec_z0)s::float8)"
            "  / (%(vec_z1)s::float8 - %(vec_z0)s::float8)))"
            "  * CASE WHEN %(dated)s::boolean THEN %(dated_vec)s::float8 ELSE 1 END"
            " END AS vec"
        ).format(min_rows=sql.Literal(MIN_SPREAD_ROWS))
    inner = sql.SQL(
        "SELECT {lex} AS lex, {vec} FROM (SELECT max(1 - d.distance) AS top,"
        " avg(1 - d.distance) AS mean, stddev_pop(1 - d.distance) AS sd, count(*) AS n"
        " FROM vector_hits d) v"
    ).format(lex=_lexical(lexical, given), vec=vec)
    base = fulltext.WEIGHT if lexical else sql.SQL("0::float8")
    if not with_vector:
        weights = sql.SQL("{base} AS w_lex, 0::float8 AS w_vec").format(base=base)
    elif not weighted:
        weights = sql.SQL("{base} AS w_lex, 1 - {base} AS w_vec").format(base=base)
    else:
        lex = sql.SQL("{base} * {factor}").format(base=base, factor=_factor("a.lex"))
        vec_w = sql.SQL("(1 - {base}) * {factor}").format(base=base, factor=_factor("a.vec"))
        weights = sql.SQL(
            "{lex} / ({lex} + {vec}) AS w_lex, {vec} / ({lex} + {vec}) AS w_vec"
        ).format(lex=lex, vec=vec_w)
    return cte(
        "arm_confidence",
        sql.SQL("SELECT a.*, {weights} FROM ({inner}) a").format(weights=weights, inner=inner),
    )


def kept_slots() -> tuple[sql.Composed, ...]:
    """``placed``: the scored rows (CTE ``capped``) in score order, each marked ``kept`` when
    it is one of a sure arm's first hits; ``top_hits``: the best ``limit`` of them, the kept
    ones below the page taking the places of its weakest rows that are not kept."""
    return (
        cte(
            "placed",
            sql.SQL(
                "SELECT c.*,"
                " row_number() OVER (ORDER BY c.score DESC, c.message_at DESC, c.id DESC) AS pos,"
                " coalesce(c.all_rare AND EXISTS (SELECT 1 FROM fulltext_hits f"
                "  WHERE f.id = c.id AND f.rank <= %(lex_slots)s::int), false)"
                " OR EXISTS (SELECT 1 FROM vector_hits v"
                "  CROSS JOIN arm_confidence ac"
                "  WHERE v.id = c.id AND v.rank <= %(vec_slots)s::int"
                "  AND ac.vec >= %(vec_sure)s::float8)"
                " AS kept FROM capped c"
            ),
        ),
        cte(
            "top_hits",
            sql.SQL(
                "SELECT p.* FROM placed p WHERE (p.kept AND p.pos > %(limit)s)"
                " OR p.pos <= %(limit)s - (SELECT count(*) FROM placed k"
                "  WHERE k.kept AND k.pos > %(limit)s)"
                " ORDER BY p.score DESC, p.message_at DESC, p.id DESC LIMIT %(limit)s"
            ),
            materialized=False,
        ),
    )
