"""Secrets said in sentences, through the real commands: ``memory-capture backfill`` stores the
sentence with its value masked, and ``doctor --secrets`` finds (and ``--fix`` masks) one an
older version stored in clear."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.store.memories import ensure_user
from tests.capture.cli import memory_capture
from tests.capture.transcripts import claude_assistant, claude_session_path, claude_user
from tests.coldpath.embedding_helpers import cli_env

BIN = Path(sys.executable).parent
PASSWORD = "Tr0ub4dor&3"
SAID = f"my password is {PASSWORD}, log in as admin"
RUSSIAN = "используй токен Tg7Xk2Lm9Qp4 для бота"


def test_capture_stores_a_password_said_in_a_sentence_masked(tmp_path: Path, db_url: str) -> None:
    path = claude_session_path(tmp_path, "s-prose")
    path.write_bytes(
        claude_user("s-prose", SAID, 1)
        + claude_user("s-prose", RUSSIAN, 2)
        + claude_assistant("s-prose", "the password field is required", 2)
    )
    done = memory_capture(tmp_path, db_url, "backfill")
    assert done.returncode == 0, done.stderr

    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT message, coalesce(raw_message, '') FROM memory ORDER BY message_at, id"
        ).fetchall()
    stored = " ".join(m + r for m, r in rows)
    assert PASSWORD not in stored and "Tg7Xk2Lm9Qp4" not in stored
    assert [m for m, _ in rows] == [
        "my password is [redacted:password], log in as admin",
        "используй токен [redacted:token] для бота",
        "the password field is required",
    ]


def _doctor(settings: Settings, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(str(settings.database_url), tmp_path, "http://127.0.0.1:9/v1")
    proc = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", "--secrets", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert PASSWORD not in proc.stdout + proc.stderr
    return proc


def test_doctor_finds_and_fixes_a_password_an_older_row_holds_in_a_sentence(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    uid = ensure_user(conn, settings.user_name)
    ids = [
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message) VALUES (%s,"
            " 'claude-code', 'user', %s) RETURNING id",
            (uid, text),
        ).fetchone()[0]  # type: ignore[index]
        for text in (SAID, "set the token in the env var; key is None")
    ]
    conn.commit()

    scan = json.loads(_doctor(settings, tmp_path, "--json").stdout)["secret_scan"]
    assert scan["memory_ids"] == [ids[0]]
    assert scan["example_ids"]["redactor:password"] == [ids[0]]

    fixed = _doctor(settings, tmp_path, "--fix", "--yes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    messages = dict(conn.execute("SELECT id, message FROM memory").fetchall())
    conn.commit()
    assert messages[ids[0]] == "my password is [redacted:password], log in as admin"
    assert messages[ids[1]] == "set the token in the env var; key is None"
    assert (
        json.loads(_doctor(settings, tmp_path, "--json").stdout)["secret_scan"]["memory_ids"] == []
    )
