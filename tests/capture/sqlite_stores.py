"""The SQLite stores of OpenCode and Hermes Agent for capture tests: the recorded stores copied
where the clients keep them, and rows added the way the clients add them (WAL mode, one
connection of the client's, explicit transactions)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@dataclass(frozen=True)
class Client:
    platform: str
    fixture: Path
    home_path: str

    def install(self, home: Path, *, wal: bool = True) -> Path:
        """The recorded store copied to where the client keeps it, in WAL mode as written."""
        path = home / self.home_path
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.fixture, path)
        if wal:
            with sqlite3.connect(path) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
            conn.close()
        hour_ago = time.time() - 3600  # a client's store, written in its -wal since
        os.utime(path, (hour_ago, hour_ago))
        return path

    def fixture_keys(self) -> set[str]:
        with sqlite3.connect(f"file:{self.fixture}?mode=ro", uri=True) as conn:
            keys = (_opencode_keys if self.platform == "opencode" else _hermes_keys)(conn)
        conn.close()
        return keys

    def add_exchange(self, conn: sqlite3.Connection, n: int) -> set[str]:
        """One user and one completed assistant turn (text unique to ``n``); their keys."""
        if self.platform == "opencode":
            at = int(time.time() * 1000)
            user, reply = f"msg_fault{n:06d}u", f"msg_fault{n:06d}a"
            oc_message(conn, user, {"role": "user", "time": {"created": at}}, at)
            oc_part(conn, f"{user}_p", user, {"type": "text", "text": f"oc question {n}"}, at)
            done = {"role": "assistant", "time": {"created": at, "completed": at + 1}}
            oc_message(conn, reply, {**done, "modelID": "m"}, at + 1)
            oc_part(conn, f"{reply}_p", reply, {"type": "text", "text": f"oc answer {n}"}, at + 1)
            return {f"opencode:{user}", f"opencode:{reply}"}
        return {
            hermes_message(conn, "user", f"hermes question {n}"),
            hermes_message(conn, "assistant", f"hermes answer {n}"),
        }


OPENCODE = Client(
    "opencode",
    FIXTURES / "opencode" / "opencode-1.18.33.db",
    ".local/share/opencode/opencode.db",
)
HERMES = Client("hermes", FIXTURES / "hermes" / "state-0.19.0.db", ".hermes/state.db")
CLIENTS = pytest.mark.parametrize("client", [OPENCODE, HERMES], ids=["opencode", "hermes"])


def _opencode_keys(conn: sqlite3.Connection) -> set[str]:
    """Messages with a real text part: users, and assistants that completed."""
    rows = conn.execute(
        "SELECT DISTINCT m.id FROM message m JOIN part p ON p.message_id = m.id"
        " WHERE json_extract(p.data, '$.type') = 'text'"
        " AND trim(coalesce(json_extract(p.data, '$.text'), '')) != ''"
        " AND coalesce(json_extract(p.data, '$.synthetic'), 0) = 0"
        " AND (json_extract(m.data, '$.role') = 'user'"
        "  OR json_extract(m.data, '$.time.completed') IS NOT NULL)"
    )
    return {f"opencode:{mid}" for (mid,) in rows}


def _hermes_keys(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT session_id, id FROM messages"
        " WHERE role IN ('user', 'assistant') AND trim(coalesce(content, '')) != ''"
    )
    return {f"hermes:{sid}:{mid}" for sid, mid in rows}


def oc_message(conn: sqlite3.Connection, mid: str, data: dict[str, Any], at: int) -> None:
    session = conn.execute("SELECT id FROM session WHERE parent_id IS NULL LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT OR REPLACE INTO message (id, session_id, time_created, time_updated, data)"
        " VALUES (?, ?, ?, ?, ?)",
        (mid, session, at, at, json.dumps(data)),
    )


def oc_part(conn: sqlite3.Connection, pid: str, mid: str, data: dict[str, Any], at: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO part VALUES"
        " (?, ?, (SELECT session_id FROM message WHERE id = ?), ?, ?, ?)",
        (pid, mid, mid, at, at, json.dumps(data)),
    )


def hermes_message(conn: sqlite3.Connection, role: str, content: str) -> str:
    """A message in the store's first session, as Hermes inserts it: complete."""
    (session,) = conn.execute("SELECT id FROM sessions ORDER BY started_at LIMIT 1").fetchone()
    cur = conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        (session, role, content, time.time()),
    )
    return f"hermes:{session}:{cur.lastrowid}"


def writer(path: Path, busy_wait_sec: float = 0) -> sqlite3.Connection:
    """The client's own connection: WAL, no busy wait (a lock of ours would fail its write),
    transactions begun and committed explicitly. ``busy_wait_sec`` is for a store still in
    rollback-journal mode, where switching to WAL needs a moment without readers (SQLite's
    rule, not ours: a reader's shared lock is held for its read, however short)."""
    conn = sqlite3.connect(
        path, timeout=busy_wait_sec, isolation_level=None, check_same_thread=False
    )
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def commit_exchanges(conn: sqlite3.Connection, client: Client, start: int, count: int) -> set[str]:
    keys: set[str] = set()
    for n in range(start, start + count):
        conn.execute("BEGIN IMMEDIATE")
        keys |= client.add_exchange(conn, n)
        conn.execute("COMMIT")
    return keys


def snapshot(*paths: Path) -> dict[str, tuple[str, int] | None]:
    """Bytes (digest) and mtime of each file, ``None`` when absent."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        if p.exists()
        else None
        for p in paths
    }


def newer_release_records(client: Client, conn: sqlite3.Connection) -> dict[str, int]:
    """Records of kinds a newer release might write, beside a normal turn; the kinds."""
    at = int(time.time() * 1000)
    if client.platform == "opencode":
        user = {"role": "user", "time": {"created": at}}
        oc_message(conn, "msg_newkind", user, at)
        oc_part(conn, "prt_newkind1", "msg_newkind", {"type": "hologram", "frames": 3}, at)
        oc_part(conn, "prt_newkind2", "msg_newkind", {"type": "text", "text": "a new kind"}, at)
        oc_message(conn, "msg_critic", {"role": "critic", "time": {"created": at}}, at)
        session = conn.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
        conn.execute(  # the next storage generation, unread by us
            "INSERT INTO session_message VALUES ('sm_1', ?, 'message', 1, ?, ?, '{}')",
            (session, at, at),
        )
        return {"part:hologram": 1, "role:critic": 1, "session_message": 1}
    hermes_message(conn, "critic", "a new kind of role")
    return {"role:critic": 1}
