"""LLM usage per day and role (``llm_usage``): calls, tokens in/out, estimated cost, refusals.

Days are UTC dates so that every machine of a shared pool agrees on when a budget resets.
Each function is one statement; the caller owns the transaction (the LLM backend records on its
own autocommit connection, so spend is never rolled back with a job's unit of work).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import psycopg


@dataclass(frozen=True, slots=True)
class RoleUsage:
    role: str
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    est_cost: float = 0.0
    refused: int = 0
    """Calls not made because the budget was spent."""

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


def utc_today(now: datetime | None = None) -> date:
    return (now or datetime.now(UTC)).astimezone(UTC).date()


def record_usage(
    conn: psycopg.Connection[Any],
    role: str,
    *,
    day: date,
    calls: int = 1,
    tokens_in: int = 0,
    tokens_out: int = 0,
    est_cost: float = 0.0,
    refused: int = 0,
) -> None:
    """Add to the ``(day, role)`` counters, creating the row on first use."""
    conn.execute(
        "INSERT INTO llm_usage (day, role, calls, tokens_in, tokens_out, est_cost, refused)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (day, role) DO UPDATE SET"
        "  calls = llm_usage.calls + EXCLUDED.calls,"
        "  tokens_in = llm_usage.tokens_in + EXCLUDED.tokens_in,"
        "  tokens_out = llm_usage.tokens_out + EXCLUDED.tokens_out,"
        "  est_cost = llm_usage.est_cost + EXCLUDED.est_cost,"
        "  refused = llm_usage.refused + EXCLUDED.refused",
        (day, role, calls, tokens_in, tokens_out, est_cost, refused),
    )


def usage_on(conn: psycopg.Connection[Any], role: str, day: date) -> RoleUsage:
    """One role's counters for ``day`` (zeros when it made no call)."""
    row = conn.execute(
        "SELECT calls, tokens_in, tokens_out, est_cost, refused FROM llm_usage"
        " WHERE day = %s AND role = %s",
        (day, role),
    ).fetchone()
    if row is None:
        return RoleUsage(role)
    return RoleUsage(role, int(row[0]), int(row[1]), int(row[2]), float(row[3]), int(row[4]))


def usage_by_role(conn: psycopg.Connection[Any], day: date) -> list[RoleUsage]:
    """Every role's counters for ``day``, by role name."""
    rows = conn.execute(
        "SELECT role, calls, tokens_in, tokens_out, est_cost, refused FROM llm_usage"
        " WHERE day = %s ORDER BY role",
        (day,),
    ).fetchall()
    return [_usage(row) for row in rows]


def _usage(row: Any) -> RoleUsage:
    return RoleUsage(str(row[0]), int(row[1]), int(row[2]), int(row[3]), float(row[4]), int(row[5]))
