"""How a Cold Path job commits: one unit of work per batch, a savepoint per row.

Rows claimed with ``FOR UPDATE SKIP LOCKED`` stay locked until their unit ends, whether the
worker's connection is in autocommit mode or not. A bad row rolls back only its savepoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from agents_memory.errors import first_line


@contextmanager
def unit_of_work(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Commit what the block did (and release its row locks) when it ends; roll back on error."""
    if conn.autocommit:
        with conn.transaction():
            yield
        return
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def describe(exc: BaseException) -> str:
    """One line for ``cold_error`` and the report: the exception's class and first line."""
    name = type(exc).__name__
    return f"{name}: {first_line(exc)}" if str(exc).strip() else name


def is_outage(exc: BaseException) -> bool:
    """A lost or unusable connection: the job stops and the worker deals with it."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
