"""Coding-agent questions (issue 24): rare words over context lifts, days and projects the
query names, and the weak-match note."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agents_memory.store.search import SearchTuning

from .helpers import NOW, add, mem, run


def _filler(n: int) -> list[Any]:
    return [mem(f"routine note {i} about the gateway config", age_days=0.5) for i in range(n)]


def test_a_turn_holding_every_rare_word_outranks_turns_lifted_only_by_neighbours(
    conn: psycopg.Connection[Any],
) -> None:
    start = NOW - timedelta(days=1)
    lifted = [
        mem("gateway gateway gateway timeout", session="s2", at=start),
        mem("ok", role="assistant", session="s2", at=start + timedelta(seconds=30)),
        mem("gateway gateway retries", session="s2", at=start + timedelta(seconds=60)),
    ]
    ids = add(conn, [*_filler(150), *lifted, mem("zanzibar gateway notes", age_days=20)])
    rare = ids[-1]
    strong_context = replace(SearchTuning(), neighbour_weight=5.0, session_weight=2.0)
    result = run(conn, "zanzibar gateway", tuning=strong_context, limit=10)
    order = [h.id for h in result.hits]
    assert rare in order
    for hit in result.hits:
        if hit.why.arms == ("context",):
            assert order.index(rare) < order.index(hit.id)
    assert result.hits[order.index(rare)].why.all_rare is True


def test_a_date_anchored_query_finds_an_old_turn_of_that_day(
    conn: psycopg.Connection[Any],
) -> None:
    newer = [
        mem(f"the migration adds column c{i} to the events table", age_days=1 + i / 100)
        for i in range(120)
    ]
    day = datetime(2026, 1, 5, 14, tzinfo=UTC)
    ids = add(conn, [*newer, mem("the migration adds column locale to the users table", at=day)])
    result = run(conn, "which column did the migration on 2026-01-05 add?", limit=10)
    assert result.hits[0].id == ids[-1]
    assert result.hits[0].why.date_boost


def test_a_project_named_in_the_query_prefers_that_project(
    conn: psycopg.Connection[Any],
) -> None:
    rows = []
    for i, name in enumerate(("ledgerly", "tidewater", "pixelforge", "orchardly")):
        row = mem(f"Set the postgres pool to {5 + i} connections", age_days=1 + 3 * i)
        rows.append(replace(row, cwd=f"/home/dev/src/{name}"))
    ids = add(conn, rows)
    result = run(conn, "in orchardly, how big is the database pool?", limit=5)
    assert result.hits[0].id == ids[3]
    assert result.hits[0].why.project_boost


def test_a_nonsense_query_is_flagged_weak_and_a_real_one_is_not(
    conn: psycopg.Connection[Any],
) -> None:
    add(conn, [*_filler(20), mem("the staging proxy listens on port 8443")])
    nonsense = run(conn, "zxqv blorf quantum teapot")
    assert nonsense.weak
    assert nonsense.note and "weak" in nonsense.note
    real = run(conn, "staging proxy port")
    assert not real.weak
    assert real.hits[0].confidence is not None
    assert real.hits[0].confidence > 5 * SearchTuning().weak_below
    assert real.as_dict()["results"][0]["confidence"] == real.hits[0].confidence


def test_a_hit_holding_the_querys_rare_word_is_surer_than_one_holding_its_common_word(
    conn: psycopg.Connection[Any],
) -> None:
    """With ``rarity_weighting``, a hit's coverage weighs each word of the query by how many
    rows hold it (the full-text arm's statistics, read back with the search's rows): with 60
    rows holding "gateway" and one "zanzibar", the turn holding only "zanzibar" covers most of
    "zanzibar gateway", one holding only "gateway" little; counted alike (the default), both
    cover half."""
    ids = add(conn, [*_filler(60), mem("the zanzibar cutover is on friday", age_days=2)])
    rare = ids[-1]
    plain = replace(SearchTuning(), coverage_prior=0.0)
    rarity = run(conn, "zanzibar gateway", limit=10, tuning=replace(plain, rarity_weighting=True))
    by_id = {h.id: h for h in rarity.hits}
    common = next(h for h in rarity.hits if h.id != rare)
    assert rare in by_id and "gateway" in common.message
    assert (by_id[rare].why.coverage or 0) > 0.75
    assert (common.why.coverage or 1) < 0.25
    assert (by_id[rare].confidence or 0) > (common.confidence or 1)
    alike = run(conn, "zanzibar gateway", limit=10, tuning=plain)
    assert {h.why.coverage for h in alike.hits} == {0.5}


def test_a_word_the_fulltext_configuration_drops_counts_nothing_and_few_words_count_less(
    conn: psycopg.Connection[Any],
) -> None:
    """ "while" is no stop word of the search's own list but one of the full-text
    configuration's: a hit holding the query's other words covers all of it. The coverage
    prior (``coverage_prior`` words no hit holds) makes the same share of fewer words less
    sure."""
    (mid,) = add(conn, [*_filler(5), mem("the zanzibar cutover failed")])[-1:]
    plain = replace(SearchTuning(), coverage_prior=0.0)
    hit = next(h for h in run(conn, "zanzibar cutover while", tuning=plain).hits if h.id == mid)
    assert hit.why.coverage == 1.0
    two = next(h for h in run(conn, "zanzibar cutover").hits if h.id == mid)
    one = next(h for h in run(conn, "zanzibar").hits if h.id == mid)
    assert one.why.coverage == 0.333 and two.why.coverage == 0.5
    assert (one.confidence or 1) < (two.confidence or 0)
