"""Backfill with its read-ahead thread: regions read before their transaction are stored only
when the file's cursor is still where they were read from. Real files, real database."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import all_adapters, get_adapter
from agents_memory.capture import tailer
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.capture.pipeline import Ingestor
from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.capture import cursors
from agents_memory.store.memories import ensure_user
from tests.capture.transcripts import claude_assistant, claude_session_path, claude_user


def _exchanges(session: str, exchanges: range) -> bytes:
    """User turns are keyed by time and text: each session gets texts of its own."""
    return b"".join(
        claude_user(session, f"{session} asks {n}", n)
        + claude_assistant(session, f"{session} answers {n}", n)
        for n in exchanges
    )


def _texts(session: str, exchanges: range) -> list[str]:
    return sorted(t for n in exchanges for t in (f"{session} asks {n}", f"{session} answers {n}"))


def _write(path: Path, exchanges: range, mtime: float) -> None:
    path.write_bytes(_exchanges(path.stem, exchanges))
    os.utime(path, (mtime, mtime))


def _messages(conn: psycopg.Connection[Any], session: str) -> list[str]:
    rows = conn.execute(
        "SELECT message FROM memory WHERE session_id = %s ORDER BY id", (session,)
    ).fetchall()
    return [r[0] for r in rows]


def test_file_whose_cursor_moved_after_it_was_read_ahead_is_read_again_from_the_cursor(
    settings: Settings, tmp_path: Path, db: database.Database
) -> None:
    first = claude_session_path(tmp_path, "s-first")
    second = claude_session_path(tmp_path, "s-second")
    _write(first, range(10), 1_000_000)
    _write(second, range(10), 2_000_000)
    adapter = get_adapter("claude-code")

    def other_process_moves_the_second_cursor(path: Path, done: int, _total: int) -> None:
        # By now the read-ahead has (most likely) read the second file from offset 0.
        if done != 1:
            return
        assert path == first
        with database.connect(db) as other:
            uid = ensure_user(other, settings.user_name)
            other.commit()
            ingestor = Ingestor(settings, user_id=uid, has_vector=True, home=tmp_path)
            ingestor.ingest_file(other, second, adapter, final=True)
        with second.open("ab") as handle:
            handle.write(_exchanges("s-second", range(10, 15)))

    report = backfill(
        settings, Catalog(all_adapters(), tmp_path), progress=other_process_moves_the_second_cursor
    )

    assert report.platforms["claude-code"].inserted == 20 + 10
    with database.connect(db) as conn:
        assert sorted(_messages(conn, "s-first")) == _texts("s-first", range(10))
        assert sorted(_messages(conn, "s-second")) == _texts("s-second", range(15))
        cursor = cursors.get_cursor(conn, settings.device_name, str(second))
        assert cursor is not None and cursor.offset == second.stat().st_size


def test_file_longer_than_one_read_is_stored_region_by_region_once(
    settings: Settings, tmp_path: Path, db: database.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tailer, "CHUNK_BYTES", 2048)  # many regions from a small file
    paths = [claude_session_path(tmp_path, f"s-long-{i}") for i in range(3)]
    for i, path in enumerate(paths):
        _write(path, range(40), 1_000_000 + i)
    catalog = Catalog(all_adapters(), tmp_path)

    report = backfill(settings, catalog)
    again = backfill(settings, catalog)

    assert report.stored == 3 * 80
    assert again.stored == 0 and again.turns_seen == 0
    with database.connect(db) as conn:
        for path in paths:
            assert sorted(_messages(conn, path.stem)) == _texts(path.stem, range(40))
            cursor = cursors.get_cursor(conn, settings.device_name, str(path))
            assert cursor is not None and cursor.offset == path.stat().st_size
        row = conn.execute("SELECT count(*), count(DISTINCT external_uuid) FROM memory").fetchone()
        assert row == (240, 240)


def test_backfill_leaves_the_session_committing_synchronously_again(
    settings: Settings, tmp_path: Path, db: database.Database
) -> None:
    path = claude_session_path(tmp_path, "s-flush")
    _write(path, range(3), 1_000_000)
    with database.connect(db) as conn:
        with cursors.deferred_flush(conn):
            row = conn.execute("SHOW synchronous_commit").fetchone()
            assert row == ("off",)
        row = conn.execute("SHOW synchronous_commit").fetchone()
        assert row == ("on",)
    assert backfill(settings, Catalog(all_adapters(), tmp_path)).stored == 6
