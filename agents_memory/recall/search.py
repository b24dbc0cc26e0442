"""Search as its callers run it: the one service behind ``mcp-agents-memory search`` and the MCP
tool ``search_memory``.

Both callers only build the one :class:`~agents_memory.recall.search_request.SearchRequest` and
format the result. Here: the request prepared (its dates read relative to the caller's clock,
its project checked against the project tags), the query's vector with the full-text fallback
and its reason (no backend, a backend that fails, vectors stored by another model), the ranking
knobs from the settings, and the store's hybrid search (:mod:`agents_memory.store.search`),
which resolves a project tag through its aliases.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from agents_memory.config import Settings
from agents_memory.errors import SearchArgumentError, first_line
from agents_memory.recall.search_request import SearchRequest
from agents_memory.store import team
from agents_memory.store.projects import resolve_project
from agents_memory.store.search import (
    SearchFilters,
    SearchResult,
    SearchTuning,
    find_user_id,
    search_memories,
)
from agents_memory.store.search.fusion import fuse_results

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder
    from agents_memory.store.search.memories import VectorSource


@dataclass(frozen=True, slots=True)
class PreparedSearch:
    """A search ready to run: the words (``None``: newest first), the filters and the other
    phrasings of the same question (fused with the first, :func:`search_user`)."""

    text: str | None
    filters: SearchFilters
    more: tuple[str, ...] = ()


def prepare_search(
    request: SearchRequest, *, device_name: str | None, now: datetime
) -> PreparedSearch:
    """The filters of ``request`` (:mod:`agents_memory.recall.search_request`, the one request
    every caller builds); ``now`` (aware) anchors its dates. Raises
    :class:`SearchArgumentError` for an argument the search cannot take."""
    dates, moment = request.period(now), request.moment(now)
    try:
        filters = SearchFilters(
            p_tag=request.project,
            date_range=dates,
            role=request.role,
            agent_platform=request.platform,
            device_scope=request.device_scope,
            device_name=device_name,
            include_archived=request.include_archived,
            limit=request.limit,
            as_of=moment,
            action_kind=request.kind,
            action_file=request.file,
        )
    except ValueError as exc:
        raise SearchArgumentError(str(exc)) from exc
    phrasings = request.phrasings
    return PreparedSearch(phrasings[0] if phrasings else None, filters, phrasings[1:])


def search_tuning(settings: Settings) -> SearchTuning:
    """The ranking knobs the settings carry; the rest are the measured defaults."""
    return SearchTuning(
        recency_halflife_days=settings.search_recency_halflife_days,
        fallback_threshold=settings.search_fallback_threshold,
    )


def search_user(
    conn: psycopg.Connection[Any],
    user_id: int,
    request: PreparedSearch,
    query_vector: VectorSource,
    settings: Settings,
    more_vectors: Sequence[VectorSource] = (),
    *,
    arm_ahead: bool = True,
) -> SearchResult:
    """``user_id``'s search, the vector arm with ``query_vector`` when there is one (a
    callable, :meth:`PendingVector.vector`, is asked once the statements that need no vector
    are sent: the query is embedded meanwhile). A project
    that is no tag is refused (:class:`~agents_memory.errors.UnknownProjectError`, naming the
    close ones), not searched for nothing. The request's other phrasings (``more``, their
    vectors or callables in ``more_vectors`` when given) are searched too and the rankings fused
    (:func:`~agents_memory.store.search.fusion.fuse_results`). ``arm_ahead`` false: the
    full-text arm waits for the vector, inside the hybrid statement (the query being embedded
    left the statements no core, :attr:`PendingVector.arm_ahead`)."""
    if request.filters.p_tag:
        resolve_project(conn, request.filters.p_tag)
    tuning = search_tuning(settings)
    if not arm_ahead:
        tuning = replace(tuning, fulltext_ahead=False)
    filters = request.filters
    shared = team.shared_view(conn, user_id)
    if shared:
        filters = replace(filters, shared=shared)
    phrasings: list[tuple[str | None, VectorSource]] = [(request.text, query_vector)]
    vectors = list(more_vectors)
    for n, text in enumerate(request.more):
        phrasings.append((text, vectors[n] if n < len(vectors) else None))
    results = [
        search_memories(
            conn, user_id, query=text, query_vector=vector, filters=filters, tuning=tuning
        )
        for text, vector in phrasings
    ]
    result = fuse_results(results, request.filters.limit)
    if not shared:
        return result
    owners = team.teammates_of(conn, [h.id for h in result.hits], user_id)
    hits = tuple(replace(h, by=owners.get(h.id)) for h in result.hits)
    return replace(result, hits=hits)


# --- the query's vector, or why the search runs full-text only ---------------------------------


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's vector, or ``None`` and (when worth telling) why: the search then runs
    full-text only."""

    vector: np.ndarray[Any, Any] | None
    note: str | None = None
    more: tuple[np.ndarray[Any, Any], ...] = ()
    """The vectors of the search's other phrasings (:attr:`PreparedSearch.more`), in order."""


