"""The last step of a ranked search (importance on, diversity off by default, measured in
bench/RESULTS.md):

* **importance** (seed B's prior, ``SearchTuning.importance_weight``): a hit's relevance is
  multiplied by ``1 + w * importance``, where importance (0-1) is half for a pinned row, a
  third for one an agent remembered on purpose (``manage_knowledge``), and up to a sixth for
  how often it was given to sessions already (briefs and per-prompt recalls, table
  ``prompt_recalls``; 8 times or more count fully). Bounded: a weight of 0.2 moves a hit at
  most a fifth of its score.
* **diversity** (``SearchTuning.mmr_lambda`` below 1): maximal marginal relevance over the
  page and as many hits again (:func:`widened`), each pick the best of
  ``lambda * relevance - (1 - lambda) * its word overlap (Jaccard) with the hits picked``, so
  near-duplicates (the same error pasted in five sessions) give up their places to other
  matches instead of filling the page.

Relevance is a hit's score over the best one's (its place when the page has no scores: a page
fused with the actions arm). Kept out of the statement on purpose: a page in, a page out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Any

import psycopg

from agents_memory.store.search.types import MAX_LIMIT, SearchFilters, SearchHit, SearchTuning
from agents_memory.store.search.words import content_words

SIMILARITY_CHARS = 2_000
"""A hit's first this many characters are compared with the others' (its words' overlap)."""
RECALLS_FULL = 8
"""A memory given to sessions this many times or more has all of the recall share."""


def active(tuning: SearchTuning) -> bool:
    """Whether either part runs."""
    return tuning.mmr_lambda < 1.0 or tuning.importance_weight > 0.0


def widened(filters: SearchFilters, tuning: SearchTuning) -> tuple[SearchFilters, SearchTuning]:
    """The filters and tuning of the ranking that :func:`rerank` picks from: with diversity,
    a page twice as long (at most :data:`MAX_LIMIT`), the candidate pool kept the size the
    asked page has (so the ranking itself is the same)."""
    if tuning.mmr_lambda >= 1.0:
        return filters, tuning
    deep = min(MAX_LIMIT, 2 * filters.limit)
    same_pool = replace(tuning, min_candidates=tuning.pool(filters.limit), candidate_factor=1)
    return replace(filters, limit=deep), same_pool


def rerank(
    conn: psycopg.Connection[Any],
    hits: Sequence[SearchHit],
    limit: int,
    tuning: SearchTuning,
) -> tuple[SearchHit, ...]:
    """``hits`` (best first) with the importance prior and the diversity of ``tuning``, cut to
    ``limit``."""
    if not hits or not active(tuning):
        return tuple(hits[:limit])
    relevance = _relevance(hits)
    if tuning.importance_weight > 0.0:
        weights = importance(conn, [h.id for h in hits])
        if tuning.mmr_lambda >= 1.0 and not any(weights.values()):
            return tuple(hits[:limit])  # nothing to lift: the page as it is
        relevance = [
            r * (1.0 + tuning.importance_weight * weights.get(h.id, 0.0))
            for h, r in zip(hits, relevance, strict=True)
        ]
    order = sorted(range(len(hits)), key=lambda i: -relevance[i])
    if tuning.mmr_lambda < 1.0:
        order = _mmr(hits, relevance, order, limit, tuning.mmr_lambda)
    return tuple(hits[i] for i in order[:limit])


def _relevance(hits: Sequence[SearchHit]) -> list[float]:
    """Each hit's score over the first's when the page is in the order of its scores, else
    (a page fused with the actions arm by rank) a value falling with its place; either way
    the page's order, which nothing but the two parts may change."""
    scores = [h.why.score or 0.0 for h in hits]
    ordered = all(a >= b for a, b in pairwise(scores))
    if scores[0] > 0 and scores[-1] > 0 and ordered:
        return [s / scores[0] for s in scores]
    return [1.0 / (1.0 + n / 10.0) for n in range(len(hits))]


def _mmr(
    hits: Sequence[SearchHit], relevance: list[float], order: list[int], limit: int, lam: float
) -> list[int]:
    words = [content_words(h.message[:SIMILARITY_CHARS]) for h in hits]
    picked: list[int] = []
    left = list(order)
    while left and len(picked) < limit:
        best = max(
            left,
            key=lambda i: (
                lam * relevance[i]
                - (1.0 - lam) * max((jaccard(words[i], words[j]) for j in picked), default=0.0)
            ),
        )
        picked.append(best)
        left.remove(best)
    return picked


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """The share of the two word sets' union they hold both (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def importance(conn: psycopg.Connection[Any], ids: list[int]) -> dict[int, float]:
    """Each of ``ids``' importance (0-1, the module's docstring): pinned, remembered on
    purpose, given to sessions before."""
    rows = conn.execute(
        "SELECT m.id, m.is_pinned, m.source = 'manage_knowledge', coalesce(given.n, 0)"
        " FROM memory m LEFT JOIN (SELECT g.id, count(*) AS n FROM prompt_recalls r,"
        "  unnest(r.memory_ids) AS g(id) WHERE r.memory_ids && %(ids)s::bigint[]"
        "  AND g.id = ANY(%(ids)s::bigint[]) GROUP BY g.id) AS given ON given.id = m.id"
        " WHERE m.id = ANY(%(ids)s::bigint[])",
        {"ids": ids},
    ).fetchall()
    full = math.log1p(RECALLS_FULL)
    return {
        int(i): min(
            1.0,
            0.5 * bool(pinned)
            + (1 / 3) * bool(manual)
            + (1 / 6) * min(1.0, math.log1p(int(given)) / full),
        )
        for i, pinned, manual, given in rows
    }
