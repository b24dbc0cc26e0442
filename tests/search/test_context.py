"""BM25 term rarity, session context and dates named in the query."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest

from agents_memory.store.search import SearchFilters, SearchTuning
from agents_memory.store.search.lexemes import refresh_search_lexemes
from agents_memory.store.search.terms import query_dates
from bench.search_plans import explain_search

from .helpers import NOW, add, mem, run, unit


def test_a_rare_word_outweighs_a_common_one(conn: psycopg.Connection[Any]) -> None:
    common = [mem(f"deploy step {i} of the deploy script", age_days=0.1) for i in range(12)]
    *_, rare = add(conn, [*common, mem("zeppelin mooring notes", age_days=3)])
    result = run(conn, "deploy zeppelin")
    assert result.hits[0].id == rare
    why = result.hits[0].why
    assert why.arms == ("fulltext",) and why.fts_rank == 1
    assert why.fts_score is not None and why.fts_score > (result.hits[1].why.fts_score or 0)


def test_common_words_add_score_but_not_candidates(conn: psycopg.Connection[Any]) -> None:
    """With a sampled scope (``stats_rows`` below the rows in scope) only the rarer words pick
    candidates; a row with the rare word and the common one still ranks first."""
    rows = [mem(f"deploy log line {i}", age_days=0.1) for i in range(30)]
    rows += [mem("deploy zeppelin hangar", age_days=5), mem("zeppelin hangar mooring", age_days=5)]
    *_, both, rare_only = add(conn, rows)
    result = run(conn, "zeppelin deploy", tuning=SearchTuning(stats_rows=20), limit=5)
    assert [h.id for h in result.hits[:2]] == [both, rare_only]
    scores = [h.why.fts_score or 0 for h in result.hits[:2]]
    assert scores[0] > scores[1] > 0


_SAMPLED = SearchTuning(stats_rows=50, rare_rows=20, rare_rows_lexical=20)
"""A scope bigger than the sample, so the rare-word candidates are read through the index."""


def _plan(
    conn: psycopg.Connection[Any],
    query: str,
    tuning: SearchTuning = _SAMPLED,
    vector: np.ndarray[Any, Any] | None = None,
) -> str:
    uid = conn.execute("SELECT user_id FROM users WHERE user_name = 'tester'").fetchone()
    assert uid is not None
    filters = SearchFilters(limit=5)
    return explain_search(
        conn, int(uid[0]), query=query, query_vector=vector, filters=filters, tuning=tuning
    )


def _scans(
    conn: psycopg.Connection[Any],
    query: str,
    tuning: SearchTuning = _SAMPLED,
    vector: np.ndarray[Any, Any] | None = None,
) -> list[float | None]:
    """How many rows each of the search's scans through its own tsqueries returned, in plan
    order: the rows holding any rare word, those holding two, and (when the query has two words
    or more) those holding every word; ``None`` for a scan never executed."""
    conn.execute("SET enable_seqscan = off")  # a tiny table: choose between the indexes
    plan = _plan(conn, query, tuning, vector)
    nodes = re.split(r"\n(?=\s*->)", plan)
    scans = [n for n in nodes if re.search(r"on memory m_\d[\s\S]*fts @@ \(InitPlan", n)]
    assert len(scans) == 2 + (" " in query.strip()), plan
    counts: list[float | None] = []
    for node in scans:
        found = re.search(r"actual time=\S+ rows=([\d.]+)", node)
        assert found or "never executed" in node, node
        counts.append(float(found[1]) if found else None)
    return counts


def _rare_scans(conn: psycopg.Connection[Any], query: str) -> list[float | None]:
    """The rows the two rare-word scans returned (see :func:`_scans`)."""
    return _scans(conn, query)[:2]


def test_rare_words_are_read_through_the_full_text_index(conn: psycopg.Connection[Any]) -> None:
    """Beyond the sample, the rows holding a rare word are candidates however old they are
    (read through the GIN index in a big table, not by walking the time index newest-first)."""
    rows = [mem(f"deploy log line {i} of the nightly deploy", age_days=0.1) for i in range(400)]
    rows += [mem("zeppelin hangar inspection", age_days=40 + i) for i in range(3)]
    ids = add(conn, rows)
    conn.execute("ANALYZE memory")
    result = run(conn, "zeppelin deploy", tuning=_SAMPLED, limit=5)
    assert [h.id for h in result.hits[:3]] == ids[-3:]
    assert all(h.why.fts_rank is not None for h in result.hits[:3])
    assert _rare_scans(conn, "zeppelin deploy")[0] == 3


def test_a_word_common_in_the_table_is_not_read_as_rare(conn: psycopg.Connection[Any]) -> None:
    """A word the sampled (newest) rows lack but ANALYZE found common in the table is not a
    rare word: its matches are not all read through the GIN index (topics cluster in time)."""
    rows = [mem(f"zeppelin mooring drill {i}", age_days=30 + i / 100) for i in range(600)]
    rows += [mem("zeppelin hangar inspection", age_days=40 + i) for i in range(3)]
    rows += [mem(f"deploy log line {i}", age_days=0.1) for i in range(200)]
    ids = add(conn, rows)
    conn.execute("ANALYZE memory")
    result = run(conn, "zeppelin hangar", tuning=_SAMPLED, limit=5)
    assert set(ids[600:603]) <= {h.id for h in result.hits[:3]}
    assert _rare_scans(conn, "zeppelin hangar")[0] == 3  # not the 603 rows with "zeppelin"


def test_the_common_words_are_looked_up_once_copied(conn: psycopg.Connection[Any]) -> None:
    """Once the Cold Path copied ANALYZE's common words into ``search_lexemes`` a search looks
    its words up there instead of reading the statistics; a copy is made again only when the
    statistics changed."""
    rows = [mem(f"zeppelin mooring drill {i}", age_days=30 + i / 100) for i in range(600)]
    rows += [mem("zeppelin hangar inspection", age_days=40 + i) for i in range(3)]
    rows += [mem(f"deploy log line {i}", age_days=0.1) for i in range(200)]
    ids = add(conn, rows)
    conn.execute("ANALYZE memory")
    assert refresh_search_lexemes(conn) == len(_common_lexemes(conn))
    assert refresh_search_lexemes(conn) is None  # the statistics did not change
    assert 550 < _estimate(conn, "zeppelin") < 650
    plan = _plan(conn, "zeppelin hangar")
    assert re.search(r"Function Scan on memory_common_lexemes.*never executed", plan), plan
    assert _rare_scans(conn, "zeppelin hangar")[0] == 3
    result = run(conn, "zeppelin hangar", tuning=_SAMPLED, limit=5)
    assert set(ids[600:603]) <= {h.id for h in result.hits[:3]}
    # What the table says is what counts: a word it lists as common is not read as rare.
    conn.execute("UPDATE search_lexemes SET est_rows = 5000 WHERE term = quote_literal('hangar')")
    assert _rare_scans(conn, "zeppelin hangar")[0] == 0
    add(conn, [mem(f"hangar door log {i}") for i in range(300)])
    conn.execute("ANALYZE memory")
    assert refresh_search_lexemes(conn) == len(_common_lexemes(conn))
    assert 250 < _estimate(conn, "hangar") < 350
    assert refresh_search_lexemes(conn, force=True) == len(_common_lexemes(conn))


def test_without_vectors_the_full_text_arm_reaches_further_back(
    conn: psycopg.Connection[Any],
) -> None:
    """A word holding more rows than ``rare_rows`` is read through the GIN index only when the
    search has no vector arm (``rare_rows_lexical``): then nothing else reaches old rows."""
    rows = [mem(f"deploy log line {i}", age_days=0.1) for i in range(200)]
    rows += [mem(f"zeppelin mooring drill {i}", age_days=30 + i) for i in range(60)]
    add(conn, rows)
    conn.execute("ANALYZE memory")
    refresh_search_lexemes(conn)
    tuning = replace(_SAMPLED, rare_rows_lexical=100)
    assert _scans(conn, "zeppelin", tuning)[0] == 60
    assert _scans(conn, "zeppelin", tuning, vector=unit((0, 1.0)))[0] == 0


def test_the_statistics_keep_the_words_of_a_few_hundred_rows_in_a_million(
    conn: psycopg.Connection[Any],
) -> None:
    """The column's statistics target is raised so that ANALYZE's common elements reach down
    to about as many rows as a rare word may hold in a million-row table."""
    row = conn.execute(
        "SELECT attstattarget FROM pg_attribute"
        " WHERE attrelid = 'memory'::regclass AND attname = 'fts'"
    ).fetchone()
    assert row == (1000,)


def _estimate(conn: psycopg.Connection[Any], word: str) -> float:
    row = conn.execute(
        "SELECT est_rows FROM search_lexemes WHERE term = quote_literal(%s)", (word,)
    ).fetchone()
    assert row is not None, word
    return float(row[0])


def _common_lexemes(conn: psycopg.Connection[Any]) -> list[Any]:
    return conn.execute("SELECT DISTINCT lexeme FROM memory_common_lexemes(0)").fetchall()


def test_rows_holding_two_rare_words_are_found_behind_newer_matches_of_one(
    conn: psycopg.Connection[Any],
) -> None:
    """The newest matches of any one rare word may fill the scan; the rows holding two of them
    are read as well, however old (in a long history a name and a topic word together)."""
    rows = [mem(f"deploy log line {i}", age_days=0.1) for i in range(400)]
    rows += [mem(f"zeppelin drill {i}", age_days=1 + i / 10) for i in range(8)]
    rows += [mem(f"mooring drill {i}", age_days=1 + i / 10) for i in range(8)]
    rows += [mem("zeppelin hangar inspection", age_days=60 + i) for i in range(2)]
    ids = add(conn, rows)
    conn.execute("ANALYZE memory")
    tuning = replace(_SAMPLED, fts_scan_rows=5)
    # No row holds all three words; the five newest rows holding one are the drills.
    result = run(conn, "zeppelin hangar mooring", tuning=tuning, limit=5)
    assert {h.id for h in result.hits[:2]} == set(ids[-2:])
    assert all(h.why.fts_rank is not None for h in result.hits[:2])
    assert _rare_scans(conn, "zeppelin hangar mooring") == [18, 2]


def test_the_rows_holding_every_word_are_read_for_a_rare_word_only(
    conn: psycopg.Connection[Any],
) -> None:
    """Common words together are left to the sampled rows (reading all their matches through
    the GIN index would cost thousands of rows); a rare word with them is read back for."""
    rows = [mem(f"deploy script run {i}", age_days=i / 100) for i in range(200)]
    rows += [mem("zeppelin deploy script", age_days=80)]
    *_, old = add(conn, rows)
    conn.execute("ANALYZE memory")
    tuning = replace(_SAMPLED, conjunction_rows=100)
    assert _scans(conn, "deploy script", tuning)[2] is None  # est ~200 rows each
    assert _scans(conn, "zeppelin deploy script", tuning)[2] == 1
    assert _scans(conn, "deploy script", replace(tuning, conjunction_rows=1_000))[2] == 201
    result = run(conn, "zeppelin deploy script", tuning=tuning, limit=5)
    assert result.hits[0].id == old


def test_an_answer_is_found_through_the_question_before_it(conn: psycopg.Connection[Any]) -> None:
    start = NOW - timedelta(days=2)
    rows = [
        mem("what port does the staging proxy listen on?", session="s1", at=start),
        mem("8443, behind the load balancer", role="assistant", session="s1",
            at=start + timedelta(seconds=30)),
        mem("thanks", session="s1", at=start + timedelta(seconds=60)),
        mem("unrelated chat about lunch", session="s2", at=start),
    ]  # fmt: skip
    question, answer, *_ = add(conn, rows)
    result = run(conn, "staging proxy port")
    ids = [h.id for h in result.hits]
    assert ids[0] == question
    assert answer in ids
    hit = result.hits[ids.index(answer)]
    assert hit.why.arms == ("context",)
    assert hit.why.context_boost is not None and hit.why.context_boost > 0


def test_without_a_neighbour_span_the_answer_is_not_pulled_in(
    conn: psycopg.Connection[Any],
) -> None:
    start = NOW - timedelta(days=2)
    question, answer = add(
        conn,
        [
            mem("what port does the staging proxy listen on?", session="s1", at=start),
            mem("8443", role="assistant", session="s1", at=start + timedelta(seconds=30)),
        ],
    )
    result = run(conn, "staging proxy port", tuning=SearchTuning(neighbour_span=0))
    assert [h.id for h in result.hits] == [question]
    assert answer


def test_a_date_in_the_query_favours_turns_of_that_day(conn: psycopg.Connection[Any]) -> None:
    on_day, later = add(
        conn,
        [
            mem("rotated the api certificates", at=datetime(2024, 7, 9, 15, tzinfo=UTC)),
            mem("rotated the api certificates", at=datetime(2024, 9, 20, 10, tzinfo=UTC)),
        ],
    )
    result = run(conn, "what did we rotate on 9 July, 2024?")
    assert [h.id for h in result.hits] == [on_day, later]
    assert result.hits[0].why.date_boost == pytest.approx(SearchTuning().date_weight)
    assert result.hits[1].why.date_boost is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("on 9 July, 2022?", [(datetime(2022, 7, 9), datetime(2022, 7, 10))]),
        ("October 13, 2023", [(datetime(2023, 10, 13), datetime(2023, 10, 14))]),
        ("the 8th of December 2023", [(datetime(2023, 12, 8), datetime(2023, 12, 9))]),
        ("since 2023-10-13", [(datetime(2023, 10, 13), datetime(2023, 10, 14))]),
        ("in May 2023", [(datetime(2023, 5, 1), datetime(2023, 6, 1))]),
        ("december 2023 and 2024-02", [
            (datetime(2023, 12, 1), datetime(2024, 1, 1)),
            (datetime(2024, 2, 1), datetime(2024, 3, 1)),
        ]),
        ("in 2023", []),
        ("may we deploy on 31 February, 2023?", []),
    ],
)  # fmt: skip
def test_query_dates_become_day_or_month_intervals(
    query: str, expected: list[tuple[datetime, datetime]]
) -> None:
    got = query_dates(query, slack_days=0)
    assert got == tuple((a.replace(tzinfo=UTC), b.replace(tzinfo=UTC)) for a, b in expected)
