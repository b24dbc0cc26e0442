"""The pieces the hybrid statement is assembled from: named common table expressions (CTEs),
each arm's CTEs with the parameters they read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg import sql


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the statement (an arm, the neighbours, the fusion): its CTEs in order and
    the parameters they read."""

    ctes: tuple[sql.Composable, ...]
    params: dict[str, Any] = field(default_factory=dict)


def cte(name: str, body: sql.Composable, *, materialized: bool = True) -> sql.Composed:
    """``name AS [MATERIALIZED] (body)``. A materialized CTE is computed once and read as
    computed (the planner does not fold it into its readers)."""
    keyword = " AS MATERIALIZED (" if materialized else " AS ("
    return sql.SQL(name + keyword) + body + sql.SQL(")")


def empty_cte(name: str, columns: str) -> sql.Composed:
    """A CTE with ``columns`` (``"id bigint, rank bigint"``) and no rows, for an arm that does
    not run: the parts that read it stay the same."""
    nulls = ", ".join(f"NULL::{kind} AS {col}" for col, kind in _pairs(columns))
    return cte(name, sql.SQL(f"SELECT {nulls} WHERE false"), materialized=False)


def _pairs(columns: str) -> list[tuple[str, str]]:
    return [(c.split()[0], c.split()[1]) for c in columns.split(",")]
