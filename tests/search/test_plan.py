"""The hybrid statement is planned once per connection for every query of the same shape (a
prepared statement with a generic plan), and finds exactly what a plan made per query finds."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from agents_memory.daterange import DateRange
from agents_memory.store.search import SearchFilters, SearchTuning
from bench.search_plans import explain_search

from .helpers import NOW, add, mem, run, unit

_HYBRID = "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s"
_SAMPLED = SearchTuning(stats_rows=50, rare_rows=20, rare_rows_lexical=20)
"""A scope bigger than the sample: the rare-word scans run as well."""


def _plans(conn: psycopg.Connection[Any], marker: str = "%memory_common_lexemes%") -> list[Any]:
    return conn.execute(_HYBRID, (marker,)).fetchall()


_OTHERS = ("WITH w AS MATERIALIZED%", "WITH q AS MATERIALIZED%")
"""The actions arm's and the sessions' statements (kept prepared too)."""


def _search_plans(conn: psycopg.Connection[Any]) -> list[Any]:
    """The hybrid statement's plans (and those of its full-text arm run ahead)."""
    return conn.execute(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
        " WHERE statement LIKE 'WITH%%' AND NOT statement LIKE ANY(%s)",
        (list(_OTHERS),),
    ).fetchall()


def test_queries_of_the_same_shape_share_one_generic_plan(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("zeppelin hangar inspection"), mem("nightly deploy log"), mem("lunch plans")])
    for query in ("zeppelin hangar", "nightly deploy", "lunch plans", "hangar lunch"):
        assert run(conn, query).hits
    assert _plans(conn) == [(4, 0)]


def test_each_user_gets_a_plan_made_for_its_own_rows(conn: psycopg.Connection[Any]) -> None:
    """The user and the filters are written into the statement: a plan made for a user with
    a handful of rows is never run for one with a million."""
    add(conn, [mem("zeppelin hangar inspection")], user="small")
    add(conn, [mem(f"zeppelin drill {i}") for i in range(40)], user="big")
    run(conn, "zeppelin hangar", user="small")
    run(conn, "zeppelin hangar", user="big")
    run(conn, "zeppelin drill", user="big")
    assert sorted(_plans(conn)) == [(1, 0), (2, 0)]


def test_the_plan_cache_setting_is_put_back(conn: psycopg.Connection[Any]) -> None:
    add(conn, [mem("zeppelin hangar inspection")])
    with conn.transaction():
        conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        assert run(conn, "zeppelin", unit((0, 1.0))).hits
        row = conn.execute("SELECT current_setting('plan_cache_mode')").fetchone()
    assert row == ("force_custom_plan",)


def _corpus(conn: psycopg.Connection[Any]) -> None:
    """Two users of different sizes, two platforms, both roles, sessions, vectors on most rows
    and dates over two months."""
    rows, vectors = [], []
    for i in range(240):
        topic = ("deploy", "zeppelin", "hangar", "lunch", "invoice", "mooring")[i % 6]
        rows.append(
            mem(
                f"{topic} note {i} about the {('nightly', 'weekly', 'ad hoc')[i % 3]} run",
                platform=("claude-code", "codex")[i % 2],
                role=("user", "assistant")[i % 2],
                session=f"s{i // 8}",
                age_days=i / 4,
            )
        )
        vectors.append(None if i % 7 == 0 else unit((i % 6, 1.0), (6 + i % 5, 0.5)))
    add(conn, rows, vectors, user="big")
    add(conn, [mem("zeppelin hangar inspection", age_days=3), mem("lunch at noon")], user="small")


_QUERIES = [
    ("zeppelin", None, {}),
    ("zeppelin hangar", None, {}),
    ("nightly deploy invoice", (0, 1.0), {}),
    ("mooring", (5, 1.0), {"role": "assistant"}),
    ("weekly lunch", (3, 1.0), {"agent_platform": "codex", "limit": 20}),
    ("deploy", (0, 1.0), {"date_range": DateRange(NOW - timedelta(days=30), NOW)}),
    ("what happened on " + (NOW - timedelta(days=10)).strftime("%B %d, %Y"), (1, 1.0), {}),
    ("zzz unknown words", (2, 1.0), {}),
]


