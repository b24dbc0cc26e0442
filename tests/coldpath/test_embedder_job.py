"""The embedder job: claiming, writing, per-row errors and cooldowns, pauses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import psycopg
import pytest

from agents_memory.coldpath.embedder import BATCH_TOKENS, MIN_BATCH_TOKENS, EmbedderJob
from agents_memory.config import Settings
from agents_memory.embeddings import create_embedder, to_halfvec
from agents_memory.store import migrate
from agents_memory.store.coldpath import coldqueue
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.passages import CONTEXT_CHARS, passage_of, passage_text
from tests.coldpath.embedding_helpers import ScriptedEmbedder, add_rows, job_context

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def states(conn: psycopg.Connection[Any]) -> dict[int, tuple[bool, str | None, int]]:
    rows = conn.execute(
        "SELECT id, embedding IS NOT NULL, cold_error, cold_attempts FROM memory"
    ).fetchall()
    conn.commit()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def test_one_batch_per_run_active_rows_first_then_newest(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    ids = add_rows(conn, [f"row {i}" for i in range(40)])
    conn.execute(
        "UPDATE memory SET is_active = false, archived_at = now() WHERE id = %s", (ids[-1],)
    )
    conn.commit()
    embedder = ScriptedEmbedder()
    report = EmbedderJob(batch_tokens=None).run(job_context(conn, settings, embedder))
    assert report.processed == 32  # COLD_PATH_EMBED_BATCH_SIZE
    assert embedder.seen == [f"row {i}" for i in range(38, 6, -1)]
    report = EmbedderJob(batch_tokens=None).run(job_context(conn, settings, embedder))
    assert report.processed == 8
    assert embedder.seen[-1] == "row 39"  # the archived row comes last


def test_the_old_order_oldest_first_stays_available_for_benchmarks(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    add_rows(conn, [f"row {i}" for i in range(10)])
    embedder = ScriptedEmbedder()
    job = EmbedderJob(newest_first=False, batch_tokens=None)
    job.run(job_context(conn, settings, embedder, batch_size=4))
    assert embedder.seen[:4] == ["row 0", "row 1", "row 2", "row 3"]


def test_a_batch_stays_within_the_token_budget_but_always_takes_one_row(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    add_rows(conn, ["x" * 3000, *(f"short {i} " + "y" * 70 for i in range(12))])
    embedder = ScriptedEmbedder()
    job = EmbedderJob()
    budget = job.token_budget()
    job.run(job_context(conn, settings, embedder))
    first = embedder.batches[0]
    assert 1 < len(first) < 12
    assert sum(embedder.token_estimate(len(t)) for t in first) <= budget
    while EmbedderJob().run(job_context(conn, settings, embedder)).processed:
        pass  # a new job each time: the budget does not grow with the measured rate
    assert ["x" * 3000] in embedder.batches  # over any budget: alone in its batch
    assert sum(len(b) for b in embedder.batches) == 13


def test_the_budget_follows_the_measured_rate_within_its_bounds() -> None:
    job = EmbedderJob()
    embedder = ScriptedEmbedder()
    job._learn_rate(embedder, ["z" * 3000] * 10, 100.0)  # ~10 tokens/s: a crawling machine
    assert job.token_budget() == MIN_BATCH_TOKENS
    for _ in range(20):
        job._learn_rate(embedder, ["z" * 3000] * 10, 0.001)
    assert job.token_budget() == BATCH_TOKENS


def test_identical_texts_in_a_batch_are_embedded_once_and_share_the_vector(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    ids = add_rows(conn, ["continue", "continue", "something else", "continue"])
    embedder = ScriptedEmbedder()
    report = EmbedderJob().run(job_context(conn, settings, embedder))
    assert report.processed == 4
    assert sorted(embedder.seen) == ["continue", "something else"]
    vectors = dict(
        conn.execute("SELECT id, embedding::text FROM memory WHERE id = ANY(%s)", (ids,))
    )
    assert vectors[ids[0]] == vectors[ids[1]] == vectors[ids[3]] != vectors[ids[2]]
    model = conn.execute("SELECT DISTINCT embedding_model FROM memory").fetchall()
    assert model == [(embedder.spec.model,)]


def test_drain_embeds_everything_and_reports_throughput(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    add_rows(conn, [f"row {i}" for i in range(100)])
    seen: list[tuple[int, int]] = []
    ctx = job_context(conn, settings, ScriptedEmbedder(), drain=True)
    ctx.progress = lambda job, done, total: seen.append((done, total))
    report = EmbedderJob().run(ctx)
    assert report.processed == 100
    assert seen[-1] == (100, 100)
    assert any("rows/s" in note for note in report.notes)


def test_a_failing_row_gets_cold_error_and_waits_out_its_cooldown(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    good, bad, archived_bad = add_rows(conn, ["fine", "POISON pill", "old POISON"])
    conn.execute(
        "UPDATE memory SET is_active = false, archived_at = now() WHERE id = %s",
        (archived_bad,),
    )
    conn.commit()
    embedder = ScriptedEmbedder()
    job = EmbedderJob()

    report = job.run(job_context(conn, settings, embedder, now=T0))
    assert (report.processed, report.failed) == (1, 2)
    after = states(conn)
    assert after[good] == (True, None, 0)
    assert after[bad][0] is False and after[bad][2] == 1
    assert str(after[bad][1]).startswith("embedder: EmbeddingUnavailableError: the backend choked")
    cooldowns = dict(conn.execute("SELECT id, cold_next_at FROM memory").fetchall())
    assert cooldowns[bad] == T0 + timedelta(minutes=5)
    assert cooldowns[archived_bad] == T0 + timedelta(hours=1)

    embedder.batches.clear()
    report = job.run(job_context(conn, settings, embedder, now=T0 + timedelta(minutes=4)))
    assert (report.processed, report.failed) == (0, 0)
    assert embedder.batches == []  # nothing claimed inside the cooldown

    report = job.run(job_context(conn, settings, embedder, now=T0 + timedelta(minutes=6)))
    assert report.failed == 1
    assert "POISON pill" in embedder.seen and "old POISON" not in embedder.seen
    assert states(conn)[bad][2] == 2


def test_a_row_that_later_succeeds_loses_its_error(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    (row,) = add_rows(conn, ["POISON today"])
    embedder = ScriptedEmbedder()
    EmbedderJob().run(job_context(conn, settings, embedder, now=T0))
    embedder.fail_marker = "nothing matches this"
    EmbedderJob().run(job_context(conn, settings, embedder, now=T0 + timedelta(minutes=10)))
    assert states(conn)[row] == (True, None, 1)


def test_a_backend_outage_pauses_the_job_without_marking_rows(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    add_rows(conn, ["a", "b", "c"])
    embedder = ScriptedEmbedder()
    embedder.down = True
    job = EmbedderJob()
    report = job.run(job_context(conn, settings, embedder))
    assert (report.processed, report.failed) == (0, 0)
    assert "paused for 60 s" in report.notes[0]
    assert all(error is None for _, error, _ in states(conn).values())
    embedder.down = False
    assert (
        "paused after an embedding backend failure"
        in job.run(job_context(conn, settings, embedder)).notes[0]
    )


def test_a_stamp_of_another_model_pauses_the_job(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    add_rows(conn, ["a"])
    report = EmbedderJob().run(job_context(conn, settings, ScriptedEmbedder(dim=8, model="m8")))
    assert report.processed == 0
    assert "run `mcp-agents-memory reembed`" in report.notes[0]


def test_full_text_only_database_disables_the_job_with_a_note(
    make_settings: Any, empty_db_url: str
) -> None:
    with psycopg.connect(empty_db_url, autocommit=True) as setup:
        migrate.migrate(setup)  # no vector column
    settings = make_settings(database_url=empty_db_url)
    with psycopg.connect(empty_db_url) as conn:
        add_rows(conn, ["a"], has_vector=False)
        report = EmbedderJob().run(job_context(conn, settings, ScriptedEmbedder()))
    assert report.processed == 0
    assert report.notes == ["full-text only: the database has no vector column (pgvector missing)"]


def test_no_embedding_backend_disables_the_job(make_settings: Any) -> None:
    assert not EmbedderJob().enabled(make_settings(embedding_backend="none"))
    assert EmbedderJob().enabled(make_settings())


@pytest.mark.timeout(300)
def test_the_real_local_model_embeds_rows_in_three_languages(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    ids = add_rows(
        conn,
        [
            "the HNSW index needs a rebuild",
            "인덱스를 다시 만들어야 해요",
            "индекс нужно перестроить",
        ],
    )
    embedder = create_embedder(settings)
    assert embedder is not None
    with embedder:
        report = EmbedderJob().run(job_context(conn, settings, embedder, drain=True))
    assert report.processed == 3
    norms = conn.execute(
        "SELECT id, l2_norm(embedding) FROM memory WHERE id = ANY(%s)", (ids,)
    ).fetchall()
    assert all(abs(float(norm) - 1.0) < 1e-2 for _, norm in norms)


def test_a_turn_is_embedded_after_the_end_of_the_turn_before_it_in_its_session(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    uid = ensure_user(conn, "tester")
    long_question = "x" * 600 + " which day suits you for the deploy?"
    rows = [
        NewMemory("claude-code", "user", long_question, session_id="s1", message_at=T0),
        NewMemory(
            "claude-code",
            "assistant",
            "Yes, next Tuesday!",
            session_id="s1",
            message_at=T0 + timedelta(seconds=5),
        ),
        NewMemory(  # another session: no context from s1
            "claude-code", "user", "a new topic", session_id="s2", message_at=T0 + timedelta(1)
        ),
        NewMemory("claude-code", "user", "a pinned fact", message_at=T0 + timedelta(2)),
    ]
    insert_memories(conn, uid, rows, has_vector=True)
    conn.commit()
    embedder = ScriptedEmbedder()
    report = EmbedderJob().run(job_context(conn, settings, embedder, drain=True))
    assert report.processed == 4
    context = long_question[-CONTEXT_CHARS:]
    assert sorted(embedder.seen) == sorted(
        [long_question, f"{context}\nYes, next Tuesday!", "a new topic", "a pinned fact"]
    )
    assert passage_text("a", None) == passage_text("a", "  ") == "a"
    # what manage_knowledge embeds when it edits a row: the same rule
    second = conn.execute("SELECT id FROM memory WHERE message = 'Yes, next Tuesday!'").fetchone()
    assert second is not None
    assert passage_of(conn, int(second[0])) == f"{context}\nYes, next Tuesday!"
    assert passage_of(conn, -1) is None


def test_the_real_local_model_finds_an_answer_through_the_turn_it_answers(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    """The point of the context: "Yes, next Tuesday!" alone says nothing about a deploy."""
    uid = ensure_user(conn, "tester")
    turns: list[tuple[Literal["user", "assistant"], str]] = [
        ("user", "which day should we deploy the billing service?"),
        ("assistant", "Next Tuesday, after the freeze ends."),
        ("user", "what should we have for lunch?"),
        ("assistant", "Pizza sounds good."),
    ]
    rows = [
        NewMemory("claude-code", role, text, session_id="s1", message_at=T0 + timedelta(seconds=i))
        for i, (role, text) in enumerate(turns)
    ]
    ids = sorted(insert_memories(conn, uid, rows, has_vector=True).ids)
    conn.commit()
    embedder = create_embedder(settings)
    assert embedder is not None
    with embedder:
        EmbedderJob().run(job_context(conn, settings, embedder, drain=True))
        query = to_halfvec(embedder.embed_queries(["when is the billing deploy?"])[0])
    best = conn.execute(  # among the two answers
        "SELECT id FROM memory WHERE id = ANY(%s) ORDER BY embedding <=> %s LIMIT 1",
        (ids[1::2], query),
    ).fetchone()
    assert best is not None and best[0] == ids[1]


def test_the_vector_column_comes_with_the_index_the_claim_reads_newest_first(
    conn: psycopg.Connection[Any],
) -> None:
    row = conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_embed_claim_time'"
    ).fetchone()
    assert row is not None and "(is_active, message_at, id) WHERE (embedding IS NULL)" in row[0]


def test_candidates_are_sized_by_the_passage_the_claim_will_build(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    uid = ensure_user(conn, "tester")
    rows = [
        NewMemory("claude-code", "user", "q" * 700, session_id="s1", message_at=T0),
        NewMemory(
            "claude-code",
            "assistant",
            "short answer",
            session_id="s1",
            message_at=T0 + timedelta(seconds=5),
        ),
        NewMemory("claude-code", "user", "no session", message_at=T0),
    ]
    insert_memories(conn, uid, rows, has_vector=True)
    conn.commit()
    sizes = dict(coldqueue.unembedded_candidates(conn, 10, now=T0))
    claimed = dict(coldqueue.claim_unembedded(conn, 10, now=T0))
    conn.rollback()
    assert sizes == {memory_id: len(text) for memory_id, text in claimed.items()}
