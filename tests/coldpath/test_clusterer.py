"""Clusterer: weekly summaries per tag (or git root) of history older than the short-term
window, idempotent; then archive only when ARCHIVE_AFTER_DAYS > 0, pinned rows exempt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agents_memory.coldpath.clusterer import ClustererJob
from agents_memory.coldpath.tagger import TaggerJob
from agents_memory.config import Settings
from agents_memory.store.recall import briefdata
from agents_memory.store.search import search_memories
from agents_memory.store.search.types import SearchFilters, SearchTuning
from agents_memory.store.summaries import NO_PROJECT

from .jobkit import NOW, add, answers, context, make_tag, real_llm, row

WEEK_OF_9_JUNE = datetime(2025, 6, 9, tzinfo=UTC)
WEEK_OF_2_JUNE = datetime(2025, 6, 2, tzinfo=UTC)


def _summaries(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT coalesce(t.name, s.d_tag), s.period_start, s.source_ids, s.model, s.summary"
            " FROM tag_summaries s LEFT JOIN project_tags t ON t.id = s.p_tag_id"
            " ORDER BY 1, 2"
        ).fetchall()
    ]


def _history(conn: psycopg.Connection[Any], settings: Settings) -> dict[str, list[int]]:
    make_tag(conn, "memory", git_root="/src/memory")
    ids = add(
        conn,
        settings,
        row(
            "We decided to use PostgreSQL for the shared memory pool.",
            git_root="/src/memory",
            age_days=4,
        ),
        row(
            "PostgreSQL with pgvector gives the memory pool hybrid search. Sounds good.",
            role="assistant",
            git_root="/src/memory",
            age_days=5,
        ),
        row(
            "The capture daemon writes every turn into the memory pool.",
            git_root="/src/memory",
            age_days=10,
        ),
        row(
            "Fresh talk inside the short-term window about the pool.",
            git_root="/src/memory",
            age_days=1,
        ),
        row(
            "Repository work (a tag of its own) on the build scripts and build cache.",
            git_root="/src/other",
            age_days=4,
        ),
        row("No project at all, just chatting about the weather today.", age_days=4),
    )
    TaggerJob().run(context(conn, settings))
    return {
        "week9": ids[:2],
        "week2": [ids[2]],
        "recent": [ids[3]],
        "other": [ids[4]],
        "none": [ids[5]],
    }


def test_old_history_is_summarised_per_tag_and_week_without_an_llm(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    ids = _history(conn, settings)
    report = ClustererJob().run(context(conn, settings))
    assert (report.processed, report.heuristic, report.llm_calls) == (4, 4, 0)
    found = _summaries(conn)
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [
        (NO_PROJECT, WEEK_OF_9_JUNE, ids["none"], "extractive"),
        ("memory", WEEK_OF_2_JUNE, ids["week2"], "extractive"),
        ("memory", WEEK_OF_9_JUNE, sorted(ids["week9"]), "extractive"),
        ("other", WEEK_OF_9_JUNE, ids["other"], "extractive"),
    ]
    week9 = found[2][4]
    assert week9.startswith("2 turns (1 from the user).")
    assert "- We decided to use PostgreSQL for the shared memory pool." in week9
    assert "Fresh talk" not in " ".join(f[4] for f in found)
    shown = briefdata.tag_summaries(conn, context(conn, settings).user_id, before=NOW, limit=5)
    assert {(s.tag, s.period_start) for s in shown} == {
        ("memory", WEEK_OF_9_JUNE),
        ("other", WEEK_OF_9_JUNE),
        (NO_PROJECT, WEEK_OF_9_JUNE),
    }


def test_a_period_is_summarised_again_only_when_new_rows_arrive(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    ids = _history(conn, settings)
    llm = answers({"summary": "- Chose PostgreSQL for the pool."})
    ClustererJob().run(context(conn, settings, llm=llm))
    assert len(llm.calls) == 4
    again = ClustererJob().run(context(conn, settings, llm=llm))
    assert (again.processed, len(llm.calls)) == (0, 4)

    late = add(
        conn,
        settings,
        row("A late backfilled note on the pool.", git_root="/src/memory", age_days=6),
    )
    TaggerJob().run(context(conn, settings))
    third = ClustererJob().run(context(conn, settings, llm=llm))
    assert (third.processed, len(llm.calls)) == (1, 5)
    week9 = [f for f in _summaries(conn) if f[0] == "memory" and f[1] == WEEK_OF_9_JUNE]
    assert len(week9) == 1 and week9[0][2] == sorted(ids["week9"] + late)
    assert week9[0][3] == "llm" and week9[0][4] == "- Chose PostgreSQL for the pool."
    assert "A late backfilled note" in llm.calls[-1].user


def test_an_idle_clusterer_rests_between_scheduled_runs(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _history(conn, settings)
    ClustererJob().run(context(conn, settings, drain=False, batch_size=10))
    rest = ClustererJob().run(context(conn, settings, drain=False, now=NOW + timedelta(minutes=5)))
    assert rest.skipped == 1 and rest.processed == 0


def test_a_batch_leaves_the_rest_for_the_next_run(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    _history(conn, settings)
    first = ClustererJob().run(context(conn, settings, drain=False, batch_size=2))
    second = ClustererJob().run(context(conn, settings, drain=False, batch_size=2))
    third = ClustererJob().run(context(conn, settings, drain=False, batch_size=2))
    assert (first.processed, second.processed, third.processed) == (2, 2, 0)


def test_archive_is_off_by_default(conn: psycopg.Connection[Any], settings: Settings) -> None:
    _history(conn, settings)
    ClustererJob().run(context(conn, settings))
    row_ = conn.execute("SELECT count(*) FROM memory WHERE NOT is_active").fetchone()
    assert row_ is not None and row_[0] == 0


def test_archive_is_soft_spares_pinned_rows_and_search_still_finds_them(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    settings = make_settings(database_url=db_url, archive_after_days=7)
    _history(conn, settings)
    pinned = add(conn, settings, row("A pinned rule from long ago.", pinned=True, age_days=30))
    report = ClustererJob().run(context(conn, settings))
    archived = conn.execute(
        "SELECT message, archived_at FROM memory WHERE NOT is_active"
    ).fetchall()
    assert [(m, a) for m, a in archived] == [
        ("The capture daemon writes every turn into the memory pool.", NOW)
    ]
    assert "archived 1 row(s)" in " ".join(report.notes)
    state = conn.execute("SELECT is_active FROM memory WHERE id = %s", (pinned[0],)).fetchone()
    assert state is not None and state[0] is True
    user_id = context(conn, settings).user_id

    def found(include_archived: bool) -> int:
        result = search_memories(
            conn,
            user_id,
            query="capture daemon",
            query_vector=None,
            filters=SearchFilters(include_archived=include_archived),
            tuning=SearchTuning(),
        )
        return len(result.hits)

    assert (found(False), found(True)) == (0, 1)


def test_the_clusterer_works_through_the_real_client_and_the_fake_server(
    conn: psycopg.Connection[Any], make_settings: Any, db_url: str
) -> None:
    with real_llm(make_settings, db_url) as (server, llm):
        settings = make_settings(database_url=db_url)
        _history(conn, settings)
        server.queue(*({"summary": f"summary {i}"} for i in range(4)))
        report = ClustererJob().run(context(conn, settings, llm=llm))
        assert report.llm_calls == 4
        assert sorted(f[4] for f in _summaries(conn)) == [f"summary {i}" for i in range(4)]
