"""The one way an entry point opens the database: locate (or start, or migrate) the server,
connect, make sure the memory's owner exists, and learn whether vectors can be used.

Every process that talks to the database for the user (the capture daemon, backfill, the hook,
the brief socket, the MCP server, the CLI) starts here, so a new entry point cannot forget a
step or do them in another order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.database import Database, EmbeddingSpec
from agents_memory.store.memories import ensure_user
from agents_memory.store.vectors import vector_status


@dataclass(slots=True)
class Opened:
    """An open connection for one entry point and what every caller asks next."""

    db: Database
    conn: psycopg.Connection[Any]
    user_id: int
    has_vector: bool

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def locate(
    settings: Settings,
    *,
    start: bool = True,
    prepare: bool = False,
    embedding: EmbeddingSpec | None = None,
    connect_timeout: float = 10.0,
) -> Database:
    """The server: with ``prepare`` migrated and its vectors set up for ``embedding`` (what a
    process that may write does first); else only located (started when ``start``)."""
    if prepare:
        return database.open_database(
            settings, embedding=embedding, connect_timeout=connect_timeout
        )
    return database.locate_database(settings, start=start)


def open_user_connection(
    settings: Settings,
    *,
    db: Database | None = None,
    start: bool = True,
    prepare: bool = False,
    connect_timeout: float = 10.0,
    statement_timeout_ms: int | None = None,
) -> Opened:
    """Connect for ``settings.user_name`` (created on first use), committed and ready.

    ``db`` reuses a server already located; otherwise it is located as :func:`locate` does."""
    if db is None:
        db = locate(settings, start=start, prepare=prepare, connect_timeout=connect_timeout)
    conn = database.connect(
        db, connect_timeout=connect_timeout, statement_timeout_ms=statement_timeout_ms
    )
    try:
        user_id, has_vector = owner_and_vectors(conn, settings)
        conn.commit()
    except BaseException:
        conn.close()
        raise
    return Opened(db, conn, user_id, has_vector)


def owner_and_vectors(conn: psycopg.Connection[Any], settings: Settings) -> tuple[int, bool]:
    """The owner's user id (created on first use) and whether vectors can be stored and
    searched; for entry points that hold a pool rather than one connection."""
    return ensure_user(conn, settings.user_name), vector_status(conn).enabled