@pytest.mark.parametrize("tuning", [SearchTuning(), _SAMPLED], ids=["whole-scope", "sampled"])
def test_a_plan_made_once_finds_what_a_plan_made_per_query_finds(
    conn: psycopg.Connection[Any], tuning: SearchTuning
) -> None:
    _corpus(conn)
    for user in ("big", "small"):
        for query, axis, filters in _QUERIES:
            vector = unit(axis) if axis else None
            # the vector in hand (one hybrid statement) and on its way (the full-text arm
            # ahead, then the rest)
            for given in (vector, lambda v=vector: v):
                results = [
                    run(
                        conn,
                        query,
                        given,
                        user=user,
                        tuning=replace(tuning, plan_once=p),
                        **filters,
                    )
                    for p in (True, False, True)
                ]
                planned_once, per_query, again = (
                    [(h.id, round(h.why.score or 0, 9)) for h in r.hits] for r in results
                )
                assert planned_once == per_query == again, (user, query)
                assert results[0].used == results[1].used
    generic = conn.execute(
        "SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements"
        " WHERE statement LIKE 'WITH%%' AND NOT statement LIKE ANY(%s)",
        (list(_OTHERS),),
    ).fetchone()
    kept = sum("date_range" not in filters for _, _, filters in _QUERIES)
    # two users, run twice each planned once: one statement with the vector in hand, two
    # with it on its way (the full-text arm run ahead, then the rest of the hybrid statement)
    assert generic == (2 * 2 * (1 + 2) * kept, 0)


def test_a_search_with_a_date_range_is_planned_for_itself(conn: psycopg.Connection[Any]) -> None:
    """Its bounds move with the clock: a plan kept for them would serve one search and hold
    about a megabyte of the server's memory."""
    add(conn, [mem("zeppelin hangar inspection", age_days=2)])
    for days in (3, 4, 5):
        window = DateRange(NOW - timedelta(days=days), NOW)
        assert run(conn, "zeppelin", unit((0, 1.0)), date_range=window).hits
    assert _search_plans(conn) == []
    assert _plans(conn, _OTHERS[0]) == []  # nor the actions arm's (its text holds the bounds)
    assert run(conn, "zeppelin", unit((0, 1.0))).hits
    assert len(_search_plans(conn)) == 1  # the hybrid statement, the vector in hand
    assert len(_plans(conn, _OTHERS[0])) == 1
    assert run(conn, "zeppelin", lambda: unit((0, 1.0))).hits
    assert len(_search_plans(conn)) == 3  # and the full-text arm run ahead, the rest


@pytest.mark.parametrize("once", [True, False], ids=["planned-once", "planned-per-query"])
def test_filter_values_are_matched_literally(conn: psycopg.Connection[Any], once: bool) -> None:
    """Filter values are written into the statement: a ``%``, a quote or a placeholder-like
    text in one is matched as itself, in every kind of search and in ``explain_search``."""
    odd, device = "odd%(x)s 100% it's", "box%s"
    ids = add(
        conn,
        [
            mem("zeppelin hangar", platform=odd, device=device),
            mem("zeppelin hangar", platform="codex", device=device),
            mem("zeppelin hangar", platform=odd, device="other"),
        ],
        [unit((0, 1.0))] * 3,
    )
    tuning = SearchTuning(plan_once=once)
    filters: dict[str, Any] = {
        "agent_platform": odd,
        "device_scope": "local",
        "device_name": device,
    }
    assert [h.id for h in run(conn, "zeppelin", unit((0, 1.0)), tuning=tuning, **filters).hits] == [
        ids[0]
    ]
    assert [h.id for h in run(conn, None, tuning=tuning, **filters).hits] == [ids[0]]
    ilike = run(conn, "hang", unit((5, 1.0)), tuning=tuning, **filters)  # no word match: ILIKE
    assert ilike.used == "ilike" and [h.id for h in ilike.hits] == [ids[0]]
    uid = conn.execute("SELECT user_id FROM users WHERE user_name = 'tester'").fetchone()
    assert uid is not None
    plan = explain_search(
        conn,
        int(uid[0]),
        query="zeppelin",
        query_vector=unit((0, 1.0)),
        filters=SearchFilters(**filters),
        tuning=tuning,
    )
    assert "odd%(x)s 100% it''s" in plan
