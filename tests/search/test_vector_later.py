"""The query vector given as a callable (the MCP tool embeds the query while the statements that
need no vector are sent): asked once, after them, and the search finds what it finds with the
vector given first."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from .helpers import add, mem, near, run, unit


def _pool(conn: psycopg.Connection[Any]) -> np.ndarray[Any, Any]:
    rows = [
        mem("the billing worker retries failed invoices", session="s1"),
        mem("we switched the cache to redis last spring", session="s1"),
        mem("flaky login test fixed by waiting for the form", session="s2"),
        mem("deploy notes for the staging cluster", session="s2"),
    ]
    add(conn, rows, [near(1, 0.9, 10), near(2, 0.9, 11), near(3, 0.9, 12), near(4, 0.9, 13)])
    return unit((2, 1.0))


def test_a_vector_given_later_finds_what_the_vector_given_first_finds(
    conn: psycopg.Connection[Any],
) -> None:
    vector = _pool(conn)
    asked: list[int] = []

    def later() -> np.ndarray[Any, Any]:
        asked.append(1)
        return vector

    first = run(conn, "what did we choose for caching", vector)
    then = run(conn, "what did we choose for caching", later)
    assert asked == [1]
    assert then.vector_used and first.vector_used
    assert [h.id for h in then.hits] == [h.id for h in first.hits]
    assert [h.why.similarity for h in then.hits] == [h.why.similarity for h in first.hits]
    assert then.hits[0].message == "we switched the cache to redis last spring"


def test_a_vector_that_never_comes_leaves_the_search_full_text(
    conn: psycopg.Connection[Any],
) -> None:
    _pool(conn)
    none = run(conn, "billing invoices", None)
    later = run(conn, "billing invoices", lambda: None)
    assert (later.used, later.vector_used) == (none.used, none.vector_used) == ("fulltext", False)
    assert [h.id for h in later.hits] == [h.id for h in none.hits]