def embed_query(
    embedder: Embedder | None, text: str | None, more: Sequence[str] = ()
) -> QueryVector:
    """``text``'s vector (and those of the phrasings ``more``, in one batch) from
    ``embedder`` (none without either). Any failure of the backend degrades the search to
    full-text, by design, with the reason in the note."""
    if embedder is None or text is None:
        return QueryVector(None)
    try:
        vectors: np.ndarray[Any, Any] = np.asarray(
            embedder.embed_queries([text, *more]), np.float32
        )
    except Exception as exc:  # any backend failure degrades to full-text, by design
        return QueryVector(None, failed_note(exc))
    return QueryVector(np.asarray(vectors[0]), more=tuple(np.asarray(v) for v in vectors[1:]))


class PendingVector:
    """The query's vector made by ``embed`` (e.g. :func:`embed_query`) on a thread of its own,
    so a search can send what needs no vector meanwhile: :meth:`result` waits for it. An
    ``embed`` that raises degrades the search to full-text, like a failing backend. It keeps
    when it started, when the vector was first asked for (the search's statements that need
    none ran between, beside the query on ``threads`` threads; ``None``: not known) and when it
    was ready (:class:`~agents_memory.recall.pace.SearchPace` learns from them).
    ``arm_ahead``: the query leaves the search's statements a core, so its full-text arm runs
    beside the query; when it takes every core, the arm waits for the vector
    (:func:`search_user`)."""

    def __init__(
        self,
        embed: Callable[[], QueryVector],
        *,
        threads: int | None = None,
        arm_ahead: bool = True,
    ) -> None:
        self._result = QueryVector(None)
        self.threads, self.arm_ahead = threads, arm_ahead
        self.started = time.monotonic()
        self.asked: float | None = None
        self.ready: float | None = None
        self._thread = threading.Thread(
            target=self._embed, args=(embed,), name="query-embed", daemon=True
        )
        self._thread.start()

    def _embed(self, embed: Callable[[], QueryVector]) -> None:
        try:
            self._result = embed()
        except Exception as exc:  # any backend failure degrades to full-text, by design
            self._result = QueryVector(None, failed_note(exc))
        finally:
            self.ready = time.monotonic()

    def result(self) -> QueryVector:
        """The vectors (or why there are none), once made."""
        if self.asked is None:
            self.asked = time.monotonic()
        self._thread.join()
        return self._result

    def vector(self) -> np.ndarray[Any, Any] | None:
        """The query's vector (``None``: full-text only, :attr:`note` says why)."""
        return self.result().vector

    @property
    def note(self) -> str | None:
        """Why the search runs full-text only, once :meth:`vector` returned."""
        return self._result.note


def backend_query_vector(
    settings: Settings, text: str | None, more: Sequence[str] = ()
) -> QueryVector:
    """``text``'s vector from a backend made for this one query and closed after (the
    command line's way when no daemon answers; a server keeps its backend)."""
    if text is None or settings.embedding_backend == "none":
        return held_query_vector(settings, None, text)
    try:
        from agents_memory.embeddings import create_embedder

        embedder = create_embedder(settings, queries=True)
        if embedder is None:
            return held_query_vector(settings, None, text)
        with embedder:
            return embed_query(embedder, text, more)
    except Exception as exc:  # any backend failure degrades to full-text, by design
        return QueryVector(None, failed_note(exc))


def held_query_vector(
    settings: Settings, embedder: Embedder | None, text: str | None, more: Sequence[str] = ()
) -> QueryVector:
    """``text``'s vector from a backend the caller holds (``None``: none could be made),
    with the reason when the search must run full-text only."""
    if text is None:
        return QueryVector(None)
    if settings.embedding_backend == "none":
        return QueryVector(None, "EMBEDDING_BACKEND=none, full-text search only")
    if embedder is None:
        return QueryVector(None, "no embedding backend available, full-text search only")
    return embed_query(embedder, text, more)


