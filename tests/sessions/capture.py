"""What the session summary tests share: the real fixture transcripts captured by the real
backfill into a HOME, and the session summariser run over them."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.coldpath.base import JobContext
from agents_memory.coldpath.session_summarizer import SessionSummarizerJob
from agents_memory.config import Settings
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.memories import ensure_user

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PLACES = {
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": ".claude/projects/-p/a.jsonl",
    "claude-code/spotter_v2.1.38_tool_heavy.jsonl": ".claude/projects/-s/b.jsonl",
    "claude-code/spotter_v2.1.38_parent_with_agent_progress.jsonl": ".claude/projects/-s/c.jsonl",
    "codex/vct_v0.39.0_vscode_unicode.jsonl": ".codex/sessions/2025/09/19/rollout-b.jsonl",
}
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def capture(settings: Settings, home: Path, conn: psycopg.Connection[Any]) -> int:
    """The fixtures of :data:`PLACES` captured for the settings' user; its id."""
    for source, target in PLACES.items():
        dest = home / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / source, dest)
    backfill(settings, Catalog(all_adapters(), home))
    uid = ensure_user(conn, settings.user_name)
    conn.commit()
    return uid


def summarise(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    *,
    llm: Any = None,
    now: datetime = NOW,
    batch_size: int = 50,
    drain: bool = True,
) -> JobReport:
    ctx = JobContext(
        conn=conn,
        settings=settings,
        user_id=user_id,
        now=now,
        llm=llm,
        embedder=None,
        batch_size=batch_size,
        drain=drain,
    )
    return SessionSummarizerJob().run(ctx)


def summaries(conn: psycopg.Connection[Any]) -> dict[str, tuple[str, str, str, int]]:
    """session id → (title, summary, model, turns)."""
    rows = conn.execute(
        "SELECT session_id, title, summary, model, turns FROM session_summaries"
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
