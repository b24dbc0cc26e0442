"""The full-text arm run ahead (in the search's first round trip, while the query is embedded)
and the rest of the hybrid statement given its results rank exactly as the one statement that
runs both: the same hits, in the same order, with the same scores to the last bit, and the same
arm counts and confidences, for searches with and without a vector, naming a date or a
project, filtered by role, platform, date range or project tag, in a scope bigger than the
sample (the rare-word scans run) or not."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from agents_memory.daterange import DateRange
from agents_memory.store.memories import ensure_user
from agents_memory.store.search import SearchFilters, SearchTuning
from agents_memory.store.search.fulltext_ahead import read_fulltext, send_fulltext
from agents_memory.store.search.hybrid import (
    Hybrid,
    generic_plans,
    plan_once,
    run_hybrid,
    send_settings,
    vector_literal,
)
from agents_memory.store.search.scope import TagFilter, filter_sql, resolve_p_tag
from agents_memory.store.search.terms import parse_query

from .helpers import NOW, add, mem, run, unit

_SAMPLED = SearchTuning(stats_rows=50, rare_rows=20, rare_rows_lexical=20)
_TOPICS = ("deploy", "zeppelin", "hangar", "lunch", "invoice", "mooring")


def _corpus(conn: psycopg.Connection[Any]) -> None:
    """Sessions over two platforms and both roles, vectors on most rows, dates over two
    months, working directories naming projects and a project tag on a third of the rows."""
    rows, vectors = [], []
    for i in range(240):
        topic = _TOPICS[i % 6]
        rows.append(
            mem(
                f"{topic} note {i} about the {('nightly', 'weekly', 'ad hoc')[i % 3]} run"
                + (" with the zeppelin hangar checklist" if i % 11 == 0 else "")
                + (" and the quasar flange" if i in (17, 18) else ""),
                platform=("claude-code", "codex")[i % 2],
                role=("user", "assistant")[i % 2],
                session=f"s{i // 8}",
                age_days=i / 4,
            )
        )
        vectors.append(None if i % 7 == 0 else unit((i % 6, 1.0), (6 + i % 5, 0.5)))
    ids = add(conn, rows, vectors)
    tag = conn.execute("INSERT INTO project_tags (name) VALUES ('billing') RETURNING id").fetchone()
    assert tag is not None
    conn.execute(
        "UPDATE memory SET cwd = '/home/dev/' || (CASE WHEN id %% 2 = 0 THEN 'billing'"
        " ELSE 'website' END), p_tag_id = CASE WHEN id %% 3 = 0 THEN %s::bigint END"
        " WHERE id = ANY(%s)",
        (tag[0], ids),
    )
    conn.commit()


_DAY = (NOW - timedelta(days=10)).strftime("%B %d, %Y")
_QUERIES: list[tuple[str, int | None, dict[str, Any]]] = [
    ("zeppelin", None, {}),
    ("zeppelin hangar checklist", 1, {}),
    ("nightly deploy invoice", 0, {}),
    ("mooring", 5, {"role": "assistant"}),
    ("weekly lunch", 3, {"agent_platform": "codex", "limit": 20}),
    ("deploy", 0, {"date_range": DateRange(NOW - timedelta(days=30), NOW)}),
    ("deploy", None, {"date_range": DateRange(NOW - timedelta(days=30), NOW)}),
    (f"what happened on {_DAY}", 1, {}),
    (f"the hangar note of {_DAY}", None, {}),
    ("billing invoice run", 4, {}),
    ("invoice run", 4, {"p_tag": "billing"}),
    ("the quasar flange of the hangar", 5, {}),
    ("quasar", None, {"role": "user"}),
    ("zzz unknown words", 2, {}),
    ("the a of", 2, {}),
]


def _both(
    conn: psycopg.Connection[Any],
    query: str,
    axis: int | None,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> tuple[Hybrid, Hybrid]:
    """The one statement's result and the arm-ahead one's, in one transaction."""
    uid = ensure_user(conn, "tester")
    parsed = parse_query(query, tuning.date_slack_days)
    tag: TagFilter | None = None
    with conn.transaction():
        if filters.p_tag:
            tag = resolve_p_tag(conn, filters.p_tag)
            assert tag is not None
        vector = None if axis is None else unit((axis, 1.0))
        settings = send_settings(conn, vector is not None, filters, tuning)
        literal, _ = vector_literal(settings, vector)
        one = run_hybrid(conn, uid, parsed, literal, filters, tag, tuning)
        once = plan_once(filters, tuning)
        where = filter_sql(filters, tag, uid)
        with generic_plans(conn):
            cur = send_fulltext(
                conn,
                parsed,
                where,
                tuning,
                limit=filters.limit,
                with_vector=vector is not None,
                prepare=once,
            )
        ahead = read_fulltext(cur, with_vector=vector is not None)
        split = run_hybrid(conn, uid, parsed, literal, filters, tag, tuning, ahead)
    return one, split


@pytest.mark.parametrize("tuning", [SearchTuning(), _SAMPLED], ids=["whole-scope", "sampled"])
def test_the_arm_run_ahead_ranks_as_the_one_statement(
    conn: psycopg.Connection[Any], tuning: SearchTuning
) -> None:
    _corpus(conn)
    compared = 0
    for query, axis, filters in _QUERIES:
        one, split = _both(conn, query, axis, SearchFilters(**filters), tuning)
        assert split == one, (query, filters)  # every field of every hit, floats exactly
        compared += len(one.hits)
    assert compared > 100  # the searches found rows to compare


def test_the_arms_confidence_and_counts_travel_with_the_arm(
    conn: psycopg.Connection[Any],
) -> None:
    """The coverage, the arm's hit count and the rare words all come from the arm ahead."""
    _corpus(conn)
    one, split = _both(conn, "the quasar flange hangar", 1, SearchFilters(), SearchTuning())
    assert one.fts_hits > 0 and one.arms[0] is not None
    assert (split.fts_hits, split.arms) == (one.fts_hits, one.arms)
    assert any(h.why.all_rare for h in split.hits)


