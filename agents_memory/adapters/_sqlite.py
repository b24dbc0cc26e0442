"""Reading a client's SQLite store without ever getting in the client's way.

The database is opened read-only through a ``file:…?mode=ro`` URI (no write, no journal of
ours, WAL readers welcome), with a short busy timeout and a few retries: a client mid-write
holds us for milliseconds, never the other way round. Whatever cannot be read now (locked,
a missing table after a client upgrade, a file that is not a database) comes back as a
:class:`~agents_memory.adapters.base.ParseIssue`, never as an exception.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from agents_memory.adapters.base import Adapter, ParseIssue, ReadMode
from agents_memory.errors import StoreUnreadable

T = TypeVar("T")

BUSY_TIMEOUT_MS = 500
RETRIES = 3
RETRY_PAUSE_SEC = 0.05


def wal_of(path: Path) -> Path:
    """The write-ahead log beside database ``path``."""
    return path.with_name(path.name + "-wal")


def database_of_wal(path: Path) -> Path | None:
    """The database a ``…-wal`` file belongs to (``None`` for other names)."""
    return path.with_name(path.name[: -len("-wal")]) if path.name.endswith("-wal") else None


def _decoder(repairs: list[ParseIssue]) -> Callable[[bytes], str]:
    """Text columns as UTF-8; one invalid byte costs one character (U+FFFD), not the read."""

    def decode(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            repairs.append(ParseIssue(0, "invalid UTF-8 replaced by U+FFFD", repaired=True))
            return raw.decode("utf-8", errors="replace")

    return decode


@contextmanager
def read_only(path: Path, repairs: list[ParseIssue] | None = None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path`` (``?mode=ro``, busy timeout); closed on exit.
    Text that is not valid UTF-8 is repaired and noted in ``repairs``."""
    uri = f"file:{quote(str(path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    conn.text_factory = _decoder(repairs if repairs is not None else [])
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = 1")
        yield conn
    finally:
        conn.close()


def query(
    path: Path, work: Callable[[sqlite3.Connection], T], repairs: list[ParseIssue] | None = None
) -> T:
    """``work`` run in one read transaction on ``path``, retried while the database is busy.
    Raises :class:`StoreUnreadable` when it cannot be read (locked past the retries, not a
    database, a table or column missing)."""
    last: sqlite3.Error | None = None
    for attempt in range(RETRIES):
        try:
            with read_only(path, repairs) as conn:
                conn.execute("BEGIN")
                try:
                    return work(conn)
                finally:
                    conn.rollback()
        except sqlite3.OperationalError as exc:
            last = exc
            if "locked" not in str(exc) and "busy" not in str(exc):
                break
            time.sleep(RETRY_PAUSE_SEC * (attempt + 1))
        except sqlite3.DatabaseError as exc:
            last = exc
            break
        except UnicodeDecodeError:  # sqlite's message quotes a damaged schema's bytes
            last = sqlite3.DatabaseError("malformed database schema (not UTF-8)")
            break
    raise StoreUnreadable(ParseIssue(0, f"cannot read {path.name}: {last}"))


def from_millis(value: object) -> datetime | None:
    return from_seconds(value / 1000) if isinstance(value, int | float) else None


def from_seconds(value: object) -> datetime | None:
    """A Unix time as a datetime; ``None`` for anything else, or one out of range."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def whole_number(value: object) -> int:
    """A column the client fills with a number (an id, a time), as an int; 0 when the row
    holds anything else (text, a blob, NULL, a float out of range)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    try:
        return int(value)
    except (OverflowError, ValueError):
        return 0


class SQLiteStoreAdapter(Adapter):
    """A client that keeps its sessions in one SQLite database (OpenCode, Hermes Agent): read
    with :data:`"database"` mode, its ``-wal`` a companion file (a write lands there first)."""

    def read_mode(self, path: Path) -> ReadMode:
        return "database"

    def companions(self, path: Path) -> tuple[Path, ...]:
        return (wal_of(path),)

    def transcript_for(self, path: Path, home: Path) -> Path | None:
        database = database_of_wal(path)
        if database is not None and self.owns(database, home):
            return database
        return super().transcript_for(path, home)
