"""The real clients' tool-call fixtures (``fixtures/transcripts/actions/``) through backfill into
a real database: each client's four actions stored once across two backfills, the token in the
failing command line masked, the failure's exit code and error line kept."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.store import actions as action_store
from agents_memory.store.memories import ensure_user
from tests.adapters.test_real_client_actions import FIXTURES, TOOLS
from tests.e2e.action_plans import COMMAND_WORDS, ERROR_LINE, EXIT_CODE, TOKEN_NAME
from tests.e2e.make_action_fixtures import FIXTURE_TOKEN


def _place(home: Path) -> None:
    """Each fixture where its client keeps it."""
    claude = home / ".claude" / "projects" / "-tmp-am-actions-claude-code-project"
    codex = home / ".codex" / "sessions" / "2026" / "12" / "05"
    gemini = home / ".gemini" / "tmp" / "project"
    places = {
        "claude-code": claude / FIXTURES["claude-code"].name,
        "codex-cli": codex / FIXTURES["codex-cli"].name,
        "gemini-cli": gemini / "chats" / FIXTURES["gemini-cli"].name,
        "opencode": home / ".local" / "share" / "opencode" / "opencode.db",
        "hermes": home / ".hermes" / "state.db",
    }
    for platform, target in places.items():
        target.parent.mkdir(parents=True)
        shutil.copyfile(FIXTURES[platform], target)
    shutil.copyfile(FIXTURES["gemini-cli"].parents[1] / ".project_root", gemini / ".project_root")


def _stored(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    rows = conn.execute(
        "SELECT id, agent_platform, session_id, external_key, tool, kind, outcome, exit_code,"
        " command, excerpt, targets FROM actions ORDER BY agent_platform, started_at, id"
    ).fetchall()
    conn.commit()
    return rows


def test_every_clients_actions_are_stored_once_with_the_token_masked(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    _place(tmp_path)
    catalog = Catalog(all_adapters(), tmp_path)

    first = backfill(settings, catalog)
    stored = _stored(conn)
    again = backfill(settings, catalog)

    assert first.stored > 0 and again.stored == 0
    assert _stored(conn) == stored  # nothing doubled, nothing changed
    by_platform = {p: [r for r in stored if r[1] == p] for p in FIXTURES}
    for platform, rows in by_platform.items():
        assert [r[4] for r in rows] == TOOLS[platform], platform
        assert len({(r[2], r[3]) for r in rows}) == 4, platform
        [failed] = [r for r in rows if r[6] == "error"]
        assert (failed[5], failed[7]) == ("shell", EXIT_CODE), platform
        assert failed[8] == f"{TOKEN_NAME}=[redacted:token] {COMMAND_WORDS}", platform
        assert ERROR_LINE in failed[9], platform
        assert [r[10] for r in rows if r[5] in ("write", "edit")] == [["migrate_orders.py"]] * 2
    assert FIXTURE_TOKEN not in repr(stored)
    turns = conn.execute(
        "SELECT message FROM memory WHERE message LIKE %s", (f"%{FIXTURE_TOKEN}%",)
    )
    assert turns.fetchall() == []
    for size in action_store.bytes_per_session(conn, ensure_user(conn, settings.user_name)):
        whole = FIXTURES[size.agent_platform].stat().st_size  # the bytes stored, for the record
        print(f"{size.agent_platform}: {size.actions} actions, {size.bytes} B of {whole:,} B")
