"""Search as its callers run it: the one service behind ``mcp-agents-memory search`` and the MCP
tool ``search_memory``.

Both callers only map their arguments and format the result. Here: the request (the words, the
date range parsed relative to the caller's clock, the filters with the platform ``*`` meaning
every one), the query's vector with the full-text fallback and its reason (no backend, a backend
that fails, vectors stored by another model), the ranking knobs from the settings, and the
store's hybrid search (:mod:`agents_memory.store.search`), which resolves a project tag through
its aliases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from agents_memory.adapters import platform_filter
from agents_memory.config import Settings
from agents_memory.daterange import DateRange, parse_date_range
from agents_memory.errors import AdapterError, SearchArgumentError, first_line
from agents_memory.store.search import (
    SearchFilters,
    SearchResult,
    SearchTuning,
    find_user_id,
    search_memories,
)

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search as asked: the words (``None``: newest first) and the filters."""

    text: str | None
    filters: SearchFilters


def search_request(
    *,
    query: str | None,
    p_tag: str | None,
    date_range: str | None,
    role: str | None,
    agent_platform: str | None,
    device_scope: str,
    limit: int,
    include_archived: bool,
    device_name: str | None,
    now: datetime,
) -> SearchRequest:
    """The request for the caller's arguments; ``now`` (aware) anchors relative date ranges.
    Raises :class:`SearchArgumentError` for an argument the search cannot take."""
    if role not in (None, "user", "assistant"):
        raise SearchArgumentError(f"role must be 'user' or 'assistant', got {role!r}")
    if device_scope not in ("global", "local"):
        raise SearchArgumentError(f"device_scope must be 'global' or 'local', got {device_scope!r}")
    dates = parse_dates(date_range, now)
    platform = search_platform(agent_platform)
    try:
        filters = SearchFilters(
            p_tag=p_tag or None,
            date_range=dates,
            role="user" if role == "user" else "assistant" if role == "assistant" else None,
            agent_platform=platform,
            device_scope="local" if device_scope == "local" else "global",
            device_name=device_name,
            include_archived=include_archived,
            limit=limit,
        )
    except ValueError as exc:
        raise SearchArgumentError(str(exc)) from exc
    text = query.strip() if query and query.strip() else None
    return SearchRequest(text, filters)


def search_platform(value: str | None) -> str | None:
    """The platform filter ``value`` names (``None``, empty or ``*``: every one), short names
    resolved by the adapters' registry; :class:`SearchArgumentError` listing the names
    accepted for any other."""
    try:
        return platform_filter(value)
    except AdapterError as exc:
        raise SearchArgumentError(str(exc), argument="agent_platform", value=value or "") from exc


def parse_dates(text: str | None, now: datetime) -> DateRange | None:
    """The period ``text`` names (``None`` for none); :class:`SearchArgumentError` naming the
    accepted forms when it is not one of them."""
    if not text or not text.strip():
        return None
    try:
        return parse_date_range(text.strip(), now)
    except ValueError as exc:
        raise SearchArgumentError(str(exc), argument="date_range", value=text) from exc


def search_tuning(settings: Settings) -> SearchTuning:
    """The ranking knobs the settings carry; the rest are the measured defaults."""
    return SearchTuning(
        recency_halflife_days=settings.search_recency_halflife_days,
        fallback_threshold=settings.search_fallback_threshold,
    )


def search_user(
    conn: psycopg.Connection[Any],
    user_id: int,
    request: SearchRequest,
    query_vector: np.ndarray[Any, Any] | None,
    settings: Settings,
) -> SearchResult:
    """``user_id``'s search, the vector arm with ``query_vector`` when there is one."""
    return search_memories(
        conn,
        user_id,
        query=request.text,
        query_vector=query_vector,
        filters=request.filters,
        tuning=search_tuning(settings),
    )


