"""A few database connections for the capture daemon's socket workers.

The daemon answers hooks and searches on several threads at once
(:mod:`agents_memory.recall.socket_server`); each request borrows a connection of its kind
(briefs and prompts with a statement timeout of their hook's budget, searches without), uses it
alone, and gives it back with its transaction committed (each request commits its own writes;
the rest is reads). A connection that failed is closed, never given back; the next borrower
opens another. At most :attr:`Connections.keep` idle connections are kept.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.memories import ensure_user

KEEP = 2
"""Idle connections kept per kind (the workers bound how many are in use at once)."""


class Connections:
    """Connections to the configured database for ``settings.user_name``, borrowed one
    request at a time (:meth:`borrow`)."""

    def __init__(
        self, settings: Settings, *, statement_timeout_ms: int | None, keep: int = KEEP
    ) -> None:
        self.settings = settings
        self.statement_timeout_ms = statement_timeout_ms
        self.keep = keep
        self._idle: list[psycopg.Connection[Any]] = []
        self._user_id: int | None = None
        self._lock = threading.Lock()
        self._closed = False

    @contextlib.contextmanager
    def borrow(self) -> Iterator[tuple[psycopg.Connection[Any], int]]:
        """A connection of this kind and the owner's user id; its transaction ended with a
        commit and the connection kept after use, closed after a failure (which propagates).
        Every request commits what it means to write itself, so what is left is reads; ended
        with ROLLBACK, psycopg would deallocate the connection's prepared statements and the
        next request would plan its statements afresh (8 ms a search on the coding pool)."""
        conn = self._take() or self._connect()
        try:
            user_id = self._owner(conn)
            yield conn, user_id
            conn.commit()
        except BaseException:
            _close(conn)
            raise
        self._give_back(conn)

    def close(self) -> None:
        """Close the idle connections; one still borrowed is closed when it comes back."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._closed = True
        for conn in idle:
            _close(conn)

    def _take(self) -> psycopg.Connection[Any] | None:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed:
                    return conn
        return None

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self.keep and not conn.closed:
                self._idle.append(conn)
                return
        _close(conn)

    def _connect(self) -> psycopg.Connection[Any]:
        db = database.locate_database(self.settings, start=False)
        return database.connect(
            db, connect_timeout=5, statement_timeout_ms=self.statement_timeout_ms
        )

    def _owner(self, conn: psycopg.Connection[Any]) -> int:
        if self._user_id is None:
            user_id = ensure_user(conn, self.settings.user_name)
            conn.commit()
            self._user_id = user_id
        return self._user_id


def _close(conn: psycopg.Connection[Any]) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.close()
