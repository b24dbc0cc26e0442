"""The fusion weighs each arm by how sure it is on the query (store/search/arms.py): crafted
arm results, where the fixed weights lose what one arm found."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agents_memory.store.memories import NewMemory
from agents_memory.store.search import SearchTuning

from .helpers import add, mem, near, run, unit


def test_a_confident_vector_hit_is_not_buried_by_full_text_hits_on_common_words(
    conn: psycopg.Connection[Any],
) -> None:
    """The query's rare words ("rid", "noisy") are in no row; every full-text hit holds only
    its common words ("logs", "tests"); the vector arm's first hit stands far above the rest."""
    common = [mem(f"the tests print their logs to stdout, run {i}") for i in range(24)]
    common_vectors = [near(0, 0.78 - 0.005 * i, 10 + i) for i in range(24)]
    target, *_ = add(
        conn,
        [mem("silenced the chatty output of the suite"), *common],
        [near(0, 0.95, 5), *common_vectors],
    )
    query = "how did we get rid of the noisy logs in tests"
    result = run(conn, query, unit((0, 1.0)))
    ids = [h.id for h in result.hits]
    assert target in ids[:3]
    assert result.hits[ids.index(target)].why.vector_rank == 1

    fixed = run(conn, query, unit((0, 1.0)), tuning=replace(SearchTuning(), arm_weighting=False))
    assert target not in [h.id for h in fixed.hits][:3]  # what the fixed weights did


def test_a_rare_identifier_found_first_by_full_text_stays_first_against_vector_neighbours(
    conn: psycopg.Connection[Any],
) -> None:
    """Twenty-five turns about other errors are the query's nearest vectors; only one turn holds the
    identifier the query names, and its vector is far from the query's."""
    neighbours = [
        mem(f"error E{1000 + i} was behind a retry storm in the worker") for i in range(25)
    ]
    target, *_ = add(
        conn,
        [mem("E7731 came from the pool closing before the flush"), *neighbours],
        [near(0, 0.70, 5), *[near(0, 0.93 - 0.005 * i, 10 + i) for i in range(25)]],
    )
    query = "what was behind error E7731?"
    result = run(conn, query, unit((0, 1.0)))
    assert result.hits[0].id == target
    assert result.hits[0].why.fts_rank == 1

    fixed = run(conn, query, unit((0, 1.0)), tuning=replace(SearchTuning(), arm_weighting=False))
    assert fixed.hits[0].id != target  # what the fixed weights did


def _migration_session(day: datetime, n: int, thanks: str = "thanks") -> list[NewMemory]:
    """A request, the turn that answers it (a migration adding a column) and a thank-you."""
    sid = f"s-{day:%m%d}-{n}"
    return [
        mem("add a field to orders please", session=sid, at=day),
        mem(
            f"Migration {n:04d} is in: it adds a column to orders",
            session=sid,
            at=day + timedelta(minutes=1),
        ),
        mem(f"{thanks}, looks good", session=sid, at=day + timedelta(minutes=2)),
    ]


def test_the_turn_of_the_named_day_outranks_the_same_turn_on_the_days_around_it(
    conn: psycopg.Connection[Any],
) -> None:
    """Forty-five sessions answer the same way on the three days after the one the query names
    and crowd the named day's answer out of the full-text arm (same words, newer). The date arm
    brings it in as a candidate of its own: its session context counts as a full-text hit's
    would (it is not capped like a row lifted only by its context); with the named day counting
    more than the days of slack around it (``slack_date_share`` below 1), it comes first. (A
    turn holding the query's rare word, "quokka", is in play as a neighbour: rows lifted only
    by their context are capped under it.)"""
    named = datetime(2024, 3, 5, 9, tzinfo=UTC)
    rows = _migration_session(named, 0)
    for n in range(1, 46):
        at = named + timedelta(days=1 + n % 3, hours=n % 8)
        rows += _migration_session(at, n)
    rows += _migration_session(named + timedelta(days=60), 99, "thanks, the quokka team says")
    rows += [mem(f"deploy log line {i}", age_days=0.1) for i in range(700)]
    ids = add(conn, rows)
    target = ids[1]
    query = "which column did the migration on 2024-03-05 add for quokka?"
    tuning = replace(SearchTuning(), slack_date_share=0.5)
    result = run(conn, query, tuning=tuning)
    best = result.hits[0]
    assert best.id == target
    assert best.why.fts_rank is None  # not the full-text arm's: the date arm's
    assert best.why.date_boost == pytest.approx(SearchTuning().date_weight)
    assert best.why.context_boost and best.why.context_boost > 0
    whole = best.why.fused_score + best.why.context_boost + best.why.date_boost
    assert best.why.score == pytest.approx(whole * best.why.recency_factor)  # not capped
    slack = tuning.date_weight * tuning.slack_date_share
    assert pytest.approx(slack) in [h.why.date_boost for h in result.hits[1:]]


def test_a_hit_says_how_far_its_cosine_stands_out_of_the_vector_candidates(
    conn: psycopg.Connection[Any],
) -> None:
    """``similarity_z``: the hit's cosine in standard deviations of the vector arm's
    candidates' cosines above their mean; none with too few candidates to judge."""
    rows = [mem(f"unrelated note number {i}") for i in range(24)]
    target, *_ = add(
        conn,
        [mem("the standout turn"), *rows],
        [near(0, 0.95, 5), *(near(0, 0.60 + 0.002 * i, 10 + i) for i in range(24))],
    )
    hits = run(conn, "standout", unit((0, 1.0))).hits
    best = next(h for h in hits if h.id == target)
    assert best.why.similarity_z is not None and best.why.similarity_z > 3
    assert all(h.why.similarity_z < 1.5 for h in hits if h.id != target and h.why.similarity_z)
    few = run(
        conn,
        "standout",
        unit((0, 1.0)),
        tuning=replace(SearchTuning(), min_candidates=10, candidate_factor=1),
    )
    assert all(h.why.similarity_z is None for h in few.hits)