def failed_note(exc: Exception) -> str:
    """Why the search runs full-text only when the backend failed."""
    return f"embedding the query failed ({first_line(exc)}), full-text search only"


def stored_model_note(conn: psycopg.Connection[Any], settings: Settings) -> str | None:
    """Why the stored vectors cannot be compared with the query's (another model made them),
    or ``None`` when they can."""
    from agents_memory.embeddings import embedding_spec
    from agents_memory.store.vectors import stored_model

    spec = embedding_spec(settings)
    stored = stored_model(conn)
    if spec is None or stored in (None, spec.model):
        return None
    return (
        f"stored vectors come from {stored}, the configured model is {spec.model} "
        "(run `mcp-agents-memory reembed`); full-text search only"
    )


def search_on(
    conn: psycopg.Connection[Any],
    settings: Settings,
    request: PreparedSearch,
    vector: QueryVector | PendingVector,
    *,
    on_note: Callable[[str], None],
) -> SearchResult:
    """The search of the settings' user on ``conn`` with ``vector`` (dropped when the stored
    vectors come from another model). A :class:`PendingVector` is waited for only once the
    statements that need no vector are sent (the query is embedded meanwhile). Each reason
    for a full-text-only search goes to ``on_note``. The one search of the command line and of
    the capture daemon's socket."""
    user_id = find_user_id(conn, settings.user_name)
    arrival = _Arrival(conn, settings, vector, on_note)
    if user_id is None:
        arrival.result()  # its note is said all the same
        return SearchResult(used="none", note=f"no memories for user {settings.user_name!r}")
    if isinstance(vector, QueryVector):
        given = arrival.result()
        return search_user(conn, user_id, request, given.vector, settings, given.more)
    more = [partial(arrival.more, n) for n in range(len(request.more))]
    return search_user(
        conn, user_id, request, arrival.vector, settings, more, arm_ahead=vector.arm_ahead
    )


class _Arrival:
    """The query's vectors as the search may use them: none when the stored vectors come from
    another model (asked before the vector arrives, while it is being made), each reason for
    none said once, when the vectors are first asked for."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        settings: Settings,
        vector: QueryVector | PendingVector,
        on_note: Callable[[str], None],
    ) -> None:
        self._vector, self._on_note = vector, on_note
        self._given: QueryVector | None = None
        self._mismatch: str | None = None
        if isinstance(vector, PendingVector) or vector.vector is not None:
            self._mismatch = stored_model_note(conn, settings)

    def result(self) -> QueryVector:
        if self._given is None:
            given = self._vector
            if isinstance(given, PendingVector):
                given = given.result()
            if given.note:
                self._on_note(given.note)
            if given.vector is not None and self._mismatch:
                self._on_note(self._mismatch)
                given = QueryVector(None)
            self._given = given
        return self._given

    def vector(self) -> np.ndarray[Any, Any] | None:
        return self.result().vector

    def more(self, n: int) -> np.ndarray[Any, Any] | None:
        more = self.result().more
        return more[n] if n < len(more) else None


def search_database(
    settings: Settings, request: PreparedSearch, *, on_note: Callable[[str], None]
) -> SearchResult:
    """The command line's search when no daemon answers: the words embedded when a backend
    can, on a thread of their own (:func:`embedding_ahead`) while the database is opened (the
    embedded server started if it is not running) and the statements that need no vector run;
    a project that is no tag is refused before any model loads."""
    from agents_memory.store import database

    vector = None if request.filters.p_tag else embedding_ahead(settings, request)
    try:
        db = database.open_database(settings)
        with database.connect(db) as conn:
            if request.filters.p_tag:
                resolve_project(conn, request.filters.p_tag)
            if vector is None:
                vector = embedding_ahead(settings, request)
            return search_on(conn, settings, request, vector, on_note=on_note)
    finally:
        if isinstance(vector, PendingVector):
            vector.result()  # a model is never left loading behind the command's exit


def embedding_ahead(settings: Settings, request: PreparedSearch) -> QueryVector | PendingVector:
    """The request's vectors from a backend made for it (:func:`backend_query_vector`), made
    on a thread of their own when there are words to embed; else why there are none."""
    if request.text is None or settings.embedding_backend == "none":
        return backend_query_vector(settings, request.text, request.more)
    return PendingVector(partial(backend_query_vector, settings, request.text, request.more))
