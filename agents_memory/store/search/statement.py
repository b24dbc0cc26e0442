"""The hybrid ranking statement (see :mod:`agents_memory.store.search` for the whole search).

One statement per search, assembled from one builder per part:

* the **full-text arm** (:mod:`agents_memory.store.search.fulltext`): the query's terms, how
  rare each is, and the best rows by BM25 (``fulltext_hits``); a search runs it ahead, in its
  first round trip, and the statement then reads its results from parameters
  (:mod:`agents_memory.store.search.fulltext_ahead`);
* the **vector arm** walks the HNSW index (``vector_hits``);
* the **date arm**: the turns of the days the query names (``date_hits``), candidates like
  the arms' (never capped as lifted by their context alone);
* the **neighbours**: the session neighbours (``neighbour_span`` turns either side) of the
  best of both arms' candidates and of the named days' turns holding a word of the query
  (``neighbours``);
* the **fusion**: the rows in play (the arms' candidates and the neighbours) are scored by
  both arms and the scores are fused convexly after normalisation (BM25 over the greater of
  the best row's and a floor the query's words set, cosine min-max: ``fused``), each arm
  weighted by its confidence on the query (:mod:`agents_memory.store.search.arms`); then a turn
  gains a share of its best neighbour's score and of its session's best scores (an answer
  often shares no word with the question it answers), the **date bonus** when it falls on a
  date the query names (``slack_date_share`` of it on the days around), and finally the
  recency prior and the pinned boost multiply it; a sure arm's first hits keep a place on the
  page.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg import sql

from agents_memory.store.search import fulltext
from agents_memory.store.search.arms import arm_confidence, kept_slots
from agents_memory.store.search.ctes import Part, cte, empty_cte
from agents_memory.store.search.terms import QueryTerms
from agents_memory.store.search.types import SearchFilters, SearchTuning

NO_VECTOR_HITS = empty_cte("vector_hits", "id bigint, distance float8, rank bigint")
NO_DATE_HITS = empty_cte("date_hits", "id bigint, worded boolean")
NO_NEIGHBOURS = empty_cte("neighbours", "anchor bigint, id bigint, dist bigint")
_SESSION = sql.SQL("r.agent_platform, coalesce(r.session_id, r.id::text)")


def hybrid_statement(
    *,
    terms: QueryTerms,
    date_terms: tuple[int, ...] = (),
    dates: tuple[tuple[datetime, datetime], ...],
    anchors: tuple[tuple[datetime, datetime], ...] = (),
    projects: tuple[str, ...] = (),
    vector: str | None,
    filters: SearchFilters,
    where: sql.Composable,
    tuning: SearchTuning,
    columns: sql.Composable,
    tag_join: sql.Composable,
    given: Part | None = None,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The one retrieval statement and its parameters.

    The filters (``where``) and the row counts that shape the plan are written into the text;
    the parameters are only what changes from one query to the next (the words, the vector, the
    dates, the page size), so the statement can be planned once for every query of the same
    shape. ``given``: the full-text arm as it ran ahead
    (:func:`~agents_memory.store.search.fulltext_ahead.given_part`), read instead of run."""
    pool = tuning.pool(filters.limit)
    lexical = fulltext.runs(terms, tuning)
    arm = given or fulltext.fulltext_arm(
        terms, where, tuning, pool=pool, with_vector=vector is not None
    )
    parts = (
        arm,
        vector_arm(vector, where, pool),
        *(
            (neighbours(where, tuning, split="after"),)
            if given
            else (date_arm(anchors, where, tuning, worded=lexical), neighbours(where, tuning))
        ),
        fusion(
            lexical=lexical,
            with_vector=vector is not None,
            dates=dates,
            anchors=anchors,
            projects=projects,
            tuning=tuning,
            given=given is not None,
        ),
    )
    params: dict[str, Any] = {
        "limit": filters.limit,
        "date_terms": list(date_terms),
        "lex_slots": min(tuning.kept_slots[0], filters.limit // 2),
        "vec_slots": min(tuning.kept_slots[1], filters.limit // 2),
        "vec_sure": tuning.vector_sure,
        "dated": bool(anchors),
        "dated_vec": tuning.dated_vector_confidence,
    }
    for part in parts:
        params.update(part.params)
    statement = (
        sql.SQL("WITH ")
        + sql.SQL(", ").join(c for part in parts for c in part.ctes)
        + result_rows(lexical=lexical, columns=columns, tag_join=tag_join, given=given is not None)
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


def date_arm(
    anchors: tuple[tuple[datetime, datetime], ...],
    where: sql.Composable,
    tuning: SearchTuning,
    *,
    worded: bool = False,
) -> Part:
    """``date_hits``: the rows on the days the query names (its anchors, no slack), newest
    ``date_candidates`` of each day, so an old turn of that day is in play even when neither
    arm reached it; none without a date. ``worded``: whether the row holds a word of the query
    (the query has full-text terms); the newest such rows seed the neighbours, as the arms' best
    hits do."""
    if not anchors or tuning.date_candidates <= 0:
        return Part((NO_DATE_HITS,))
    holds = sql.SQL("m.fts @@ (SELECT to_tsquery('agents_memory', %(any)s))" if worded else "false")
    body = sql.SQL(
        "SELECT x.id, x.worded FROM unnest(%(a_from)s::timestamptz[], %(a_to)s::timestamptz[])"
        " d(a, b) CROSS JOIN LATERAL (SELECT m.id, {holds} AS worded FROM memory m"
        "  WHERE {filters} AND m.message_at >= d.a AND m.message_at < d.b"
        "  ORDER BY m.message_at DESC LIMIT {n}) x"
    ).format(holds=holds, filters=where, n=sql.Literal(tuning.date_candidates))
    params = {"a_from": [a for a, _ in anchors], "a_to": [b for _, b in anchors]}
    return Part((cte("date_hits", body),), params)


def neighbours(where: sql.Composable, tuning: SearchTuning, *, split: str | None = None) -> Part:
    """``neighbours``: (anchor, id, dist) for the session turns up to ``neighbour_span`` either
    side of the best ``min_candidates`` rows of each arm and of as many rows of the named days
    holding a word of the query (``neighbour_seeds``). ``split="ahead"``: only the seeds that
    need no vector (the full-text arm's and the named days'), run ahead of it;
    ``split="after"``: the vector arm's other seeds, the links found ahead (parameters
    ``nb_seeds``, ``nb_anchors``, ``nb_ids``, ``nb_dists``) added."""
    if tuning.neighbour_span <= 0:
        return Part((NO_NEIGHBOURS,))
    ahead = (
        "SELECT id FROM fulltext_hits WHERE rank <= {n}"
        " UNION (SELECT id FROM date_hits WHERE worded LIMIT {n})"
    )
    seeds = {
        None: "SELECT id FROM fulltext_hits WHERE rank <= {n} UNION SELECT id FROM vector_hits"
        " WHERE rank <= {n} UNION (SELECT id FROM date_hits WHERE worded LIMIT {n})",
        "ahead": ahead,
        "after": "SELECT id FROM vector_hits WHERE rank <= {n}"
        " EXCEPT SELECT unnest(%(nb_seeds)s::bigint[])",
    }[split]
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
    if split == "after":
        links = links + sql.SQL(
            " UNION ALL SELECT * FROM unnest(%(nb_anchors)s::bigint[], %(nb_ids)s::bigint[],"
            " %(nb_dists)s::bigint[])"
        )
    seeds_sql = sql.SQL(seeds).format(n=sql.Literal(tuning.min_candidates))
    return Part(
        (
            cte("neighbour_seeds", seeds_sql, materialized=split == "ahead"),
            cte("neighbours", links),
        ),
    )


def date_bonus(
    dates: tuple[tuple[datetime, datetime], ...],
    tuning: SearchTuning,
    anchors: tuple[tuple[datetime, datetime], ...] = (),
) -> tuple[sql.Composable, dict[str, Any]]:
    """The bonus of a row (alias ``r``) falling on a date the query names, and its parameters:
    the whole ``date_weight`` on the named day itself (``anchors``), ``slack_date_share`` of it
    on the days of slack around it (``dates``: the named days widened). A question naming April
    5 is about April 5 first; a turn three days off is a weaker guess than one of that day."""
    if not dates or tuning.date_weight <= 0:
        return sql.SQL("0::float8"), {}
    bonus = sql.SQL(
        "CASE WHEN EXISTS (SELECT 1 FROM unnest(%(a_from)s::timestamptz[],"
        " %(a_to)s::timestamptz[]) d(a, b) WHERE r.message_at >= d.a AND r.message_at < d.b)"
        " THEN %(date_w)s::float8"
        " WHEN EXISTS (SELECT 1 FROM unnest(%(d_from)s::timestamptz[],"
        " %(d_to)s::timestamptz[]) d(a, b) WHERE r.message_at >= d.a AND r.message_at < d.b)"
        " THEN %(date_w)s::float8 * %(slack_share)s::float8 ELSE 0::float8 END"
    )
    params = {
        "a_from": [a for a, _ in anchors],
        "a_to": [b for _, b in anchors],
        "d_from": [a for a, _ in dates],
        "d_to": [b for _, b in dates],
        "date_w": tuning.date_weight,
        "slack_share": tuning.slack_date_share,
    }
    return bonus, params


def project_bonus(
    projects: tuple[str, ...], tuning: SearchTuning
) -> tuple[sql.Composable, dict[str, Any]]:
    """The bonus of a row (alias ``r``) of a project the query names: a directory of its
    working directory, or its canonical project tag, is one of the query's words."""
    if not projects or tuning.project_weight <= 0:
        return sql.SQL("0::float8"), {}
    bonus = sql.SQL(
        "CASE WHEN string_to_array(lower(coalesce(r.cwd, '')), '/') && %(proj_words)s::text[]"
        " OR (r.p_tag_id IS NOT NULL AND lower((SELECT t.name FROM project_tags t"
        "  WHERE t.id = canonical_project_tag_id(r.p_tag_id))) = ANY(%(proj_words)s::text[]))"
        " THEN %(proj_w)s::float8 ELSE 0::float8 END"
    )
    return bonus, {"proj_words": list(projects), "proj_w": tuning.project_weight}


def fusion(
    *,
    lexical: bool,
    with_vector: bool,
    dates: tuple[tuple[datetime, datetime], ...],
    anchors: tuple[tuple[datetime, datetime], ...] = (),
    projects: tuple[str, ...] = (),
    tuning: SearchTuning,
    given: bool = False,
) -> Part:
    """The rows in play scored by both arms, fused, given their context, date and project
    bonus, and the best ``limit`` of them (``top_hits``); ``given``: the full-text arm ran
    ahead (its coverage is a parameter)."""
    dated, date_params = date_bonus(dates, tuning, anchors)
    named, project_params = project_bonus(projects, tuning)
    halflife = tuning.recency_halflife_days
    if dates and tuning.dated_recency_off:
        halflife = 1e9  # a question that names its day is not about the newest rows
    params = {
        "decay": tuning.neighbour_decay,
        "neighbour": tuning.neighbour_weight,
        "session_w": tuning.session_weight,
        "halflife": halflife,
        "pinned": tuning.pinned_boost,
        **date_params,
        **project_params,
    }
    params.update(
        arm_top=tuning.arm_top,
        conf_floor=tuning.arm_confidence_floor,
        conf_neutral=tuning.arm_confidence_neutral,
        vec_z0=tuning.vector_z[0],
        vec_z1=tuning.vector_z[1],
    )
    ctes = (
        arm_confidence(lexical, with_vector, tuning.arm_weighting, given=given),
        _in_play(with_vector),
        cte(
            "in_play_bm25",
            fulltext.bm25_in_play() if lexical else fulltext.NO_BM25,
            materialized=False,
        ),
        _fused(lexical, with_vector, tuning.rrf_k),
        *_context(),
        _scored(dated, named),
        *_top_hits(),
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
            " m.cwd, m.p_tag_id, {cosine} AS cos"
            " FROM (SELECT id FROM fulltext_hits UNION SELECT id FROM vector_hits"
            "  UNION SELECT id FROM neighbours UNION SELECT id FROM date_hits) e"
            " JOIN memory m ON m.id = e.id"
        ).format(cosine=cosine),
    )


def _lexical_weight(lexical: bool) -> sql.Composable:
    """The full-text arm's base weight in the fusion (0 when it does not run)."""
    return fulltext.WEIGHT if lexical else sql.SQL("0::float8")


def _fused(lexical: bool, with_vector: bool, rrf_k: float = 0.0) -> sql.Composed:
    """``fused``: each row in play with its BM25 and the arms' normalised scores, weighted
    (:func:`_normalised`)."""
    w_lex = sql.SQL("(SELECT ac.w_lex FROM arm_confidence ac)")
    w_vec = sql.SQL("(SELECT ac.w_vec FROM arm_confidence ac)")
    floor = fulltext.FLOOR if lexical else sql.SQL("0::float8")
    all_rare = fulltext.ALL_RARE if lexical else sql.SQL("NULL::tsquery")
    lex, vec = _normalised(floor, rrf_k)
    return cte(
        "fused",
        sql.SQL(
            "SELECT p.id, p.agent_platform, p.session_id, p.message_at, p.is_pinned, p.cos,"
            " p.cwd, p.p_tag_id, coalesce(l.bm25, 0) AS bm25,"
            " coalesce(p.fts @@ {all_rare}, false) AS all_rare,"
            " {w_lex} * {lex} + {w_vec} * {vec} AS fused"
            " FROM in_play p LEFT JOIN in_play_bm25 l ON l.id = p.id"
        ).format(w_lex=w_lex, lex=lex, w_vec=w_vec, vec=vec, all_rare=all_rare),
    )


def _normalised(floor: sql.Composable, rrf_k: float) -> tuple[sql.Composable, sql.Composable]:
    """Each arm's score of a row in play on 0-1: BM25 over the greater of the best row's and
    the floor, the cosine min-max; or, with ``rrf_k`` > 0, by rank (reciprocal rank fusion,
    scaled so an arm's first row has 1)."""
    if rrf_k > 0:
        k = sql.Literal(float(rrf_k))
        return (
            sql.SQL(
                "CASE WHEN coalesce(l.bm25, 0) > 0 THEN ({k} + 1)"
                " / ({k} + rank() OVER (ORDER BY coalesce(l.bm25, 0) DESC)) ELSE 0 END"
            ).format(k=k),
            sql.SQL(
                "CASE WHEN p.cos IS NULL THEN 0 ELSE ({k} + 1)"
                " / ({k} + rank() OVER (ORDER BY p.cos DESC NULLS LAST)) END"
            ).format(k=k),
        )
    return (
        sql.SQL("coalesce(l.bm25 / nullif(greatest(max(l.bm25) OVER (), {floor}), 0), 0)").format(
            floor=floor
        ),
        sql.SQL(
            "coalesce((p.cos - min(p.cos) OVER ())"
            " / nullif(max(p.cos) OVER () - min(p.cos) OVER (), 0),"
            " CASE WHEN p.cos IS NULL THEN 0 ELSE 1 END)"
        ),
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


def _scored(dated: sql.Composable, named: sql.Composable) -> sql.Composed:
    """``scored``: a share of the session's best three scores, the date and project bonuses,
    the recency prior and the pinned boost of each row."""
    return cte(
        "scored",
        sql.SQL(
            "SELECT r.*,"
            " %(session_w)s * avg(r.local) FILTER (WHERE r.srank <= 3) OVER (PARTITION BY"
            "  {session}) AS sess,"
            " {dated} AS dated, {named} AS proj,"
            " 0.5 + 0.5 * power(2.0::float8, -greatest(0, extract(epoch FROM now() - r.message_at))"
            "  / 86400.0 / %(halflife)s) AS recency,"
            " CASE WHEN r.is_pinned THEN %(pinned)s::float8 ELSE 1.0 END AS pinned"
            " FROM session_ranked r"
        ).format(session=_SESSION, dated=dated, named=named),
        materialized=False,
    )


def _top_hits() -> tuple[sql.Composed, ...]:
    """``top_hits``: the best ``limit`` rows by final score, with the sure arms' first hits kept
    (:func:`~agents_memory.store.search.arms.kept_slots`). A row in play only through its
    context (in no arm's hits, nor on a day the query names) and not holding every rare word
    of the query (``all_rare``) may not climb by its neighbours and session above the weakest
    row that holds them all: its score is capped there unless its own score (fused, date and
    project bonus) is higher."""
    return (
        cte(
            "raw_scores",
            sql.SQL(
                "SELECT s.*, (s.local + s.sess + s.dated + s.proj) * s.recency * s.pinned AS raw,"
                " (s.fused + s.dated + s.proj) * s.recency * s.pinned AS own,"
                " min((s.local + s.sess + s.dated + s.proj) * s.recency * s.pinned)"
                "  FILTER (WHERE s.all_rare) OVER () AS rare_floor,"
                " NOT EXISTS (SELECT 1 FROM fulltext_hits f WHERE f.id = s.id)"
                "  AND NOT EXISTS (SELECT 1 FROM vector_hits v WHERE v.id = s.id)"
                "  AND NOT EXISTS (SELECT 1 FROM date_hits d WHERE d.id = s.id) AS context_only"
                " FROM scored s"
            ),
            materialized=False,
        ),
        cte(
            "capped",
            sql.SQL(
                "SELECT s.*, CASE WHEN s.all_rare OR NOT s.context_only OR s.rare_floor IS NULL"
                " THEN s.raw"
                " ELSE least(s.raw, greatest(s.own, s.rare_floor * 0.999)) END AS score"
                " FROM raw_scores s"
            ),
            materialized=False,
        ),
        *kept_slots(),
    )


def result_rows(
    *, lexical: bool, columns: sql.Composable, tag_join: sql.Composable, given: bool = False
) -> sql.Composed:
    """The final SELECT: ``columns`` of each top hit, then its full-text rank and BM25
    (``fts_rank``, ``fts_score``), vector rank and cosine (``vector_rank``, ``similarity``), the
    fused score, what its context added, its date and project bonus, recency and pinned factors,
    its score, whether it holds every rare word, the arms' hit counts and best cosine
    (``fts_hits``, ``vec_hits``, ``top_similarity``), their confidence inputs, and how many
    rows hold each of the query's terms (``term_rows``, ``term_pool``; ``given``: as the
    full-text arm found them ahead)."""
    w_lex = _lexical_weight(lexical)
    rarity = fulltext.GIVEN_TERM_ROWS if given else fulltext.TERM_ROWS
    return sql.SQL(
        " SELECT {columns}, f.rank AS fts_rank,"
        "  CASE WHEN {w_lex} > 0 THEN tp.bm25 END AS fts_score,"
        "  v.rank AS vector_rank, tp.cos AS similarity, tp.fused,"
        "  tp.local - tp.fused + tp.sess AS context, tp.dated, tp.proj AS project, tp.recency,"
        "  tp.pinned, tp.score, tp.all_rare,"
        "  (SELECT count(*) FROM fulltext_hits) AS fts_hits,"
        "  (SELECT count(*) FROM vector_hits) AS vec_hits,"
        "  (SELECT 1 - min(distance) FROM vector_hits) AS top_similarity,"
        "  ac.lex AS arm_lex, ac.vec_top, ac.vec_mean, ac.vec_sd, {rarity}"
        " FROM top_hits tp JOIN memory m ON m.id = tp.id LEFT JOIN fulltext_hits f"
        "  ON f.id = tp.id LEFT JOIN vector_hits v ON v.id = tp.id CROSS JOIN arm_confidence ac"
        " {tag_join}"
        " ORDER BY tp.score DESC, m.message_at DESC, m.id DESC"
    ).format(
        columns=columns,
        w_lex=w_lex,
        tag_join=tag_join,
        rarity=rarity if lexical else fulltext.NO_TERM_ROWS,
    )
