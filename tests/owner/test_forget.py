"""``mcp-agents-memory forget``: physical deletion with tombstones, derived text handled, and
nothing forgotten comes back through capture. Real transcripts, real database, the real CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.ops.forget import apply_forget, plan_forget
from agents_memory.store.entry import open_user_connection
from agents_memory.store.knowledge import set_profile
from agents_memory.store.owner.forget import Selection
from tests.capture.transcripts import claude_exchange, claude_session_path
from tests.owner.helpers import (
    SPOTTER_SESSION,
    count,
    env_for,
    place_spotter,
    run,
    run_backfill,
    session_rows,
)

OTHER = "other-session"


@pytest.fixture
def pool(settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]) -> Path:
    """The real spotter transcript and another session, captured; ``tmp_path`` is home."""
    place_spotter(tmp_path)
    other = claude_session_path(tmp_path, OTHER)
    other.write_bytes(b"".join(claude_exchange(OTHER, n) for n in range(3)))
    run_backfill(settings, tmp_path)
    assert session_rows(conn, SPOTTER_SESSION) > 0
    assert session_rows(conn, OTHER) == 6
    return tmp_path


def _ids(conn: psycopg.Connection[Any], session: str) -> list[int]:
    rows = conn.execute(
        "SELECT id FROM memory WHERE session_id = %s ORDER BY id", (session,)
    ).fetchall()
    conn.commit()
    return [int(r[0]) for r in rows]


def _messages(conn: psycopg.Connection[Any], session: str) -> list[str]:
    rows = conn.execute("SELECT message FROM memory WHERE session_id = %s", (session,)).fetchall()
    conn.commit()
    return [str(r[0]) for r in rows]


def _derive(conn: psycopg.Connection[Any], forgotten: list[int], kept: list[int]) -> None:
    """History, vectors, two summaries (one all forgotten, one mixed), a profile and the
    librarian's watermark built from the rows, as the Cold Path would have left them."""
    uid = count(conn, "SELECT user_id FROM users WHERE user_name = 'tester'")
    conn.execute(
        "INSERT INTO memory_history (memory_id, old_message, changed_by)"
        " SELECT id, 'an older wording', 'test' FROM memory WHERE id = ANY(%s)",
        (forgotten[:2],),
    )
    conn.execute(
        "UPDATE memory SET embedding = array_fill(0.1, ARRAY[384])::halfvec WHERE id = ANY(%s)",
        (forgotten + kept,),
    )
    for start, sources, text in (
        ("2026-01-05", forgotten[:2], "spotter only: phoenix in the background"),
        ("2026-01-12", [*forgotten[2:], *kept], "mixed: phoenix and the other session"),
    ):
        conn.execute(
            "INSERT INTO tag_summaries (user_id, d_tag, period_start, period_end, summary,"
            " source_ids, model) VALUES (%s, '/work/proj', %s, %s::date + 7, %s, %s, 'llm')",
            (uid, start, start, text, sources),
        )
    conn.execute(
        "UPDATE users SET librarian_last_run_at = now(), librarian_msg_count_at_run = 99"
        " WHERE user_id = %s",
        (uid,),
    )
    set_profile(
        conn, uid, "core_profile", "Works on phoenix.", changed_by="librarian", sources=forgotten
    )
    conn.commit()


