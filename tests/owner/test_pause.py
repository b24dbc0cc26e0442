"""``memory-capture pause`` / ``resume``: turns written while paused are never captured, not
even later; the brief and ``status`` say capture is paused. Real files, database and CLI."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.ops.pause import pause_capture
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.store.capture.pause import active_pauses
from tests.capture.transcripts import claude_exchange, claude_session_path, expected_texts
from tests.owner.helpers import count, env_for, run, run_backfill

SESSION = "paused-session"


def _texts(conn: psycopg.Connection[Any]) -> set[str]:
    rows = conn.execute("SELECT message FROM memory WHERE session_id = %s", (SESSION,)).fetchall()
    conn.commit()
    return {str(r[0]) for r in rows}


def _asked(numbers: range) -> set[str]:
    return expected_texts(len(numbers), numbers.start)


def _append(path: Path, numbers: range) -> None:
    with path.open("ab") as handle:
        handle.write(b"".join(claude_exchange(SESSION, n) for n in numbers))


def _brief(conn: psycopg.Connection[Any], settings: Settings) -> str:
    uid = count(conn, "SELECT user_id FROM users WHERE user_name = 'tester'")
    return build_brief(
        conn, settings, uid, BriefRequest(platform="claude-code", model=None, device="test-device")
    )


def test_turns_written_while_paused_are_never_captured_and_turns_after_resume_are(
    settings: Settings, tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    env = env_for(db_url, tmp_path)
    transcript = claude_session_path(tmp_path, SESSION)
    _append(transcript, range(2))
    run_backfill(settings, tmp_path)
    assert _texts(conn) == _asked(range(2))

    paused = run("memory-capture", "pause", "--platform", "claude-code", env=env)
    assert paused.returncode == 0, paused.stderr
    assert "memory capture is paused (claude-code until resumed)" in paused.stdout
    _append(transcript, range(2, 4))
    run_backfill(settings, tmp_path)
    assert _texts(conn) == _asked(range(2))
    status = run("memory-capture", "status", "--json", env=env)
    assert (
        json.loads(status.stdout)["paused"]
        == "memory capture is paused (claude-code until resumed)"
    )
    assert "memory capture is paused (claude-code until resumed)" in _brief(conn, settings)

    resumed = run("memory-capture", "resume", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "capture resumed" in resumed.stdout
    _append(transcript, range(4, 5))
    run_backfill(settings, tmp_path)
    assert _texts(conn) == _asked(range(2)) | _asked(range(4, 5))
    assert "paused" not in _brief(conn, settings)

    # Not later either: the whole file read again from the start (it was rewritten).
    whole = transcript.read_bytes()
    transcript.write_bytes(b"")
    run_backfill(settings, tmp_path)
    transcript.write_bytes(whole)
    run_backfill(settings, tmp_path)
    assert _texts(conn) == _asked(range(2)) | _asked(range(4, 5))


def test_a_pause_of_another_platform_does_not_stop_this_one(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    pause_capture(conn, "test-device", platform="codex-cli", duration=None, now=datetime.now(UTC))
    transcript = claude_session_path(tmp_path, SESSION)
    _append(transcript, range(2))

    run_backfill(settings, tmp_path)

    assert _texts(conn) == _asked(range(2))
    assert "paused" not in _brief(conn, settings)


def test_a_pause_for_a_duration_ends_by_itself(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    pause_capture(
        conn, "test-device", platform=None, duration=timedelta(seconds=1), now=datetime.now(UTC)
    )
    assert [p.platform for p in active_pauses(conn, "test-device")] == ["*"]
    conn.commit()
    deadline = time.monotonic() + 30
    while active_pauses(conn, "test-device"):
        conn.commit()
        assert time.monotonic() < deadline, "the pause did not end"
        time.sleep(0.1)
    conn.commit()
    transcript = claude_session_path(tmp_path, SESSION)
    _append(transcript, range(1))

    run_backfill(settings, tmp_path)

    assert _texts(conn) == _asked(range(1))


def test_pause_takes_durations_and_refuses_a_bad_one_or_an_unknown_platform(
    tmp_path: Path, db_url: str, conn: psycopg.Connection[Any]
) -> None:
    env = env_for(db_url, tmp_path)

    timed = run("memory-capture", "pause", "--for", "1h30m", env=env)
    bad = run("memory-capture", "pause", "--for", "soon", env=env)
    unknown = run("memory-capture", "pause", "--platform", "notepad", env=env)
    short = run("memory-capture", "resume", "--platform", "codex", env=env)

    assert timed.returncode == 0, timed.stderr
    assert "memory capture is paused (every platform until " in timed.stdout
    (pause,) = active_pauses(conn, "test-device")
    conn.commit()
    assert pause.until is not None
    assert timedelta(minutes=89) < pause.until - datetime.now(UTC) <= timedelta(minutes=90)
    assert bad.returncode == 2 and "unrecognised duration 'soon'" in bad.stderr
    assert unknown.returncode == 2 and "unknown client 'notepad'" in unknown.stderr
    assert "claude-code (claude)" in run("memory-capture", "pause", "--help", env=env).stdout
    assert short.returncode == 0 and "capture was not paused for codex-cli" in short.stdout
