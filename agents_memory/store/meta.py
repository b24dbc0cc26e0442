"""The ``meta`` table: small named values the processes keep (stamps, digests, markers)."""

from __future__ import annotations

from typing import Any

import psycopg


def get(conn: psycopg.Connection[Any], key: str) -> str | None:
    """The value kept under ``key``, or ``None``."""
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else str(row[0])


def put(conn: psycopg.Connection[Any], key: str, value: str) -> None:
    """Keep ``value`` under ``key`` (replacing what was there)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
        (key, value),
    )


def drop(conn: psycopg.Connection[Any], key: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = %s", (key,))
