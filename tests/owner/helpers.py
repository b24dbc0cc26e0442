"""A home with real transcripts, the console scripts run against the test database, and the
questions the owner tests ask the database."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import BackfillReport, backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings

BIN = Path(sys.executable).parent
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
SPOTTER = FIXTURES / "claude-code" / "spotter_v2.1.38_tool_heavy.jsonl"
SPOTTER_SESSION = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def place_spotter(home: Path) -> Path:
    """The real Claude Code transcript where Claude Code keeps it under ``home``."""
    path = (
        home / ".claude" / "projects" / "-home-marco-projects-spotter" / f"{SPOTTER_SESSION}.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPOTTER, path)
    return path


def run_backfill(settings: Settings, home: Path) -> BackfillReport:
    return backfill(settings, Catalog(all_adapters(), home))


def env_for(db_url: str, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "LLM_", "COLD_"))}
    env.update(
        HOME=str(home),
        DATABASE_URL=db_url,
        MEMORY_CONFIG_PATH=str(home / "absent.env"),
        MEMORY_DATA_DIR=str(home / "data"),
        USER_NAME="tester",
        DEVICE_NAME="test-device",
        EMBEDDING_BACKEND="none",
        PYTHONUNBUFFERED="1",
    )
    env.pop("DATABASE_URL_FILE", None)
    env.update(extra)
    return env


def run(
    script: str, *args: str, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / script), *args],
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def count(conn: psycopg.Connection[Any], query: str, *params: Any) -> int:
    row = conn.execute(query, params).fetchone()
    conn.commit()
    assert row is not None
    return int(row[0])


def session_rows(conn: psycopg.Connection[Any], session: str) -> int:
    return count(conn, "SELECT count(*) FROM memory WHERE session_id = %s", session)
