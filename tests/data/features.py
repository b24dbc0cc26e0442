"""A pool that uses every feature a bundle must carry: the transcripts, pinned fact, edit,
profile, tags and suggestions of :func:`tests.data.pool.populate`, and besides them fact slots
with history and an expiry, task pins with their updates, decided tag suggestions, a stale
summary, a project registry entry, and a forgotten turn (a tombstone) whose tool calls were
forgotten with it (action tombstones)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.ops.forget import apply_forget, plan_forget
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.owner.forget import Selection
from agents_memory.store.recall import pins, slots
from tests.data.pool import populate

SLOT = "db.staging.port"
SLOT_VALUES = ("Staging Postgres listens on 5432.", "Staging Postgres listens on 6543.")
EXPIRING = "The demo token rotates every Friday."


def _fact(conn: psycopg.Connection[Any], user: int, text: str) -> int:
    memory = NewMemory("claude-code", "user", text, source="manage_knowledge", is_pinned=True)
    return insert_memories(conn, user, [memory]).ids[0]


def populate_features(settings: Settings, home: Path, conn: psycopg.Connection[Any]) -> None:
    populate(settings, home, conn)
    user = ensure_user(conn, settings.user_name)
    for text in SLOT_VALUES:  # the second supersedes the first
        slots.fill_slot(conn, user, _fact(conn, user, text), SLOT, datetime(2031, 1, 1, tzinfo=UTC))
    slots.fill_slot(conn, user, _fact(conn, user, EXPIRING), None, datetime(2026, 1, 1, tzinfo=UTC))
    first = pins.create_pin(
        conn,
        user,
        pins.NewPin(
            "codex", "Review the migration", "claude-code", "shop", {"files": ["a.sql"]}, "d1"
        ),
    )
    pins.append_update(
        conn,
        user,
        first.pin_id,
        status="in_progress",
        note="on it",
        by_agent="codex",
        device_name="d2",
    )
    pins.append_update(
        conn, user, first.pin_id, status="done", note="merged", by_agent="codex", device_name="d2"
    )
    pins.create_pin(conn, user, pins.NewPin("gemini", "Write the notes", None, None, None, None))
    conn.execute(
        "UPDATE project_tag_alias_suggestions SET status = 'rejected', decided_by = 'user',"
        " decision_reason = 'not the same', decided_at = '2026-11-01'"
    )
    conn.execute(
        "INSERT INTO project_tag_new_suggestions (user_id, name, status, recommendation,"
        " decided_by, decided_at) VALUES (%s, 'misc', 'rejected', 'generic', 'user', now())",
        (user,),
    )
    conn.execute("UPDATE tag_summaries SET stale = true")
    conn.execute(
        "UPDATE project_tags SET kind = 'project', paused = true, description = 'The blog'"
        " WHERE name = 'blog'"
    )
    acted = conn.execute(
        "SELECT memory_id FROM actions WHERE memory_id IS NOT NULL ORDER BY memory_id LIMIT 1"
    ).fetchone()
    assert acted is not None, "the fixtures' tool calls were not captured"
    conn.commit()
    now = datetime.now(UTC)
    plan = plan_forget(conn, user, settings, Selection(ids=(int(acted[0]),)), now=now)
    apply_forget(conn, user, settings, plan)
