"""SearchStats: the common words ANALYZE counted are copied for the search after each ANALYZE,
and only then."""

from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.coldpath.search_stats import SearchStatsJob
from agents_memory.config import Settings

from .jobkit import add, context, row
from .test_worker import make_worker


def _copied(conn: psycopg.Connection[Any]) -> dict[str, float]:
    rows = conn.execute("SELECT term, est_rows FROM search_lexemes").fetchall()
    return {str(term): float(est) for term, est in rows}


def test_the_common_words_are_copied_after_each_analyze(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    job = SearchStatsJob()
    add(conn, settings, *(row(f"zeppelin mooring drill {i}") for i in range(50)))
    conn.commit()
    report = job.run(context(conn, settings))  # the first run analyses the table itself
    assert report.processed == 1 and "common words" in report.notes[0]
    assert _copied(conn)["'zeppelin'"] == 50
    again = job.run(context(conn, settings))
    assert (again.processed, again.skipped) == (0, 1)
    add(conn, settings, *(row(f"hangar door log {i}") for i in range(30)))
    conn.commit()
    assert job.run(context(conn, settings)).skipped == 1  # not analysed since
    assert "'hangar'" not in _copied(conn)
    conn.execute("ANALYZE memory")
    conn.commit()
    assert job.run(context(conn, settings)).processed == 1
    assert _copied(conn)["'hangar'"] == 30


def test_an_empty_table_gives_an_empty_copy(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    report = SearchStatsJob().run(context(conn, settings))
    assert (report.processed, report.skipped) == (1, 0)
    assert _copied(conn) == {}
    assert SearchStatsJob().run(context(conn, settings)).skipped == 1


def test_the_worker_runs_it_every_tick(settings: Settings, conn: psycopg.Connection[Any]) -> None:
    add(conn, settings, *(row(f"zeppelin mooring drill {i}") for i in range(20)))
    conn.execute("ANALYZE memory")
    conn.commit()
    with make_worker(settings, jobs=[SearchStatsJob()]) as worker:
        reports = worker.run_once()
    assert [(r.name, r.processed) for r in reports] == [("search_stats", 1)]
    assert _copied(conn)["'zeppelin'"] == 20
    recorded = "SELECT total_processed, skipped FROM coldpath_runs WHERE job = 'search_stats'"
    assert conn.execute(recorded).fetchone() == (1, 1)  # the copy, then a tick with nothing new


def test_each_tick_merges_the_new_words_into_the_full_text_index(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    """New rows wait in the index's pending list, which every word lookup reads whole, until
    the job merges them (a second merge then finds nothing)."""
    job = SearchStatsJob()
    job.run(context(conn, settings))
    conn.commit()
    add(conn, settings, *(row(f"zeppelin mooring drill {i}") for i in range(40)))
    conn.commit()
    report = job.run(context(conn, settings))
    conn.commit()
    assert any("merged" in note for note in report.notes), report.notes
    pending = conn.execute("SELECT gin_clean_pending_list('memory_fts'::regclass)").fetchone()
    assert pending == (0,)