# --- the query's vector, or why the search runs full-text only ---------------------------------


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's vector, or ``None`` and (when worth telling) why: the search then runs
    full-text only."""

    vector: np.ndarray[Any, Any] | None
    note: str | None = None


def embed_query(embedder: Embedder | None, text: str | None) -> QueryVector:
    """``text``'s vector from ``embedder`` (none without either). Any failure of the backend
    degrades the search to full-text, by design, with the reason in the note."""
    if embedder is None or text is None:
        return QueryVector(None)
    try:
        vectors: np.ndarray[Any, Any] = np.asarray(embedder.embed_queries([text]), np.float32)
    except Exception as exc:  # any backend failure degrades to full-text, by design
        return QueryVector(None, failed_note(exc))
    return QueryVector(np.asarray(vectors[0]))


def backend_query_vector(settings: Settings, text: str | None) -> QueryVector:
    """``text``'s vector from a backend made for this one query and closed after (the
    command line's way when no daemon answers; a server keeps its backend)."""
    if text is None or settings.embedding_backend == "none":
        return held_query_vector(settings, None, text)
    try:
        from agents_memory.embeddings import QUERY_THREADS, create_embedder

        embedder = create_embedder(settings, threads=QUERY_THREADS)
        if embedder is None:
            return held_query_vector(settings, None, text)
        with embedder:
            return embed_query(embedder, text)
    except Exception as exc:  # any backend failure degrades to full-text, by design
        return QueryVector(None, failed_note(exc))


def held_query_vector(
    settings: Settings, embedder: Embedder | None, text: str | None
) -> QueryVector:
    """``text``'s vector from a backend the caller holds (``None``: none could be made),
    with the reason when the search must run full-text only."""
    if text is None:
        return QueryVector(None)
    if settings.embedding_backend == "none":
        return QueryVector(None, "EMBEDDING_BACKEND=none, full-text search only")
    if embedder is None:
        return QueryVector(None, "no embedding backend available, full-text search only")
    return embed_query(embedder, text)


def failed_note(exc: Exception) -> str:
    """Why the search runs full-text only when the backend failed."""
    return f"embedding the query failed ({first_line(exc)}), full-text search only"


def stored_model_note(conn: psycopg.Connection[Any], settings: Settings) -> str | None:
    """Why the stored vectors cannot be compared with the query's (another model made them),
    or ``None`` when they can."""
    from agents_memory.embeddings import embedding_spec
    from agents_memory.store.vectors import vector_status

    spec = embedding_spec(settings)
    stored = vector_status(conn).model
    if spec is None or stored in (None, spec.model):
        return None
    return (
        f"stored vectors come from {stored}, the configured model is {spec.model} "
        "(run `mcp-agents-memory reembed`); full-text search only"
    )


def search_on(
    conn: psycopg.Connection[Any],
    settings: Settings,
    request: SearchRequest,
    vector: QueryVector,
    *,
    on_note: Callable[[str], None],
) -> SearchResult:
    """The search of the settings' user on ``conn`` with ``vector`` (dropped when the stored
    vectors come from another model). Each reason for a full-text-only search goes to
    ``on_note``. The one search of the command line and of the capture daemon's socket."""
    if vector.note:
        on_note(vector.note)
    user_id = find_user_id(conn, settings.user_name)
    if user_id is None:
        return SearchResult(used="none", note=f"no memories for user {settings.user_name!r}")
    query_vector = vector.vector
    if query_vector is not None:
        mismatch = stored_model_note(conn, settings)
        if mismatch:
            on_note(mismatch)
            query_vector = None
    return search_user(conn, user_id, request, query_vector, settings)


def search_database(
    settings: Settings, request: SearchRequest, *, on_note: Callable[[str], None]
) -> SearchResult:
    """The command line's search when no daemon answers: embed the words when a backend can
    (the backend is made only when there are words to embed), open the database, search."""
    from agents_memory.store import database

    vector = backend_query_vector(settings, request.text)
    db = database.open_database(settings)
    with database.connect(db) as conn:
        return search_on(conn, settings, request, vector, on_note=on_note)
