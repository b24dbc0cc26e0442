"""The session arm of a search: sessions whose summary (and the words it is found by) match
the query, fused with the sessions of the turn hits.

It runs beside the turn ranking, never inside it: the turns a search returns are ranked as
before, and the result also names the sessions that match (``SearchResult.sessions``), so a
"the session where we moved billing to partitions" query finds the session as well as its
turns. A session's score is reciprocal-rank fusion of two rankings: its summary's full-text
score (each query word that the summary's text holds weighs by its rarity among sessions, times
``1 + ts_rank``, which weighs the title over the summary over the extra words), and the place of
its best turn among the turn hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

from agents_memory.store.search.scope import TagFilter
from agents_memory.store.search.terms import QueryTerms
from agents_memory.store.search.types import SearchFilters, SearchHit, SessionHit

SESSION_HITS: Final = 5
"""At most this many sessions in a result."""
CANDIDATES: Final = 50
RARE_SHARE: Final = 0.25
"""A query word at most this share of the sessions hold is rare (picks the sessions scored)."""
POOL: Final = 2_000
"""At most this many sessions (the newest holding a rare word) are scored."""


@dataclass(frozen=True, slots=True)
class SessionFusion:
    """How the two rankings of sessions are fused: ``weight / (rrf_k + rank)`` summed. The turn
    hits weigh more: on the coding set's tuning half (``bench/session_recall.py``) a session
    is in the top 5 for 0.92 of the questions with weights 1 / 0.7, 0.97 with 1 / 1, 0.98
    with 1 / 1.5, 0.68 by its summary's text alone."""

    text_weight: float = 1.0
    turn_weight: float = 1.5
    rrf_k: float = 10.0


_SESSION_WORDS: Final = frozenset({"'session'", "'sessions'", "'conversation'", "'chat'"})


def session_text_ranking(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: QueryTerms,
    filters: SearchFilters,
    tag: TagFilter | None,
) -> list[dict[str, Any]]:
    """The sessions whose summary text holds any of the query's words, best first (at most
    :data:`CANDIDATES`), with their summary's columns and ``text_score``. The words that only
    say "a session" are not searched for."""
    cur = send_session_text(conn, user_id, terms, filters, tag)
    return [] if cur is None else cur.fetchall()


def send_session_text(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: QueryTerms,
    filters: SearchFilters,
    tag: TagFilter | None,
) -> psycopg.Cursor[dict[str, Any]] | None:
    """Send :func:`session_text_ranking`'s statement and return its cursor (``None``: no word
    to search): in a pipeline it travels with the statements sent beside it. Its text never
    changes (the scope is in its parameters): kept prepared, and after a few runs planned once
    when the server finds that no costlier (``plan_cache_mode = auto``)."""
    words = [t for t in terms.terms if t not in _SESSION_WORDS]
    if not words:
        return None
    platform = filters.agent_platform if filters.agent_platform not in (None, "", "*") else None
    start = filters.date_range.start if filters.date_range is not None else None
    end = filters.date_range.end if filters.date_range is not None else None
    cur = conn.cursor(row_factory=dict_row)
    cur.execute(
        # Materialised: each is counted once, not once per session it is joined to. The
        # sessions scored are those holding a rare word of the query (all its words when it
        # has none), the newest POOL of them: a common word costs a bounded scan.
        "WITH q AS MATERIALIZED (SELECT w, to_tsquery('agents_memory', w) AS tq"
        "  FROM unnest(%(words)s::text[]) AS w),"
        " total AS MATERIALIZED (SELECT count(*)::float8 AS n FROM session_summaries"
        "  WHERE user_id = %(user)s),"
        " df AS MATERIALIZED (SELECT q.w, q.tq, (SELECT count(*) FROM session_summaries s"
        "  WHERE s.user_id = %(user)s AND s.fts @@ q.tq)::float8 AS n FROM q),"
        " anyq AS MATERIALIZED (SELECT to_tsquery('agents_memory', %(any)s) AS tq,"
        "  to_tsquery('agents_memory', coalesce((SELECT string_agg(df.w, ' | ')"
        "   FROM df, total WHERE df.n <= greatest(%(rare)s * total.n, 1)), %(any)s)) AS rare),"
        " pool AS MATERIALIZED (SELECT s.id, s.fts, ts_rank(s.fts, anyq.tq) AS rank"
        "  FROM session_summaries s, anyq"
        "  WHERE s.user_id = %(user)s AND s.fts @@ anyq.rare"
        "  AND (%(platform)s::text IS NULL OR s.agent_platform = %(platform)s::text)"
        "  AND (%(tags)s::bigint[] IS NULL OR s.p_tag_id = ANY(%(tags)s::bigint[]))"
        "  AND (%(start)s::timestamptz IS NULL OR s.last_at >= %(start)s::timestamptz)"
        "  AND (%(end)s::timestamptz IS NULL OR s.started_at < %(end)s::timestamptz)"
        "  ORDER BY s.last_at DESC LIMIT %(pool)s),"
        " scored AS (SELECT p.id,"
        "  coalesce(sum(ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5)))"
        "   FILTER (WHERE p.fts @@ df.tq), 0) * (1 + max(p.rank)) AS text_score"
        "  FROM pool p CROSS JOIN df CROSS JOIN total GROUP BY p.id)"
        " SELECT s.agent_platform, s.session_id, s.git_root, t.name AS project,"
        "  s.started_at, s.last_at, s.turns, s.title, s.summary, sc.text_score"
        " FROM scored sc JOIN session_summaries s ON s.id = sc.id"
        " LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(s.p_tag_id)"
        " ORDER BY sc.text_score DESC, s.last_at DESC LIMIT %(limit)s",
        {
            "words": words,
            "any": " | ".join(words),
            "user": user_id,
            "platform": platform,
            "tags": tag.member_ids if tag is not None else None,
            "start": start,
            "end": end,
            "limit": CANDIDATES,
            "rare": RARE_SHARE,
            "pool": POOL,
        },
        prepare=True,  # planning and parsing it took 1.1 ms a search on the coding pool
    )
    return cur


