"""The ingest pipeline in process: real files, real database, real adapters."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import all_adapters, get_adapter, names
from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.capture.pipeline import Ingestor
from agents_memory.config import Settings
from agents_memory.store import database
from agents_memory.store.capture import cursors
from agents_memory.store.memories import ensure_user
from tests.capture.transcripts import (
    claude_assistant,
    claude_exchange,
    claude_session_path,
    claude_user,
    expected_texts,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"


def lay_out_fixture_home(home: Path) -> dict[str, int]:
    """Copy the real transcripts where each client keeps them; returns files per platform."""
    claude = home / ".claude" / "projects" / "-proj"
    claude.mkdir(parents=True)
    for src in [
        *FIXTURES.glob("claude-code/*.jsonl"),
        *FIXTURES.glob("generated/claude/*/*-*-*.jsonl"),
    ]:
        if src.name != "hook-payloads.jsonl":
            shutil.copy(src, claude / f"{src.parent.name}-{src.name}")
    codex = home / ".codex" / "sessions" / "2026" / "11" / "30"
    codex.mkdir(parents=True)
    for src in [*FIXTURES.glob("codex/*.jsonl"), *FIXTURES.glob("generated/codex/*/*rollout*")]:
        shutil.copy(src, codex / f"rollout-{src.name}")
    gemini = home / ".gemini" / "tmp" / "proj" / "chats"
    gemini.mkdir(parents=True)
    for src in [*FIXTURES.glob("gemini-cli/*"), *FIXTURES.glob("generated/gemini/*/*session*")]:
        shutil.copy(src, gemini / f"session-{src.name}")
    grok = home / ".grok" / "sessions" / "%2Fwork%2Fproj"
    shutil.copytree(FIXTURES / "grok" / "session", grok / "s1")
    shutil.copytree(FIXTURES / "grok" / "subagent", grok / "s2")
    agy = home / ".gemini" / "antigravity-cli" / "brain" / "c1" / ".system_generated" / "logs"
    agy.mkdir(parents=True)
    shutil.copy(next(FIXTURES.glob("antigravity/*.jsonl")), agy / "transcript_full.jsonl")
    # The SQLite stores go in under the names the programs give them (the fixture's carries its
    # version).
    opencode = home / ".local" / "share" / "opencode"
    opencode.mkdir(parents=True)
    shutil.copy(FIXTURES / "opencode" / "opencode-1.18.33.db", opencode / "opencode.db")
    hermes = home / ".hermes"
    hermes.mkdir()
    shutil.copy(FIXTURES / "hermes" / "state-0.19.0.db", hermes / "state.db")
    return {
        "claude-code": 12,
        "codex-cli": 6,
        "gemini-cli": 7,
        "grok": 2,
        "antigravity": 1,
        "opencode": 1,
        "hermes": 1,
    }


def _ingestor(conn: psycopg.Connection[Any], settings: Settings, home: Path) -> Ingestor:
    uid = ensure_user(conn, settings.user_name)
    conn.commit()
    return Ingestor(settings, user_id=uid, has_vector=True, home=home)


def _messages(conn: psycopg.Connection[Any]) -> list[str]:
    return [r[0] for r in conn.execute("SELECT message FROM memory ORDER BY id").fetchall()]


def test_backfill_of_every_real_fixture_stores_each_turn_once(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    files = lay_out_fixture_home(tmp_path)
    catalog = Catalog(all_adapters(), tmp_path)
    first = backfill(settings, catalog)
    assert {k: v.files for k, v in first.platforms.items()} == files
    assert all(v.inserted > 0 for v in first.platforms.values())
    again = backfill(settings, catalog)
    assert again.stored == 0
    total = conn.execute("SELECT count(*), count(DISTINCT external_uuid) FROM memory").fetchone()
    assert total is not None and total[0] == total[1] == first.stored
    # The two real Claude 2.1.332 headless runs said "hello" and got the fake model's reply.
    hello = conn.execute(
        "SELECT count(*) FROM memory WHERE agent_platform = 'claude-code' AND role = 'user'"
        " AND message = 'hello'"
    ).fetchone()
    assert hello is not None and hello[0] >= 2


def test_turns_come_through_redacted_private_free_and_without_brief_echoes(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = claude_session_path(tmp_path, "s-filters")
    secret = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1"
    path.write_bytes(
        claude_user("s-filters", f"my key is OPENAI_API_KEY={secret} please use it", 1)
        + claude_user("s-filters", "keep this <private>but not this</private> part", 2)
        + claude_user("s-filters", "<private>all of it</private>", 3)
        + claude_user("s-filters", f"{BRIEF_MARKER}\n# Memory brief\nstale", 4)
        + claude_assistant("s-filters", "done", 4)
    )
    ingestor = _ingestor(conn, settings, tmp_path)
    outcome = ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)
    stored = _messages(conn)
    assert outcome.dropped == 2
    assert len(stored) == 3
    assert secret not in " ".join(stored)
    assert "[redacted:" in stored[0] and "OPENAI_API_KEY=" in stored[0]
    assert "but not this" not in stored[1] and "keep this" in stored[1]
    assert all(BRIEF_MARKER not in m for m in stored)
    raw = conn.execute("SELECT raw_message FROM memory WHERE raw_message IS NOT NULL").fetchall()
    assert all(secret not in r[0] for r in raw)


def test_excluded_projects_are_not_captured(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url=db_url, capture_exclude=("/work/secret*",))
    path = claude_session_path(tmp_path, "s-excl")
    path.write_bytes(
        claude_exchange("s-excl", 1, cwd="/work/secret-project")
        + claude_exchange("s-excl", 2, cwd="/work/open")
    )
    with database.connect(database.locate_database(settings)) as conn:
        ingestor = _ingestor(conn, settings, tmp_path)
        outcome = ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)
        assert outcome.dropped == 2
        assert set(_messages(conn)) == expected_texts(1, start=2)


def test_partial_trailing_line_waits_until_complete(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = claude_session_path(tmp_path, "s-partial")
    line = claude_user("s-partial", "a complete thought", 1)
    path.write_bytes(claude_exchange("s-partial", 0) + line[:25])
    ingestor = _ingestor(conn, settings, tmp_path)
    adapter = get_adapter("claude-code")
    ingestor.ingest_file(conn, path, adapter, final=False)
    assert set(_messages(conn)) == expected_texts(1)
    with path.open("ab") as handle:
        handle.write(line[25:])
    ingestor.ingest_file(conn, path, adapter, final=False)
    ingestor.ingest_file(conn, path, adapter, final=True)
    assert sorted(_messages(conn)) == sorted([*expected_texts(1), "a complete thought"])


def test_assistant_blocks_split_across_reads_end_as_one_row(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    """Claude writes one line per content block; a read boundary may fall between them."""
    path = claude_session_path(tmp_path, "s-blocks")
    first = claude_assistant("s-blocks", "first block.", 7)
    second = first.replace(b"first block.", b"second block.").replace(
        b'"requestId"', b'"x":1,"requestId"'
    )
    path.write_bytes(claude_user("s-blocks", "go", 6) + first)
    ingestor = _ingestor(conn, settings, tmp_path)
    adapter = get_adapter("claude-code")
    ingestor.ingest_file(conn, path, adapter, final=False)
    with path.open("ab") as handle:
        handle.write(second)
    ingestor.ingest_file(conn, path, adapter, final=False)
    rows = conn.execute("SELECT message FROM memory WHERE role = 'assistant'").fetchall()
    assert len(rows) == 1
    assert "first block." in rows[0][0] and "second block." in rows[0][0]


def test_truncated_file_is_rescanned_without_duplicates(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = claude_session_path(tmp_path, "s-trunc")
    path.write_bytes(b"".join(claude_exchange("s-trunc", n) for n in range(5)))
    ingestor = _ingestor(conn, settings, tmp_path)
    adapter = get_adapter("claude-code")
    ingestor.ingest_file(conn, path, adapter, final=True)
    path.write_bytes(b"".join(claude_exchange("s-trunc", n) for n in range(5, 7)))
    outcome = ingestor.ingest_file(conn, path, adapter, final=True)
    assert outcome.restarted
    assert sorted(_messages(conn)) == sorted(expected_texts(7))
    cursor = cursors.get_cursor(conn, settings.device_name, str(path))
    assert cursor is not None and cursor.rescans == 1 and cursor.offset == path.stat().st_size


def test_bad_lines_are_reported_and_the_rest_is_kept(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = claude_session_path(tmp_path, "s-bad")
    path.write_bytes(
        claude_exchange("s-bad", 0)
        + b"\xff\xfe not utf-8 \xc3\x28\n"
        + b"\x00\x01\x02binary garbage\x00\n"
        + b"{truncated json\n"
        + b"\n"
        + claude_exchange("s-bad", 1)
    )
    empty = claude_session_path(tmp_path, "s-empty")
    empty.write_bytes(b"")
    ingestor = _ingestor(conn, settings, tmp_path)
    adapter = get_adapter("claude-code")
    outcome = ingestor.ingest_file(conn, path, adapter, final=True)
    assert outcome.issues >= 3
    assert ingestor.ingest_file(conn, empty, adapter, final=True).stored == 0
    assert sorted(_messages(conn)) == sorted(expected_texts(2))
    cursor = cursors.get_cursor(conn, settings.device_name, str(path))
    assert cursor is not None and cursor.issues == outcome.issues
    assert cursor.last_issue is not None and "offset" in cursor.last_issue


def test_two_ingestors_racing_on_one_file_store_each_turn_once(
    settings: Settings, tmp_path: Path, db: database.Database
) -> None:
    path = claude_session_path(tmp_path, "s-race")
    adapter = get_adapter("claude-code")
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with database.connect(db) as conn:
                ingestor = _ingestor(conn, settings, tmp_path)
                while not stop.is_set():
                    ingestor.ingest_file(conn, path, adapter, final=False)
                ingestor.ingest_file(conn, path, adapter, final=True)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    path.write_bytes(b"")
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for n in range(300):
        with path.open("ab") as handle:
            handle.write(claude_exchange("s-race", n))
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    with database.connect(db) as conn:
        row = conn.execute("SELECT count(*), count(DISTINCT external_uuid) FROM memory").fetchone()
        assert row == (600, 600)
        assert sorted(_messages(conn)) == sorted(expected_texts(300))


@pytest.mark.parametrize("name", names())
def test_every_adapter_finds_its_fixture_files(name: str, tmp_path: Path) -> None:
    lay_out_fixture_home(tmp_path)
    catalog = Catalog([get_adapter(name)], tmp_path)
    found = list(catalog.transcripts())
    assert found
    assert all(catalog.owner(path) is not None for path, _ in found)


def test_stored_turns_notify_the_cold_path_with_their_count_and_no_new_turns_stay_quiet(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    path = claude_session_path(tmp_path, "s-notify")
    path.write_bytes(claude_exchange("s-notify", 1))
    with psycopg.connect(conn.info.dsn, autocommit=True) as listener:
        listener.execute("LISTEN agents_memory_new")
        ingestor = _ingestor(conn, settings, tmp_path)
        ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
        assert heard == ["2"]
        ingestor.ingest_file(conn, path, get_adapter("claude-code"), final=True)
        conn.execute("SELECT pg_notify('agents_memory_new', 'sentinel')")
        conn.commit()
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
        assert heard == ["sentinel"]