def test_a_vector_that_does_not_come_runs_the_arm_again_for_full_text(
    conn: psycopg.Connection[Any],
) -> None:
    """The arm ahead is weighed for a search with a vector; when the vector does not come the
    search is full text, weighed as one: the same as a search never given a vector."""
    _corpus(conn)
    never = run(conn, "nightly deploy invoice", None)
    lost = run(conn, "nightly deploy invoice", lambda: None)
    assert not lost.vector_used and lost.used == never.used == "fulltext"
    assert lost.hits == never.hits


def test_a_search_sends_the_arm_ahead_of_the_vector(conn: psycopg.Connection[Any]) -> None:
    """The arm ran (its statement is prepared) before the vector was asked for."""
    _corpus(conn)
    seen: list[int] = []

    def later() -> Any:
        seen.append(
            conn.execute(
                "SELECT count(*) FROM pg_prepared_statements"
                " WHERE statement LIKE '%%memory_common_lexemes%%'"
            ).fetchone()[0]  # type: ignore[index]
        )
        return unit((1, 1.0))

    result = run(conn, "zeppelin hangar checklist", later, tuning=SearchTuning())
    assert seen == [1] and result.vector_used and result.hits


@pytest.mark.parametrize("tuning", [SearchTuning(), _SAMPLED], ids=["whole-scope", "sampled"])
def test_the_whole_search_finds_the_same_with_the_arm_ahead_or_after_the_vector(
    conn: psycopg.Connection[Any], tuning: SearchTuning
) -> None:
    """The same result whole (hits, their scores and confidences, the sessions, the notes),
    the vector given first or asked for later."""
    _corpus(conn)
    after = replace(tuning, fulltext_ahead=False)
    for query, axis, filters in _QUERIES:
        vector = None if axis is None else unit((axis, 1.0))
        ahead = run(conn, query, (lambda v=vector: v), tuning=tuning, **filters)
        assert ahead == run(conn, query, vector, tuning=after, **filters), (query, filters)
