"""Hermes Agent: the real 0.19.0 ``state.db``, read read-only by message id."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from agents_memory.adapters import get_adapter
from agents_memory.adapters.base import Commands

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/transcripts/hermes/state-0.19.0.db"
ADAPTER = get_adapter("hermes")


def test_the_real_store_yields_user_and_assistant_text_with_the_subagent_flagged() -> None:
    result = ADAPTER.parse(FIXTURE, b"", offset=0, state={})
    assert len(result.turns) == 8 and result.state == {"last_id": 10}
    assert next(t.text for t in result.turns if t.subagent) == "say hi from the subagent"
    assert result.turns[0].external_uuid == "hermes:20261201_200836_a03ac0:1"
    assert not result.issues and not result.unknown_kinds


def test_new_messages_after_the_cursor_are_read_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    shutil.copy(FIXTURE, path)
    state = ADAPTER.parse(path, b"", offset=0, state={}).state
    with sqlite3.connect(path) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        sid = "20261201_200836_a03ac0"
        for role, content in (("user", "one more"), ("tool", "{}"), ("critic", "hm")):
            writer.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
                (sid, role, content, time.time()),
            )
    later = ADAPTER.parse(path, b"", offset=0, state=state)
    assert [t.text for t in later.turns] == ["one more"]
    assert later.unknown_kinds["role:critic"] == 1
    assert ADAPTER.parse(path, b"", offset=0, state=later.state).turns == []


def test_a_database_without_the_messages_table_is_an_issue(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    sqlite3.connect(path).close()
    result = ADAPTER.parse(path, b"", offset=0, state={"last_id": 3})
    assert result.turns == [] and result.state == {"last_id": 3} and result.issues


def test_profiles_and_the_wal_are_owned(tmp_path: Path) -> None:
    root = tmp_path / ".hermes"
    assert ADAPTER.owns(root / "state.db", tmp_path)
    assert ADAPTER.owns(root / "profiles/work/state.db", tmp_path)
    assert not ADAPTER.owns(root / "sessions/state.db", tmp_path)
    assert ADAPTER.transcript_for(root / "state.db-wal", tmp_path) == root / "state.db"


def test_the_brief_goes_into_soul_md_only_once_hermes_made_it(tmp_path: Path) -> None:
    commands = Commands(tmp_path / "memory-capture", tmp_path / "mcp-agents-memory")
    assert ADAPTER.install_plan(tmp_path, commands).edits == ()
    (tmp_path / ".hermes").mkdir()
    (tmp_path / ".hermes/SOUL.md").write_text("You are Hermes.\n")
    plan = ADAPTER.install_plan(tmp_path, commands)
    assert [e.path.name for e in plan.edits] == ["SOUL.md"]
    assert any("hermes mcp add" in note for note in plan.notes)


def test_a_store_replaced_by_a_new_one_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    shutil.copy(FIXTURE, path)
    state = ADAPTER.parse(path, b"", offset=0, state={}).state
    with sqlite3.connect(path) as writer:  # a new store: its ids start again at 1
        writer.execute("DELETE FROM messages")
        writer.execute("DELETE FROM sqlite_sequence")
        writer.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
            ("20261201_230000_fresh0", "user", "a new beginning", time.time()),
        )
    writer.close()
    later = ADAPTER.parse(path, b"", offset=0, state=state)
    assert [t.external_uuid for t in later.turns] == ["hermes:20261201_230000_fresh0:1"]
    assert later.state == {"last_id": 1}
