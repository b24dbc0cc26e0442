"""The capture daemon's search: ``mcp-agents-memory search`` asks it over the brief socket
(:mod:`agents_memory.recall.socket_server`), so the command needs no embedding model of its
own and the daemon's connection is already open.

The request and the answer are :mod:`agents_memory.recall.search_wire`'s. The daemon runs the
same :func:`~agents_memory.recall.search.search_on` as the command's own fallback. It answers
only a caller whose :func:`~agents_memory.recall.search_wire.search_identity` is its own (same
database, user, device, model); anything else is refused and the caller searches itself.
The local model is loaded when the daemon starts (:meth:`SearchService.warm`) and kept
ready, so the first search after a start answers as fast as the next; a remote backend (an
HTTP client, nothing to load) is made on the first search with words and closed after
:data:`EMBEDDER_IDLE_SEC` without one.

Searches run concurrently (the socket serves on several threads), each on a connection of its
own (:class:`~agents_memory.recall.connections.Connections`); the one backend is shared, its
calls serialised by a lock that a per-prompt hook waits on only briefly
(:meth:`SearchService.prompt_vector`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from agents_memory.config import Settings
from agents_memory.errors import SearchArgumentError, SearchRefused, UnknownProjectError
from agents_memory.recall.connections import Connections
from agents_memory.recall.pace import SearchPace
from agents_memory.recall.search import (
    PendingVector,
    PreparedSearch,
    QueryVector,
    failed_note,
    held_query_vector,
    prepare_search,
    search_on,
)
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.search_wire import search_identity
from agents_memory.store.projects import resolve_project

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

EMBEDDER_IDLE_SEC = 600.0
"""A remote backend unused this long is closed (the next search with words makes it again)."""
PROMPT_EMBED_WAIT_SEC = 0.05
"""How long a per-prompt hook waits for the backend another request is using before it
searches full-text only (its whole budget is 300 ms)."""
WARM_QUERY = "warm up the query model"


class SearchService:
    """Searches for the daemon's socket, concurrently, on connections of their own (no
    statement timeout: a search may take longer than a brief), and the query vectors of the
    per-prompt hook."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.connections = Connections(settings, statement_timeout_ms=None)
        self._embedder: Embedder | None = None
        self._used_at = 0.0
        self.pace = SearchPace()
        """What its searches' first statements take: the threads of the next query."""
        self._lock = threading.Lock()  # the backend: made, used and closed by one at a time

    def answer(self, request: dict[str, Any]) -> str:
        """The answer (JSON) to one search request: its result, or ``{"refused": message}``
        for arguments the search cannot take (the caller would be refused the same);
        :class:`SearchRefused` when it is not one to answer here."""
        if request.get("identity") != search_identity(self.settings):
            raise SearchRefused("another database, user, device or model")
        try:
            now = datetime.fromisoformat(str(request.get("now")))
        except ValueError as exc:
            raise SearchRefused(str(exc)) from exc
        try:
            notes, result = self.search(
                SearchRequest.from_wire(request.get("search")),  # type: ignore[arg-type]
                now,
            )
        except (SearchArgumentError, UnknownProjectError) as exc:
            return json.dumps({"refused": str(exc)}, ensure_ascii=False)
        return json.dumps({"notes": notes, "result": result}, ensure_ascii=False)

    def search(self, request: SearchRequest, now: datetime) -> tuple[list[str], dict[str, Any]]:
        """The notes and the result (its JSON form) of ``request`` asked at ``now``, with the
        daemon's model and a connection of its own. Raises :class:`SearchArgumentError` or
        :class:`UnknownProjectError` for a request the search cannot take."""
        asked = prepare_search(request, device_name=self.settings.device_name, now=now)
        notes: list[str] = []
        # embedded while a connection is borrowed and the statements that need no vector run;
        # a project is checked first (a refused one costs no embedding)
        vector = None if asked.filters.p_tag else self._pending(asked)
        with self.connections.borrow() as (conn, _user_id):
            try:
                if asked.filters.p_tag:
                    resolve_project(conn, asked.filters.p_tag)
            except UnknownProjectError as exc:
                refused = exc  # raised once the connection is given back (it is sound)
            else:
                vector = self._pending(asked) if vector is None else vector
                result = search_on(conn, self.settings, asked, vector, on_note=notes.append)
                if isinstance(vector, PendingVector):
                    self.pace.observe(vector)
                return notes, result.as_dict()
        raise refused

    def _pending(self, asked: PreparedSearch) -> QueryVector | PendingVector:
        """The query's vectors, made on a thread of their own when there are words to embed
        with a backend (:meth:`_vector`)."""
        if asked.text is None or self.settings.embedding_backend == "none":
            return held_query_vector(self.settings, None, asked.text)
        return self.pace.start(
            self._embedder, asked.text, partial(self._vector, asked.text, asked.more)
        )

    def warm(self) -> None:
        """Load the local model and embed one query, so that the first search does not wait
        for either (nothing for a remote backend or none; a failure is the search's to say).
        :meth:`_vector` takes the backend's lock itself."""
        if self.settings.embedding_backend != "local":
            return
        self._vector(WARM_QUERY)

    def tick(self) -> None:
        """Close a remote backend idle for :data:`EMBEDDER_IDLE_SEC` (the local model stays;
        one in use is not idle: the daemon's loop never waits for it)."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            idle = time.monotonic() - self._used_at > EMBEDDER_IDLE_SEC
            if self._embedder is not None and idle and self.settings.embedding_backend != "local":
                self._close_embedder()
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            self._close_embedder()
        self.connections.close()

    def prompt_vector(self, text: str) -> QueryVector:
        """``text``'s vector for a per-prompt hook: full-text only when the backend is busy
        with another request for longer than :data:`PROMPT_EMBED_WAIT_SEC`."""
        return self._vector(text, wait=PROMPT_EMBED_WAIT_SEC)

    def _vector(
        self, text: str | None, more: tuple[str, ...] = (), *, wait: float = -1
    ) -> QueryVector:
        if text is None or self.settings.embedding_backend == "none":
            return held_query_vector(self.settings, None, text)
        if not self._lock.acquire(timeout=wait):
            return QueryVector(None, "the embedding backend is busy, full-text search only")
        try:
            self._used_at = time.monotonic()
            if self._embedder is None:
                try:
                    from agents_memory.embeddings import create_embedder

                    self._embedder = create_embedder(self.settings, queries=True)
                except Exception as exc:  # any backend failure degrades to full-text, by design
                    return QueryVector(None, failed_note(exc))
            return held_query_vector(self.settings, self._embedder, text, more)
        finally:
            self._lock.release()

    def _close_embedder(self) -> None:
        embedder, self._embedder = self._embedder, None
        if embedder is not None:
            with contextlib.suppress(Exception):
                embedder.close()
