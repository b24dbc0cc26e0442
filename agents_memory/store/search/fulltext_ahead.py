"""The full-text arm run ahead of the rest of the hybrid statement.

The arm needs no query vector, so it goes to the server in the search's first round trip, while
the caller is still embedding the query (:mod:`agents_memory.store.search.memories`). What the
rest of the statement reads of it comes back as one row (:class:`FulltextAhead`): its hits and
their BM25 in rank order, each query term with its rarity (idf), the arm's weight, the floor of
its normalisation, the mean document length, the query's rare words and the arm's coverage of
them (its confidence, :mod:`agents_memory.store.search.arms`). The hybrid statement then takes
them as parameters (:func:`given_part`) and only walks the HNSW index, the neighbours and the
fusion once the vector is there. The arithmetic is the same and so are the bits: the values
travel as PostgreSQL's own text of them (arrays and numbers as it prints them, handed back
untouched, never parsed in Python), and a ``float8`` prints in its shortest exact form (the
transaction's ``extra_float_digits``, :func:`~agents_memory.store.search.hybrid.send_settings`),
so it reads back as the same double. Every candidate's BM25 comes back (at most a few thousand
rows in a big scope), so the rows in play after the vector arm
(:func:`agents_memory.store.search.fulltext.bm25_in_play`) need a BM25 computed only when the arm
never scored them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agents_memory.store.search import fulltext
from agents_memory.store.search.arms import lexical_coverage
from agents_memory.store.search.ctes import Part, cte
from agents_memory.store.search.statement import date_arm, neighbours
from agents_memory.store.search.terms import ParsedQuery
from agents_memory.store.search.types import SearchTuning


@dataclass(frozen=True, slots=True)
class FulltextAhead:
    """What the full-text arm found, as the rest of the hybrid statement reads it: each value
    as PostgreSQL's text of it (an array literal, a number; ``None``: SQL ``NULL``)."""

    with_vector: bool
    """Whether it was run for a search with the vector arm (its weight and rare-word scan
    depend on that; a search whose vector did not come runs the arm again, in one statement)."""
    values: dict[str, str | None]
    """The parameters of :func:`given_part`'s CTEs (:data:`VALUES`), by name."""


VALUES = (
    ("ft_ids", "(SELECT array_agg(h.id ORDER BY h.rank) FROM fulltext_hits h)"),
    ("ft_bm25", "(SELECT array_agg(h.bm25 ORDER BY h.rank) FROM fulltext_hits h)"),
    ("ft_candidates", "(SELECT array_agg(c.id ORDER BY c.id) FROM candidate_scores c)"),
    ("ft_scores", "(SELECT array_agg(c.bm25 ORDER BY c.id) FROM candidate_scores c)"),
    ("ft_terms", "(SELECT array_agg(t.q::text ORDER BY t.ord) FROM term_stats t)"),
    ("ft_ords", "(SELECT array_agg(t.ord ORDER BY t.ord) FROM term_stats t)"),
    ("ft_idfs", "(SELECT array_agg(t.idf ORDER BY t.ord) FROM term_stats t)"),
    ("ft_w_lex", "fq.w_lex"),
    ("ft_floor", "fq.lex_floor"),
    ("ft_avgdl", "fq.avgdl"),
    ("ft_all_rare", "(SELECT r.q FROM all_rare r)"),
    ("ft_term_rows", fulltext.TERM_ROWS_VALUE),
    ("ft_term_pool", fulltext.TERM_POOL_VALUE),
    ("dh_ids", "(SELECT array_agg(d.id) FROM date_hits d)"),
    ("dh_worded", "(SELECT array_agg(d.worded) FROM date_hits d)"),
)
NEIGHBOURS = (
    ("nb_seeds", "(SELECT array_agg(s.id) FROM neighbour_seeds s)"),
    ("nb_anchors", "(SELECT array_agg(n.anchor ORDER BY n.anchor, n.id) FROM neighbours n)"),
    ("nb_ids", "(SELECT array_agg(n.id ORDER BY n.anchor, n.id) FROM neighbours n)"),
    ("nb_dists", "(SELECT array_agg(n.dist ORDER BY n.anchor, n.id) FROM neighbours n)"),
)
"""The neighbours of the seeds that need no vector (:func:`~agents_memory.store.search.statement.
neighbours`), when the search has neighbours."""
"""What the rest of the statement reads of the arm: each parameter of :func:`given_part` and
the expression (over the arm's CTEs) that gives it; and ``ft_lex``, the arm's coverage."""