def turn_sessions(
    conn: psycopg.Connection[Any], user_id: int, keys: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """The summaries of the sessions ``keys`` (those that have one), same columns."""
    if not keys:
        return []
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT s.agent_platform, s.session_id, s.git_root, t.name AS project,"
            "  s.started_at, s.last_at, s.turns, s.title, s.summary, NULL::float8 AS text_score"
            " FROM unnest(%s::text[], %s::text[]) AS k(p, sid)"
            " JOIN session_summaries s ON s.user_id = %s AND s.agent_platform = k.p"
            "  AND s.session_id = k.sid"
            " LEFT JOIN project_tags t ON t.id = canonical_project_tag_id(s.p_tag_id)",
            ([k[0] for k in keys], [k[1] for k in keys], user_id),
        )
        return cur.fetchall()


def session_hits(
    conn: psycopg.Connection[Any],
    user_id: int,
    terms: QueryTerms,
    filters: SearchFilters,
    tag: TagFilter | None,
    turn_hits: Sequence[SearchHit],
    *,
    limit: int = SESSION_HITS,
    fusion: SessionFusion = SessionFusion(),
    by_text: list[dict[str, Any]] | None = None,
) -> tuple[SessionHit, ...]:
    """The sessions a query names, best first: its summary's text rank and its best turn's
    rank among ``turn_hits`` fused (reciprocal ranks). ``by_text``: the
    :func:`session_text_ranking` already read (read here when ``None``)."""
    if by_text is None:
        by_text = session_text_ranking(conn, user_id, terms, filters, tag)
    turn_rank: dict[tuple[str, str], int] = {}
    for hit in turn_hits:
        if hit.session_id is not None:
            turn_rank.setdefault((hit.agent_platform, hit.session_id), len(turn_rank) + 1)
    rows = {(r["agent_platform"], r["session_id"]): r for r in by_text}
    missing = [k for k in turn_rank if k not in rows]
    for row in turn_sessions(conn, user_id, missing):
        rows[(row["agent_platform"], row["session_id"])] = row
    text_rank = {(r["agent_platform"], r["session_id"]): i for i, r in enumerate(by_text, 1)}
    scored = []
    for key, row in rows.items():
        score = 0.0
        if key in text_rank:
            score += fusion.text_weight / (fusion.rrf_k + text_rank[key])
        if key in turn_rank:
            score += fusion.turn_weight / (fusion.rrf_k + turn_rank[key])
        scored.append((score, row["last_at"], key, row))
    scored.sort(key=lambda item: (-item[0], -item[1].timestamp()))
    return tuple(
        SessionHit(
            agent_platform=row["agent_platform"],
            session_id=row["session_id"],
            title=row["title"],
            summary=row["summary"],
            project=row["project"],
            git_root=row["git_root"],
            started_at=row["started_at"],
            last_at=row["last_at"],
            turns=int(row["turns"]),
            score=round(score, 6),
            text_rank=text_rank.get(key),
            turn_rank=turn_rank.get(key),
        )
        for score, _at, key, row in scored[:limit]
    )
