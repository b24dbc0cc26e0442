"""``search_memories``: the newest rows without a query; else the hybrid statement, and the
ILIKE fallback when both of its arms are weak."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from agents_memory.store.search.confidence import assess
from agents_memory.store.search.fallback import ilike, recency
from agents_memory.store.search.hybrid import Hybrid, prepare_session, run_hybrid
from agents_memory.store.search.scope import TagFilter, resolve_p_tag
from agents_memory.store.search.terms import ParsedQuery, parse_query
from agents_memory.store.search.types import SearchFilters, SearchResult, SearchTuning


def search_memories(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    query: str | None,
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> SearchResult:
    """Search ``user_id``'s memories. Read-only; runs in its own transaction (a savepoint when
    the caller already has one open) because the HNSW settings are ``SET LOCAL``."""
    with conn.transaction():
        tag: TagFilter | None = None
        if filters.p_tag:
            tag = resolve_p_tag(conn, filters.p_tag)
            if tag is None:
                return _unknown_tag(filters.p_tag)
        if query is None or not query.strip():
            hits = recency(conn, user_id, filters, tag)
            return SearchResult(used="recency", hits=hits, p_tag=tag.name if tag else None)
        parsed = parse_query(query, tuning.date_slack_days)
        return _ranked(conn, user_id, parsed, query_vector, filters, tag, tuning)


def _unknown_tag(p_tag: str) -> SearchResult:
    return SearchResult(
        used="none",
        note=f"unknown project tag {p_tag!r}: nothing is tagged with it or with an alias of it",
    )


def _ranked(
    conn: psycopg.Connection[Any],
    user_id: int,
    query: ParsedQuery,
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
) -> SearchResult:
    """The hybrid statement's hits when either arm is strong (a full-text hit, or a cosine at
    the fallback threshold or above); else :func:`_weak`."""
    vector, note = prepare_session(conn, query_vector, filters, tuning)
    hybrid = run_hybrid(conn, user_id, query, vector, filters, tag, tuning)
    strong = hybrid.fts_hits > 0 or (
        hybrid.top_similarity is not None and hybrid.top_similarity >= tuning.fallback_threshold
    )
    if not strong:
        return _weak(conn, user_id, query, hybrid, note, filters, tag, tuning, vector is not None)
    assessed = assess(query, hybrid.hits, tuning)
    if assessed.weak:
        note = _join_notes(note, _weak_note(assessed.best, tuning))
    return SearchResult(
        used=hybrid.used,
        hits=assessed.hits,
        weak=assessed.weak,
        note=note,
        top_similarity=hybrid.top_similarity,
        p_tag=tag.name if tag else None,
        vector_used=vector is not None,
    )


def _weak(
    conn: psycopg.Connection[Any],
    user_id: int,
    query: ParsedQuery,
    hybrid: Hybrid,
    note: str | None,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
    vector_used: bool,
) -> SearchResult:
    """Both arms weak: the rows holding the query's words (ILIKE) instead, or the hybrid's
    weak matches when no row holds any of them."""
    fallback = ilike(conn, user_id, query.terms, filters, tag, tuning)
    weak = "weak match: " + (
        "no full-text match"
        if hybrid.top_similarity is None
        else f"no full-text match and the best similarity {hybrid.top_similarity:.3f} is"
        f" below {tuning.fallback_threshold}"
    )
    if not fallback and hybrid.hits:
        used, hits = hybrid.used, hybrid.hits
        why = f"{weak}; no word matches either: weak matches shown"
    else:
        used, hits = "ilike", fallback
        why = f"{weak}; matched by words instead"
    return SearchResult(
        used=used,
        hits=assess(query, hits, tuning).hits,
        weak=True,
        note=_join_notes(note, why),
        top_similarity=hybrid.top_similarity,
        threshold=tuning.fallback_threshold,
        p_tag=tag.name if tag else None,
        vector_used=vector_used,
    )


def _weak_note(best: float, tuning: SearchTuning) -> str:
    return (
        f"weak match: the best hit's confidence {best:.2f} is below {tuning.weak_below}; nothing"
        " in memory may answer this (try the exact identifier, error text or project name)"
    )


def _join_notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None
