"""A record kept after its invalid UTF-8 was replaced is counted where people look: the
file's cursor, the backfill summary and ``status`` (real CLI, real database)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from agents_memory.store.capture import cursors
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_assistant, claude_session_path, claude_user


def _spoiled(session: str) -> bytes:
    """A user turn with one byte of its text replaced by ``\\xff``, and a clean answer."""
    user = claude_user(session, f"{session}: rename the widget", 1)
    return user.replace(b"widget", b"\xffidget") + claude_assistant(session, "renamed it", 1)


def test_invalid_utf8_in_a_turn_is_stored_repaired_and_counted_in_backfill_and_status(
    tmp_path: Path, db_url: str
) -> None:
    path = claude_session_path(tmp_path, "s-bytes")
    path.write_bytes(_spoiled("s-bytes"))

    text = memory_capture(tmp_path, db_url, "backfill")
    claude_session_path(tmp_path, "s-later").write_bytes(_spoiled("s-later"))
    backfilled = memory_capture(tmp_path, db_url, "backfill", "--json")
    status = memory_capture(tmp_path, db_url, "status", "--json")
    shown = memory_capture(tmp_path, db_url, "status")

    assert text.returncode == 0, text.stderr
    assert "claude-code: 1 line with invalid UTF-8 repaired" in text.stdout
    report = json.loads(backfilled.stdout)["platforms"]["claude-code"]
    assert (report["inserted"], report["repaired"], report["issues"]) == (2, 1, 0)
    with psycopg.connect(db_url) as conn:
        stored = conn.execute("SELECT message FROM memory ORDER BY id").fetchall()
        cursor = cursors.get_cursor(conn, "test-device", str(path))
    assert [row[0] for row in stored][:2] == ["s-bytes: rename the \ufffdidget", "renamed it"]
    assert cursor is not None and (cursor.repaired, cursor.issues) == (1, 0)
    assert json.loads(status.stdout)["platforms"]["claude-code"]["repaired"] == 2
    assert "claude-code: 2 lines with invalid UTF-8 repaired" in shown.stdout
