"""``search_memories``: the newest rows without a query; else the hybrid statement, and the
ILIKE fallback when both of its arms are weak.

The statements that need no query vector (the transaction's settings, the actions arm, the
sessions' summary text and, while the caller is still embedding the query, the hybrid statement's
full-text arm, :mod:`~agents_memory.store.search.fulltext_ahead`) go to the server together in
one round trip before the rest of the hybrid statement (a vector given as a callable is asked for
only then)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import psycopg

from agents_memory.store.search import fulltext
from agents_memory.store.search.actions import (
    ActionTurns,
    filtered_turns,
    read_action_arm,
    send_action_arm,
)
from agents_memory.store.search.confidence import assess
from agents_memory.store.search.fallback import ilike, recency
from agents_memory.store.search.fulltext_ahead import FulltextAhead, read_fulltext, send_fulltext
from agents_memory.store.search.fuse_actions import fuse, with_actions
from agents_memory.store.search.hybrid import (
    Hybrid,
    generic_plans_sent,
    plan_once,
    run_hybrid,
    send_settings,
    vector_literal,
)
from agents_memory.store.search.rerank import rerank, widened
from agents_memory.store.search.scope import TagFilter, filter_sql, resolve_p_tag
from agents_memory.store.search.sessions import send_session_text, session_hits
from agents_memory.store.search.terms import ParsedQuery, parse_query
from agents_memory.store.search.types import SearchFilters, SearchHit, SearchResult, SearchTuning
from agents_memory.store.search.words import action_terms

VectorSource = np.ndarray[Any, Any] | Callable[[], np.ndarray[Any, Any] | None] | None
"""The query's vector, or a callable that gives it (``None``: full-text only), called once
the statements that need no vector are on their way: the caller embeds meanwhile."""


def search_memories(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    query: str | None,
    query_vector: VectorSource,
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
        shown = ActionTurns()
        if filters.by_action:
            shown = filtered_turns(conn, user_id, filters, filter_sql(filters, tag, user_id))
            if not shown.order:
                return _no_action(filters, tag)
            filters = replace(filters, only_ids=shown.order)
        if query is None or not query.strip():
            hits = with_actions(recency(conn, user_id, filters, tag), shown)
            return SearchResult(used="recency", hits=hits, p_tag=tag.name if tag else None)
        parsed = parse_query(query, tuning.date_slack_days)
        first = _first_round(conn, user_id, parsed, query_vector, filters, tag, tuning)
        vector = query_vector() if callable(query_vector) else query_vector
        literal = vector_literal(first.settings, vector)
        result = _ranked(
            conn, user_id, parsed, literal, filters, tag, tuning, (first.arm, shown), first.ahead
        )
        if filters.role is not None:
            return result
        by_text = [] if first.sessions is None else first.sessions.fetchall()
        found = session_hits(
            conn, user_id, parsed.terms, filters, tag, result.hits, by_text=by_text
        )
        return replace(result, sessions=found)


@dataclass(frozen=True, slots=True)
class _FirstRound:
    """What the statements that need no query vector found: the settings' cursor (read by
    :func:`~agents_memory.store.search.hybrid.vector_literal`), the actions arm, the
    sessions' summary text (its cursor; ``None``: not searched) and the full-text arm of the
    hybrid statement (``None``: it does not run)."""

    settings: psycopg.Cursor[Any]
    arm: ActionTurns
    sessions: psycopg.Cursor[dict[str, Any]] | None
    ahead: FulltextAhead | None = None


def _first_round(
    conn: psycopg.Connection[Any],
    user_id: int,
    parsed: ParsedQuery,
    vector: VectorSource,
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
) -> _FirstRound:
    """The transaction's settings, the actions arm, (without a role filter) the sessions'
    summary text and, while the vector is on its way (a callable), the hybrid statement's
    full-text arm (for the page the ranking picks from,
    :func:`~agents_memory.store.search.rerank.widened`), sent in one pipeline: one round
    trip. With the vector in hand, or none to come, the arm runs inside the hybrid statement:
    a round trip fewer."""
    hnsw = vector is not None
    where = filter_sql(filters, tag, user_id)
    terms = action_terms(parsed.text)
    deep, deep_tuning = widened(filters, tuning)
    lexical = (
        tuning.fulltext_ahead and callable(vector) and fulltext.runs(parsed.terms, deep_tuning)
    )
    once = plan_once(deep, deep_tuning)
    with _pipeline(conn):
        settings = send_settings(conn, hnsw, filters, tuning)
        ahead = None
        if lexical:
            with generic_plans_sent(conn) if once else nullcontext():
                ahead = send_fulltext(
                    conn,
                    parsed,
                    filter_sql(deep, tag, user_id),
                    deep_tuning,
                    limit=deep.limit,
                    with_vector=hnsw,
                    prepare=once,
                )
        sessions = None
        if filters.role is None:
            sessions = send_session_text(conn, user_id, parsed.terms, filters, tag)
        sent = send_action_arm(conn, user_id, terms, filters, where, tuning, prepare=once)
    given = None if ahead is None else read_fulltext(ahead, with_vector=hnsw)
    return _FirstRound(settings, read_action_arm(sent, terms), sessions, given)


@contextmanager
def _pipeline(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """A pipeline (the statements sent together, their rows read after), or none with a libpq
    older than 14 (then one round trip each, same rows)."""
    with conn.pipeline() if psycopg.Pipeline.is_supported() else nullcontext():
        yield


def _unknown_tag(p_tag: str) -> SearchResult:
    return SearchResult(
        used="none",
        note=f"unknown project tag {p_tag!r}: nothing is tagged with it or with an alias of it",
    )


def _no_action(filters: SearchFilters, tag: TagFilter | None) -> SearchResult:
    asked = [
        f"{name} {value!r}"
        for name, value in (("kind", filters.action_kind), ("file", filters.action_file))
        if value
    ]
    return SearchResult(
        used="none",
        note=f"no match: no action in scope with {' and '.join(asked)}",
        p_tag=tag.name if tag else None,
    )


def _ranked(
    conn: psycopg.Connection[Any],
    user_id: int,
    query: ParsedQuery,
    literal: tuple[str | None, str | None],
    filters: SearchFilters,
    tag: TagFilter | None,
    tuning: SearchTuning,
    actions: tuple[ActionTurns, ActionTurns],
    ahead: FulltextAhead | None = None,
) -> SearchResult:
    """The hybrid statement's hits (the query vector as a ``halfvec`` literal, or ``None`` and
    why not) fused with the actions arm's (``actions``: its turns, and a ``kind`` / ``file``
    filter's) when any arm is strong (a full-text hit, an action, or a cosine at the fallback
    threshold or above); else :func:`_weak`. ``ahead``: the full-text arm, already run."""
    arm, shown = actions
    vector, note = literal
    deep, deep_tuning = widened(filters, tuning)  # the page rerank picks from
    hybrid = run_hybrid(conn, user_id, query, vector, deep, tag, deep_tuning, ahead)
    strong = (
        hybrid.fts_hits > 0
        or (
            hybrid.top_similarity is not None and hybrid.top_similarity >= tuning.fallback_threshold
        )
        or bool(arm.order and tuning.action_fusion != "off")
    )
    if not strong:
        weak = _weak(conn, user_id, query, hybrid, note, filters, tag, tuning, vector is not None)
        return replace(weak, hits=with_actions(weak.hits, shown))
    fused = fuse(
        conn,
        user_id,
        hybrid.hits,
        arm,
        shown,
        limit=deep.limit,
        tuning=tuning,
        context=not filters.by_action,
    )
    fused = rerank(conn, fused, filters.limit, tuning)
    assessed = assess(
        query, fused, tuning, scoped=filters.git_root is not None, rarity=hybrid.rarity
    )
    hits = assessed.hits
    if assessed.weak:
        hits = hits[: tuning.weak_shown]
        note = _join_notes(
            note, _no_match(f"the best hit's confidence is {assessed.best:.3f}", hits, tuning)
        )
    return SearchResult(
        used=hybrid.used,
        hits=hits,
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
    scoped = filters.git_root is not None
    far = (
        "no full-text match"
        if hybrid.top_similarity is None
        else f"no full-text match and the closest in meaning is far (similarity"
        f" {hybrid.top_similarity:.3f}, close is {tuning.fallback_threshold} or more)"
    )
    if not fallback and hybrid.hits:
        used = hybrid.used
        rated = assess(query, hybrid.hits, tuning, scoped=scoped, rarity=hybrid.rarity)
        hits = rated.hits[: tuning.weak_shown]
        why = _no_match(f"{far}, and no stored text holds these words", hits, tuning)
    else:
        rated = assess(query, fallback, tuning, scoped=scoped, rarity=hybrid.rarity)
        used, hits = "ilike", rated.hits
        why = f"weak match: {far}; matched by words instead"
    return SearchResult(
        used=used,
        hits=hits,
        weak=True,
        note=_join_notes(note, why),
        top_similarity=hybrid.top_similarity,
        threshold=tuning.fallback_threshold,
        p_tag=tag.name if tag else None,
        vector_used=vector_used,
    )


def _no_match(why: str, shown: Sequence[SearchHit], tuning: SearchTuning) -> str:
    """The one wording of a search with no good match (the CLI, the MCP tool and the console
    all show it): "no match", why, and what the few rows shown are."""
    nearest = f"the {len(shown)} nearest are shown, each weak" if shown else "nothing is shown"
    return (
        f"no match: nothing in memory answers this well ({why}; a match has a confidence of"
        f" {tuning.weak_below:.3f} or more); {nearest}. Try the exact identifier, error text"
        " or project name"
    )


def _join_notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None
