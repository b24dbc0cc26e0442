"""``doctor --secrets --fix`` through the real command: secrets planted past admission (direct
SQL) in every place memory text lives are reported by kind and id, counted by a dry run that
changes nothing, rewritten everywhere by the fix, and gone from the next scan."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.admission.admit import rescrubbed
from agents_memory.config import Settings
from agents_memory.store.memories import ensure_user
from agents_memory.store.owner.rewrite import rewrite_texts
from tests.coldpath.embedding_helpers import cli_env
from tests.conftest import TEST_DIM, TEST_MODEL

BIN = Path(sys.executable).parent
KNOWN = "sk-ant-api03-" + "Zx9" * 30 + "AA"
"""A format the redactor knows (and, being repetitive, the entropy detector does not flag)."""
UNKNOWN = "q7Xv2LmR9tBz4KpW8nYc3HdF6sJgA1eUoZ5iNr0T"
"""Random-looking and in no known format: only the second opinion flags it."""

SNAPSHOT_SQL = {
    "memory": "SELECT id, message, raw_message, embedding IS NOT NULL, updated_at FROM memory",
    "memory_history": "SELECT id, old_message FROM memory_history",
    "tag_summaries": "SELECT id, summary, updated_at FROM tag_summaries",
    "users": "SELECT user_id, core_profile, sub_profile, updated_at FROM users",
    "profile_history": "SELECT id, old_value, new_value FROM profile_history",
}


@dataclass(frozen=True, slots=True)
class Planted:
    user_id: int
    known: int
    """Session turn with KNOWN in message, raw text and history."""
    after_known: int
    """The next turn of that session: clean, but its vector read the end of ``known``."""
    clean: int
    unknown: int
    summary: int
    clean_summary: int


def _row(conn: psycopg.Connection[Any], uid: int, message: str, **cols: Any) -> int:
    names = ["user_id", "agent_platform", "role", "message", *cols]
    row = conn.execute(
        f"INSERT INTO memory ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"
        " RETURNING id",
        (uid, "claude-code", "user", message, *cols.values()),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _plant(conn: psycopg.Connection[Any], settings: Settings) -> Planted:
    uid = ensure_user(conn, settings.user_name)
    known = _row(
        conn,
        uid,
        f"deploy with {KNOWN} today",
        raw_message=f'{{"text": "deploy with {KNOWN} today"}}',
        session_id="s1",
        message_at="2026-01-01T10:00:00Z",
    )
    after = _row(conn, uid, "done, deployed", session_id="s1", message_at="2026-01-01T10:01:00Z")
    clean = _row(conn, uid, "the build is green", session_id="s2")
    unknown = _row(conn, uid, f"the cache is warmed by {UNKNOWN} every night")
    conn.execute(
        "UPDATE memory SET embedding = array_fill(0.1, ARRAY[%s])::halfvec, embedding_model = %s",
        (TEST_DIM, TEST_MODEL),
    )
    conn.execute(
        "INSERT INTO memory_history (memory_id, old_message, changed_by) VALUES (%s, %s, 'test')",
        (known, f"first draft: {KNOWN}"),
    )
    summary, clean_summary = (
        int(r[0])
        for r in conn.execute(
            "INSERT INTO tag_summaries (user_id, d_tag, period_start, period_end, summary,"
            " source_ids) VALUES (%(u)s, 'deploy', now(), now(), %(s1)s, %(ids1)s),"
            " (%(u)s, 'builds', now(), now(), 'builds were green all week', %(ids2)s)"
            " RETURNING id",
            {"u": uid, "s1": f"Deployed with key {KNOWN}.", "ids1": [known], "ids2": [clean]},
        ).fetchall()
    )
    conn.execute(
        "UPDATE users SET sub_profile = %s WHERE user_id = %s", (f"deploys with {KNOWN}", uid)
    )
    conn.execute(
        "INSERT INTO profile_history (user_id, field, old_value, new_value, changed_by)"
        " VALUES (%s, 'sub_profile', NULL, %s, 'librarian')",
        (uid, f"deploys with {KNOWN}"),
    )
    conn.commit()
    return Planted(uid, known, after, clean, unknown, summary, clean_summary)


def _snapshot(conn: psycopg.Connection[Any]) -> dict[str, list[tuple[Any, ...]]]:
    snap = {name: sorted(conn.execute(sql).fetchall()) for name, sql in SNAPSHOT_SQL.items()}
    conn.commit()
    return snap


def _doctor(
    settings: Settings, tmp_path: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = cli_env(str(settings.database_url), tmp_path, "http://127.0.0.1:9/v1")
    proc = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", "--secrets", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for secret in (KNOWN, UNKNOWN):
        assert secret not in proc.stdout and secret not in proc.stderr
    return proc


@pytest.fixture
def planted(conn: psycopg.Connection[Any], settings: Settings) -> Planted:
    return _plant(conn, settings)


def test_the_scan_reports_kinds_and_ids_from_both_detectors_never_values(
    planted: Planted, settings: Settings, tmp_path: Path
) -> None:
    proc = _doctor(settings, tmp_path, "--json")
    assert proc.returncode == 1
    scan = json.loads(proc.stdout)["secret_scan"]
    assert scan["memory_ids"] == [planted.known, planted.unknown]
    assert scan["example_ids"] == {
        "redactor:anthropic_api_key": [planted.known],
        "entropy:high_entropy": [planted.unknown],
    }
    assert scan["agreement"] == {"both": 0, "redactor_only": 1, "second_opinion_only": 1}
    assert scan["summary_ids"] == {"redactor:anthropic_api_key": [planted.summary]}
    assert scan["profile_user_ids"] == {"redactor:anthropic_api_key": [planted.user_id]}
    text = _doctor(settings, tmp_path)
    assert f"entropy:high_entropy in 1 rows (ids {planted.unknown})" in text.stdout
    assert "by the second opinion only 1" in text.stdout


def test_the_dry_run_counts_and_changes_nothing_until_confirmed(
    planted: Planted, conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    before = _snapshot(conn)
    proc = _doctor(settings, tmp_path, "--fix", stdin="n\n")
    assert "would re-redact 2 rows (1 summaries, 2 profile texts)" in proc.stdout
    assert proc.returncode != 0 and "aborted" in proc.stderr
    as_json = _doctor(settings, tmp_path, "--fix", "--json")
    fix = json.loads(as_json.stdout)["fix"]
    assert fix["dry_run"] is True and fix["memory_ids"] == [planted.known, planted.unknown]
    assert _snapshot(conn) == before


def test_fix_rewrites_every_place_requeues_vectors_and_leaves_clean_rows_alone(
    planted: Planted, conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    before = _snapshot(conn)
    proc = _doctor(settings, tmp_path, "--fix", "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "re-redacted 2 rows (1 summaries, 2 profile texts)" in proc.stdout
    after = _snapshot(conn)
    assert not any(secret in repr(after) for secret in (KNOWN, UNKNOWN)), (
        "a secret survived somewhere"
    )
    messages = {row[0]: row[1] for row in after["memory"]}
    assert messages[planted.known] == "deploy with [redacted:anthropic_api_key] today"
    assert messages[planted.unknown] == (
        "the cache is warmed by [redacted:high_entropy] every night"
    )
    vectors = {row[0]: row[3] for row in after["memory"]}
    assert vectors == {
        planted.known: False,
        planted.after_known: False,
        planted.clean: True,
        planted.unknown: False,
    }
    untouched = {planted.clean}
    assert [r for r in after["memory"] if r[0] in untouched] == [
        r for r in before["memory"] if r[0] in untouched
    ]
    assert [r for r in after["tag_summaries"] if r[0] == planted.clean_summary] == [
        r for r in before["tag_summaries"] if r[0] == planted.clean_summary
    ]
    summaries = {row[0]: row[1] for row in after["tag_summaries"]}
    assert summaries[planted.summary] == "Deployed with key [redacted:anthropic_api_key]."

    again = _doctor(settings, tmp_path, "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["secret_scan"]["memory_ids"] == []
    second = rewrite_texts(
        conn, rescrubbed, memory_ids=[planted.known, planted.unknown], user_ids=[planted.user_id]
    )
    conn.commit()
    assert second.total == 0 and second.embeddings_cleared == 0
    assert _snapshot(conn) == after
