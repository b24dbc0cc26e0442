from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.ops.doctor import run_doctor
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

SECRET = "sk-ant-api03-" + "Zx9" * 30 + "AA"


def test_doctor_secrets_reports_kinds_and_ids_never_values(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    uid = ensure_user(conn, settings.user_name)
    counts = insert_memories(
        conn,
        uid,
        [
            NewMemory("claude-code", "user", "nothing to see", external_uuid="s1"),
            NewMemory(
                "claude-code", "user", f"stored before redaction: {SECRET}", external_uuid="s2"
            ),
        ],
    )
    conn.commit()
    report = run_doctor(settings, scan_secrets=True)
    assert report.secret_scan is not None
    assert report.secret_scan.rows_scanned == 2
    assert list(report.secret_scan.kinds.values()) == [1]
    [(kind, ids)] = report.secret_scan.example_ids.items()
    assert "anthropic" in kind and ids == [counts.ids[1]]
    assert not report.healthy
    assert SECRET not in repr(report.as_dict())
