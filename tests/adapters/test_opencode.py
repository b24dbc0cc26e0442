"""OpenCode: the real 1.18.33 store, read read-only while a writer keeps writing."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from agents_memory.adapters import get_adapter
from agents_memory.adapters.base import ParseResult

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/transcripts/opencode/opencode-1.18.33.db"
ADAPTER = get_adapter("opencode")


def copy(tmp_path: Path) -> Path:
    home_db = tmp_path / ".local/share/opencode/opencode.db"
    home_db.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, home_db)
    with sqlite3.connect(home_db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    return home_db


def read(path: Path, state: dict[str, object] | None = None) -> ParseResult:
    result = ADAPTER.parse(path, b"", offset=0, state=state or {})
    json.dumps(result.state)  # the state is stored with the cursor
    return result


def add_message(conn: sqlite3.Connection, mid: str, data: dict[str, object], at: int) -> None:
    session = conn.execute("SELECT id FROM session WHERE parent_id IS NULL LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT OR REPLACE INTO message VALUES (?, ?, ?, ?, ?)",
        (mid, session, at, at, json.dumps(data)),
    )


def add_part(
    conn: sqlite3.Connection, pid: str, mid: str, data: dict[str, object], at: int
) -> None:
    conn.execute(
        "INSERT INTO part VALUES (?, ?, (SELECT session_id FROM message WHERE id = ?), ?, ?, ?)",
        (pid, mid, mid, at, at, json.dumps(data)),
    )


def test_the_real_store_yields_text_turns_with_subagent_sessions_flagged() -> None:
    result = read(FIXTURE)
    assert [t.role for t in result.turns].count("user") == 4
    assert len(result.turns) == 8 and not result.issues and not result.unknown_kinds
    sub = [t for t in result.turns if t.subagent]
    assert next(t.text for t in sub) == "say hi from the subagent"
    assert {t.subagent_role for t in sub} == {"general"}
    assert all(t.external_uuid.startswith("opencode:msg_") for t in result.turns)


def test_a_second_read_with_the_state_returns_nothing_new(tmp_path: Path) -> None:
    path = copy(tmp_path)
    first = read(path)
    assert read(path, first.state).turns == []


def test_an_assistant_message_is_captured_once_and_only_when_completed(tmp_path: Path) -> None:
    path = copy(tmp_path)
    state = read(path).state
    now = int(state["since"]) + 1000  # type: ignore[call-overload]
    writer = sqlite3.connect(path)  # a client writing while we read, WAL mode
    pending = {"role": "assistant", "time": {"created": now}, "modelID": "m"}
    add_message(writer, "msg_z1", pending, now)
    add_part(writer, "prt_z1", "msg_z1", {"type": "text", "text": "half a rep"}, now)
    writer.commit()
    assert read(path, state).turns == []
    done = {**pending, "time": {"created": now, "completed": now + 5}}
    add_message(writer, "msg_z1", done, now + 5)
    writer.execute(
        "UPDATE part SET data = ?, time_updated = ? WHERE id = 'prt_z1'",
        (json.dumps({"type": "text", "text": "a full reply"}), now + 5),
    )
    writer.commit()
    later = read(path, state)
    assert [t.text for t in later.turns] == ["a full reply"]
    assert read(path, later.state).turns == []
    writer.close()


def test_an_unknown_part_kind_is_counted_not_fatal(tmp_path: Path) -> None:
    path = copy(tmp_path)
    state = read(path).state
    now = int(state["since"]) + 1000  # type: ignore[call-overload]
    with sqlite3.connect(path) as writer:
        add_message(writer, "msg_z2", {"role": "user", "time": {"created": now}}, now)
        add_part(writer, "prt_z2", "msg_z2", {"type": "hologram"}, now)
        add_part(writer, "prt_z3", "msg_z2", {"type": "text", "text": "still here"}, now)
        add_part(writer, "prt_z4", "msg_z2", {"type": "text", "text": "x", "synthetic": True}, now)
    result = read(path, state)
    assert [t.text for t in result.turns] == ["still here"]
    assert result.unknown_kinds["part:hologram"] == 1


def test_a_locked_database_is_an_issue_and_the_state_stays(tmp_path: Path) -> None:
    path = copy(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        result = read(path, {"since": 5})
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert result.turns == [] and result.state == {"since": 5}
    assert "locked" in result.issues[0].reason


def test_a_truncated_database_is_an_issue_not_an_exception(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    path.write_bytes(FIXTURE.read_bytes()[:1000])
    result = read(path)
    assert result.turns == [] and result.issues


def test_the_write_ahead_log_belongs_to_the_database(tmp_path: Path) -> None:
    db = tmp_path / ".local/share/opencode/opencode.db"
    assert ADAPTER.read_mode(db) == "database"
    assert ADAPTER.companions(db) == (db.with_name("opencode.db-wal"),)
    assert ADAPTER.transcript_for(db.with_name("opencode.db-wal"), tmp_path) == db
    assert ADAPTER.transcript_for(db.with_name("other.db-wal"), tmp_path) is None


def test_an_unknown_record_is_counted_once_though_the_overlap_reads_it_again(
    tmp_path: Path,
) -> None:
    path = copy(tmp_path)
    state = read(path).state
    now = int(state["since"]) + 1000  # type: ignore[call-overload]
    with sqlite3.connect(path) as writer:
        add_message(writer, "msg_k1", {"role": "user", "time": {"created": now}}, now)
        add_part(writer, "prt_k1", "msg_k1", {"type": "hologram"}, now)
        add_message(writer, "msg_k2", {"role": "critic", "time": {"created": now}}, now)
        add_part(writer, "prt_k2", "msg_k1", {"type": "text", "text": "seen"}, now)
    first = read(path, state)
    assert dict(first.unknown_kinds) == {"part:hologram": 1, "role:critic": 1}
    with sqlite3.connect(path) as writer:  # a later turn: the overlap reads msg_k1/k2 again
        add_message(writer, "msg_k3", {"role": "user", "time": {"created": now + 5}}, now + 5)
        add_part(writer, "prt_k3", "msg_k3", {"type": "text", "text": "later"}, now + 5)
    second = read(path, first.state)
    assert [t.text for t in second.turns] == ["later"] and not second.unknown_kinds
    with sqlite3.connect(path) as writer:  # the unknown part changed: counted again
        writer.execute("UPDATE part SET time_updated = ? WHERE id = 'prt_k1'", (now + 9,))
    assert dict(read(path, second.state).unknown_kinds) == {"part:hologram": 1}
