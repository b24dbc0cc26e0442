"""Where the database is and how to reach it: embedded or external, connections, pools.

``open_database(settings)`` resolves the server (starting the embedded one when no URL is
configured), applies migrations and prepares the vector column for the configured embedding
model. Connections and pools register the pgvector types when the extension is installed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool

from agents_memory.config import Settings
from agents_memory.errors import DatabaseError
from agents_memory.store import migrate as migrations
from agents_memory.store import vectors
from agents_memory.store.embedded import EmbeddedServer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbeddingSpec:
    model: str
    dim: int


@dataclass(frozen=True, slots=True)
class Database:
    conninfo: str
    embedded: EmbeddedServer | None

    @property
    def description(self) -> str:
        """Where the data lives, without any password."""
        if self.embedded is not None:
            return f"embedded server in {self.embedded.pgdata}"
        params = conninfo_to_dict(self.conninfo)
        host = params.get("host") or "localhost"
        return f"{params.get('user') or '?'}@{host}:{params.get('port') or 5432}/" + str(
            params.get("dbname") or "?"
        )


def embedded_server(settings: Settings) -> EmbeddedServer:
    """The embedded server; on TCP too when ``EMBEDDED_LISTEN`` is set (every role then gives
    its password over TCP: see :mod:`agents_memory.store.embedded`)."""
    return EmbeddedServer(
        settings.data_dir / "pg",
        port=settings.embedded_port,
        listen_host=settings.embedded_listen or None,
    )


def external_conninfo(settings: Settings) -> str | None:
    """The configured external server, or ``None`` for the embedded default."""
    if settings.database_url:
        return settings.database_url
    if settings.db_host:
        return make_conninfo(
            host=settings.db_host,
            port=settings.db_port,
            user=settings.db_user,
            password=settings.db_pass,
            dbname=settings.db_name,
            sslmode=settings.db_ssl,
        )
    return None


def locate_database(settings: Settings, *, start: bool = True) -> Database:
    """Resolve the server; for the embedded one, start it (or attach) when ``start``."""
    url = external_conninfo(settings)
    if url is not None:
        return Database(url, None)
    server = embedded_server(settings)
    info = server.running()
    if info is None:
        if not start:
            raise DatabaseError(
                f"the embedded database in {server.pgdata} is not running "
                "(any mcp-agents-memory command starts it)"
            )
        info = server.start()
    return Database(info.conninfo(), server)


def open_database(
    settings: Settings,
    *,
    embedding: EmbeddingSpec | None = None,
    connect_timeout: float = 10.0,
) -> Database:
    """Locate (and start) the database, apply migrations, prepare vectors for ``embedding``."""
    db = locate_database(settings)
    with connect(db, connect_timeout=connect_timeout, autocommit=True) as conn:
        migrations.migrate(conn)
        if embedding is not None:
            vectors.ensure_embedding_column(conn, embedding.model, embedding.dim)
        else:
            status = vectors.vector_status(conn)
            # A server without pgvector (e.g. Debian's PostgreSQL 15): full-text only, and
            # no failed CREATE EXTENSION (nor its warning) on every command.
            if status.installed_version is None and status.available:
                vectors.try_install_extension(conn)
    return db


def register_types(conn: psycopg.Connection[Any]) -> None:
    """Register pgvector's types on ``conn`` when the extension is installed."""
    info = TypeInfo.fetch(conn, "vector")
    if info is not None:
        from pgvector.psycopg import register_vector

        register_vector(conn)
    if not conn.autocommit:
        conn.commit()


def connect(
    db: Database,
    *,
    connect_timeout: float = 10.0,
    autocommit: bool = False,
    statement_timeout_ms: int | None = None,
) -> psycopg.Connection[Any]:
    """A new connection; a failure becomes a one-line :class:`DatabaseError`."""
    extra: dict[str, Any] = {}
    if statement_timeout_ms is not None:
        extra["options"] = f"-c statement_timeout={int(statement_timeout_ms)}"
    try:
        conn = psycopg.connect(
            db.conninfo,
            autocommit=autocommit,
            connect_timeout=max(1, int(connect_timeout)),
            **extra,
        )
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to {db.description}: {_reason(exc)}") from exc
    register_types(conn)
    return conn


def create_pool(db: Database, settings: Settings, *, min_size: int = 1) -> ConnectionPool:
    """An open pool whose connections all know the pgvector types."""
    pool = ConnectionPool(
        db.conninfo,
        min_size=min_size,
        max_size=max(min_size, settings.db_pool_max),
        configure=register_types,
        open=False,
        name="agents-memory",
    )
    try:
        pool.open(wait=True, timeout=15)
    except Exception as exc:
        pool.close()
        raise DatabaseError(f"cannot connect to {db.description}: {_reason(exc)}") from exc
    return pool


def data_dir_size(path: Path) -> int:
    total = 0
    for item in path.rglob("*"):
        try:
            if item.is_file() and not item.is_symlink():
                total += item.stat().st_size
        except OSError:
            continue
    return total


def _reason(exc: BaseException) -> str:
    """The last line of a connection error: libpq ends with what to check, and its first line
    repeats the address that :attr:`Database.description` already names."""
    text = str(exc).strip()
    return text.splitlines()[-1].strip() if text else type(exc).__name__
