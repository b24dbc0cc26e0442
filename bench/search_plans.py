"""What the database does with a search: ``EXPLAIN (ANALYZE, BUFFERS)`` of the hybrid
statement, with the plan it would run (generic when it is planned once).

For the benches (``bench/search_latency.py``) and the tests that check which scans a search
makes; the product never explains its statements.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from agents_memory.store.search import SearchFilters, SearchTuning
from agents_memory.store.search.hybrid import (
    generic_plans,
    plan_once,
    prepare_session,
    search_statement,
)
from agents_memory.store.search.terms import parse_query


def explain_search(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    query: str,
    query_vector: np.ndarray[Any, Any] | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> str:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the hybrid statement a search would run, with the plan
    it would run (the ``p_tag`` filter is not resolved here)."""
    with conn.transaction():
        vector, _note = prepare_session(conn, query_vector, filters, tuning)
        parsed = parse_query(query, tuning.date_slack_days)
        statement, params = search_statement(user_id, parsed, vector, filters, None, tuning)
        if not plan_once(filters, tuning):
            plan = conn.execute(sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + statement, params)
            return "\n".join(str(r[0]) for r in plan.fetchall())
        return _explain_prepared(conn, statement, params)


def _explain_prepared(
    conn: psycopg.Connection[Any], statement: sql.Composed, params: dict[str, Any]
) -> str:
    """The statement prepared on the server under a name of its own and explained with the
    generic plan a search keeps."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    # ``%%`` is one ``%`` (in a literal); each ``%(name)s`` becomes a numbered parameter.
    text = re.sub(
        r"%%|%\((\w+)\)s",
        lambda m: "%" if m[0] == "%%" else number(m),
        statement.as_string(conn),
    )
    types = sql.SQL(", ").join(sql.SQL(_parameter_type(n, params[n])) for n in names)
    args = sql.SQL(", ").join(sql.Literal(params[n]) for n in names)
    name = sql.Identifier(f"agents_memory_explain_{uuid.uuid4().hex}")
    with generic_plans(conn):
        conn.execute(sql.SQL("PREPARE {} ({}) AS ").format(name, types) + sql.SQL(text))
        try:
            rows = conn.execute(
                sql.SQL("EXPLAIN (ANALYZE, BUFFERS) EXECUTE {} ({})").format(name, args)
            ).fetchall()
        finally:
            if conn.info.transaction_status != TransactionStatus.INERROR:
                conn.execute(sql.SQL("DEALLOCATE {}").format(name))
    return "\n".join(str(r[0]) for r in rows)


def _parameter_type(name: str, value: Any) -> str:
    """The type of the hybrid statement's parameter ``name`` for a server-side ``PREPARE``."""
    if name == "qvec":
        return "halfvec"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, list):
        if name == "date_terms":
            return "bigint[]"
        return "timestamptz[]" if name.startswith("d_") else "text[]"
    if isinstance(value, str):
        return "text"
    return "int8" if isinstance(value, int) else "float8"
