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
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

from agents_memory.config import Settings
from agents_memory.errors import SearchArgumentError, SearchRefused, UnknownProjectError
from agents_memory.recall.search import (
    QueryVector,
    failed_note,
    held_query_vector,
    prepare_search,
    search_on,
)
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.search_wire import search_identity
from agents_memory.store import database
from agents_memory.store.projects import resolve_project

if TYPE_CHECKING:
    from agents_memory.embeddings import Embedder

log = logging.getLogger(__name__)

EMBEDDER_IDLE_SEC = 600.0
"""A remote backend unused this long is closed (the next search with words makes it again)."""
WARM_QUERY = "warm up the query model"


class SearchService:
    """Searches for the daemon's socket, one at a time, on a connection of their own (no
    statement timeout: a search may take longer than a brief)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._conn: psycopg.Connection[Any] | None = None
        self._embedder: Embedder | None = None
        self._used_at = 0.0
        self._lock = threading.Lock()  # the daemon's loop ticks while the socket's thread serves

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
            asked = prepare_search(
                SearchRequest.from_wire(request.get("search")),  # type: ignore[arg-type]
                device_name=self.settings.device_name,
                now=now,
            )
        except SearchArgumentError as exc:
            return json.dumps({"refused": str(exc)}, ensure_ascii=False)
        notes: list[str] = []
        with self._lock:
            conn = self._connection()
            try:
                if asked.filters.p_tag:
                    resolve_project(conn, asked.filters.p_tag)
                vector = self._vector(asked.text)
                result = search_on(conn, self.settings, asked, vector, on_note=notes.append)
            except UnknownProjectError as exc:
                return json.dumps({"refused": str(exc)}, ensure_ascii=False)
            finally:
                conn.rollback()
        return json.dumps({"notes": notes, "result": result.as_dict()}, ensure_ascii=False)

    def warm(self) -> None:
        """Load the local model and embed one query, so that the first search does not wait
        for either (nothing for a remote backend or none; a failure is the search's to say)."""
        if self.settings.embedding_backend != "local":
            return
        with self._lock:
            self._vector(WARM_QUERY)

    def tick(self) -> None:
        """Close a remote backend idle for :data:`EMBEDDER_IDLE_SEC` (the local model stays)."""
        with self._lock:
            idle = time.monotonic() - self._used_at > EMBEDDER_IDLE_SEC
            if self._embedder is not None and idle and self.settings.embedding_backend != "local":
                self._close_embedder()

    def close(self) -> None:
        with self._lock:
            self._close_embedder()
            self.drop()

    def drop(self) -> None:
        """Forget the connection (after a failure: the next search opens another)."""
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    def _vector(self, text: str | None) -> QueryVector:
        if text is None or self.settings.embedding_backend == "none":
            return held_query_vector(self.settings, None, text)
        self._used_at = time.monotonic()
        if self._embedder is None:
            try:
                from agents_memory.embeddings import create_embedder

                self._embedder = create_embedder(self.settings)
            except Exception as exc:  # any backend failure degrades to full-text, by design
                return QueryVector(None, failed_note(exc))
        return held_query_vector(self.settings, self._embedder, text)

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            db = database.locate_database(self.settings, start=False)
            self._conn = database.connect(db, connect_timeout=5)
        return self._conn

    def _close_embedder(self) -> None:
        embedder, self._embedder = self._embedder, None
        if embedder is not None:
            with contextlib.suppress(Exception):
                embedder.close()