def test_forgetting_a_session_deletes_rows_history_vectors_and_derived_text_and_keeps_tombstones_without_text(  # noqa: E501
    pool: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    forgotten, kept = _ids(conn, SPOTTER_SESSION), _ids(conn, OTHER)
    texts = _messages(conn, SPOTTER_SESSION)
    _derive(conn, forgotten, kept)

    done = run(
        "mcp-agents-memory",
        "forget",
        "--session",
        SPOTTER_SESSION,
        "--yes",
        env=env_for(db_url, pool),
    )

    assert done.returncode == 0, done.stderr
    assert f"forgot {len(forgotten)} memories (2 history entries)" in done.stdout
    assert "summaries: 1 dropped, 1 rebuilt" in done.stdout
    assert "profile: core profile built from forgotten turns emptied" in done.stdout
    assert session_rows(conn, SPOTTER_SESSION) == 0
    assert _ids(conn, OTHER) == kept
    assert (
        count(conn, "SELECT count(*) FROM memory_history WHERE memory_id = ANY(%s)", forgotten) == 0
    )
    assert count(conn, "SELECT count(*) FROM memory WHERE embedding IS NOT NULL") == len(kept)
    # Tombstones: one per forgotten turn, its key and a hash, never its text.
    rows = conn.execute("SELECT * FROM tombstones").fetchall()
    conn.commit()
    assert len(rows) == len(forgotten)
    stored = " ".join(str(value) for row in rows for value in row)
    assert not any(len(t) > 20 and t[:20] in stored for t in texts)
    # Summaries: the all-forgotten one is gone; the mixed one lost the forgotten sources, was
    # rewritten from the rows left and waits for the Clusterer.
    summaries = conn.execute(
        "SELECT source_ids, summary, stale, model FROM tag_summaries"
    ).fetchall()
    conn.commit()
    assert len(summaries) == 1
    sources, summary, stale, model = summaries[0]
    assert sorted(sources) == kept and stale and model == "extractive"
    assert "phoenix" not in summary
    watermark = conn.execute(
        "SELECT librarian_last_run_at, librarian_msg_count_at_run FROM users"
    ).fetchone()
    conn.commit()
    assert watermark == (None, None)


def test_a_forgotten_session_stays_gone_after_truncation_rescan_and_backfill(
    pool: Path, settings: Settings, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    env = env_for(db_url, pool)
    assert (
        run("mcp-agents-memory", "forget", "--session", SPOTTER_SESSION, "-y", env=env).returncode
        == 0
    )
    transcript = next((pool / ".claude").rglob(f"{SPOTTER_SESSION}.jsonl"))
    whole = transcript.read_bytes()
    transcript.write_bytes(whole[: len(whole) // 3])  # truncated: its cursor restarts

    run_backfill(settings, pool)
    transcript.write_bytes(whole)  # and back to the whole file: rescanned from the start
    again = run("memory-capture", "backfill", env=env)

    assert again.returncode == 0, again.stderr
    assert session_rows(conn, SPOTTER_SESSION) == 0
    assert session_rows(conn, OTHER) == 6


def test_a_dry_run_shows_the_count_and_a_sample_and_writes_nothing(
    pool: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    before = count(conn, "SELECT count(*) FROM memory")

    shown = run(
        "mcp-agents-memory", "forget", "--session", OTHER, "--dry-run", env=env_for(db_url, pool)
    )

    assert shown.returncode == 0, shown.stderr
    assert "6 memories would be forgotten" in shown.stdout
    assert "… and 1 more" in shown.stdout
    assert sum(line.startswith("  #") for line in shown.stdout.splitlines()) == 5
    assert count(conn, "SELECT count(*) FROM memory") == before
    assert count(conn, "SELECT count(*) FROM tombstones") == 0


def test_forget_asks_first_and_a_no_forgets_nothing(
    pool: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    env = env_for(db_url, pool)

    declined = run("mcp-agents-memory", "forget", "--session", OTHER, env=env, stdin="n\n")
    assert declined.returncode == 0, declined.stderr
    assert "Forget these 6 memories for good?" in declined.stdout
    assert "nothing was forgotten" in declined.stdout
    assert session_rows(conn, OTHER) == 6

    accepted = run("mcp-agents-memory", "forget", "--session", OTHER, env=env, stdin="y\n")
    assert accepted.returncode == 0, accepted.stderr
    assert session_rows(conn, OTHER) == 0


def test_forget_by_match_shows_the_hits_and_their_scores_and_takes_those_above_min_score(
    pool: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    env = env_for(db_url, pool)

    shown = run(
        "mcp-agents-memory", "forget", "--match", "phoenix background", "--dry-run", env=env
    )

    assert shown.returncode == 0, shown.stderr
    assert "search hits (forgotten when the score is at least 0.5)" in shown.stdout
    assert "forget score 1.000" in shown.stdout  # the best hit
    assert "keep   score 0.000" in shown.stdout  # a session neighbour without the words
    planned = int(shown.stdout.split(" memories would be forgotten")[0].rsplit("\n", 1)[-1])
    assert planned >= 1

    done = run("mcp-agents-memory", "forget", "--match", "phoenix background", "--yes", env=env)

    assert done.returncode == 0, done.stderr
    assert f"forgot {planned} memories" in done.stdout
    assert (
        count(conn, "SELECT count(*) FROM memory WHERE message ILIKE '%%phoenix in background%%'")
        == 0
    )
    assert session_rows(conn, OTHER) == 6


def test_forget_without_a_condition_is_one_line_and_exit_1(pool: Path, db_url: str) -> None:
    refused = run("mcp-agents-memory", "forget", "--yes", env=env_for(db_url, pool))

    assert refused.returncode == 1
    assert refused.stderr.strip().count("\n") == 0
    assert "say what to forget" in refused.stderr


def test_forget_by_ids_and_period_takes_only_rows_meeting_every_condition(
    settings: Settings, pool: Path, conn: psycopg.Connection[Any]
) -> None:
    ids = _ids(conn, OTHER)
    now = datetime.now(UTC)
    with open_user_connection(settings) as opened:
        wrong_period = plan_forget(
            opened.conn,
            opened.user_id,
            settings,
            Selection(ids=tuple(ids[:2]), until=datetime(2020, 1, 1, tzinfo=UTC)),
            now=now,
        )
        plan = plan_forget(
            opened.conn,
            opened.user_id,
            settings,
            Selection(ids=tuple(ids[:2]), platform="claude-code"),
            now=now,
        )
        report = apply_forget(opened.conn, opened.user_id, settings, plan)

    assert wrong_period.count == 0
    assert plan.ids == ids[:2] and report.rows == 2
    assert _ids(conn, OTHER) == ids[2:]
