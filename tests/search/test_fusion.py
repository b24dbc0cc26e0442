"""The fusion weighs each arm by how sure it is on the query (store/search/arms.py): crafted
arm results, where the fixed weights lose what one arm found."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg

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