def send_fulltext(
    conn: psycopg.Connection[Any],
    query: ParsedQuery,
    where: sql.Composable,
    tuning: SearchTuning,
    *,
    limit: int,
    with_vector: bool,
    prepare: bool,
) -> psycopg.Cursor[dict[str, Any]]:
    """Send the arm's statement (planned once per connection and shape when ``prepare``, in
    the caller's generic-plan block) and return its cursor, read by :func:`read_fulltext`: in a
    pipeline it travels with the statements sent beside it."""
    parts = (
        fulltext.fulltext_arm(
            query.terms, where, tuning, pool=tuning.pool(limit), with_vector=with_vector
        ),
        date_arm(query.anchors, where, tuning, worded=True),
        neighbours(where, tuning, split="ahead"),
    )
    params = {
        **{k: v for part in parts for k, v in part.params.items()},
        "arm_top": tuning.arm_top,
        "date_terms": list(query.date_terms),
    }
    shown = VALUES + (NEIGHBOURS if tuning.neighbour_span > 0 else ())
    columns: list[sql.Composable] = [sql.SQL(f"{expr}::text AS {name}") for name, expr in shown]
    columns.append(sql.SQL("{lex}::text AS ft_lex").format(lex=lexical_coverage()))
    statement = (
        sql.SQL("WITH ")
        + sql.SQL(", ").join(c for part in parts for c in part.ctes)
        + sql.SQL(" SELECT ")
        + sql.SQL(", ").join(columns)
        + sql.SQL(" FROM fulltext_query fq")
    )
    cur = conn.cursor(row_factory=dict_row)
    cur.execute(statement, params, prepare=prepare)
    return cur


def read_fulltext(cur: psycopg.Cursor[dict[str, Any]], *, with_vector: bool) -> FulltextAhead:
    """The row :func:`send_fulltext` sent for (its values as the server printed them)."""
    row = cur.fetchone()
    assert row is not None  # one row: the arm's query row always has one
    return FulltextAhead(with_vector=with_vector, values=dict(row))


def given_part(ahead: FulltextAhead, query: ParsedQuery, tuning: SearchTuning) -> Part:
    """The full-text arm's CTEs as the rest of the hybrid statement reads them, from what
    :func:`send_fulltext` found: ``fulltext_hits``, ``candidate_scores`` (every candidate's BM25),
    ``term_stats``, ``fulltext_query`` and ``all_rare``. The arm's coverage is the parameter
    ``ft_lex`` (:func:`agents_memory.store.search.arms.arm_confidence`)."""
    ctes = (
        cte(
            "fulltext_hits",
            sql.SQL(
                "SELECT h.id, h.bm25, h.rank FROM unnest(%(ft_ids)s::bigint[],"
                " %(ft_bm25)s::float8[]) WITH ORDINALITY h(id, bm25, rank)"
            ),
        ),
        cte(
            "candidate_scores",
            sql.SQL(
                "SELECT c.id, c.bm25 FROM unnest(%(ft_candidates)s::bigint[],"
                " %(ft_scores)s::float8[]) c(id, bm25)"
            ),
        ),
        cte(
            "term_stats",
            sql.SQL(
                "SELECT t.q::tsquery AS q, t.ord, t.idf FROM unnest(%(ft_terms)s::text[],"
                " %(ft_ords)s::bigint[], %(ft_idfs)s::float8[]) t(q, ord, idf)"
            ),
        ),
        cte(
            "fulltext_query",
            sql.SQL(
                "SELECT %(ft_w_lex)s::float8 AS w_lex, %(ft_floor)s::float8 AS lex_floor,"
                " %(ft_avgdl)s::float8 AS avgdl"
            ),
        ),
        cte("all_rare", sql.SQL("SELECT %(ft_all_rare)s::tsquery AS q")),
        cte(
            "date_hits",
            sql.SQL(
                "SELECT d.id, d.worded FROM unnest(%(dh_ids)s::bigint[], %(dh_worded)s::boolean[])"
                " d(id, worded)"
            ),
        ),
    )
    params = {
        **ahead.values,
        "any": query.terms.tsquery,
        "k1": tuning.bm25_k1,
        "b": tuning.bm25_b,
    }
    return Part(ctes, params)
