"""Import from claude-mem: SQLite files built from its real schema (today's and its first)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import DatabaseError
from agents_memory.ops.claude_mem_import import import_claude_mem
from agents_memory.store.memories import NEW_MEMORY_CHANNEL, ensure_user
from tests.seeds import claude_mem_schema as cm
from tests.seeds.seed_a_schema import SECRET


@pytest.fixture
def claude_mem_path(tmp_path: Path) -> Path:
    path = tmp_path / "claude-mem.db"
    cm.build(path)
    return path


def _rows(settings: Settings) -> list[dict[str, Any]]:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        cur = conn.execute(
            "SELECT m.*, t.name AS project FROM memory m"
            " LEFT JOIN project_tags t ON t.id = m.p_tag_id ORDER BY m.id"
        )
        names = [c.name for c in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur]


def _summaries(settings: Settings) -> list[dict[str, Any]]:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        cur = conn.execute("SELECT * FROM session_summaries ORDER BY id")
        names = [c.name for c in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur]


def test_prompts_become_user_turns_of_their_session_and_project(
    settings: Settings, claude_mem_path: Path
) -> None:
    report = import_claude_mem(settings, claude_mem_path)
    rows = _rows(settings)
    prompts = [r for r in rows if r["role"] == "user"]
    assert [r["message"] for r in prompts] == [cm.PROMPT, cm.SECOND, "ls"]
    first = prompts[0]
    assert first["agent_platform"] == "claude-code" and first["session_id"] == cm.SESSION
    assert first["source"] == "import" and first["project"] == "agents-memory"
    assert first["message_at"] == datetime.fromtimestamp(cm.T0 / 1000, tz=UTC)
    assert prompts[2]["agent_platform"] == "codex-cli"  # our name for it
    assert report.tally("prompts").new == 3 and report.refused == {}


def test_observations_keep_type_title_narrative_facts_and_files(
    settings: Settings, claude_mem_path: Path
) -> None:
    report = import_claude_mem(settings, claude_mem_path)
    observations = [r for r in _rows(settings) if r["agent_platform"] == "claude-mem"]
    assert len(observations) == 2 and report.tally("observations").new == 2
    bugfix = next(r for r in observations if cm.OBS_TITLE in r["message"])
    text = bugfix["message"]
    assert text.startswith(f"[bugfix] {cm.OBS_TITLE}\n0031 crashed on a fresh install")
    assert "- fixed with a LEFT JOIN" in text and "concepts: gotcha, problem-solution" in text
    assert "files modified: store/migrations/0031.sql, tests/store/test_0031.py" in text
    assert bugfix["session_id"] == cm.SESSION and bugfix["role"] == "assistant"
    assert bugfix["agent_model"] == "claude-sonnet-4-5" and bugfix["subagent"] is False
    explore = next(r for r in observations if r is not bugfix)
    assert explore["subagent"] is True and explore["subagent_role"] == "explore"
    assert explore["session_id"] == "rollout-codex-7"


def test_a_secret_in_an_observation_is_masked(settings: Settings, claude_mem_path: Path) -> None:
    import_claude_mem(settings, claude_mem_path)
    texts = [r["message"] for r in _rows(settings)]
    assert not any(SECRET in t for t in texts)
    assert any("[redacted:" in t for t in texts)


def test_summaries_become_the_session_summary_and_the_rest_is_reported(
    settings: Settings, claude_mem_path: Path
) -> None:
    report = import_claude_mem(settings, claude_mem_path)
    (summary,) = _summaries(settings)
    assert summary["agent_platform"] == "claude-code" and summary["session_id"] == cm.SESSION
    assert summary["title"] == "Why does 0031 fail on an empty database?"
    assert "learned: 0031 assumed users existed" in summary["summary"]
    assert "completed: 0031 fixed, test added" in summary["summary"]
    assert summary["model"] == "llm" and summary["turns"] == 2  # the session's two prompts
    assert report.tally("session summaries").new == 1
    assert report.unmapped["summaries of sessions with no turns here"].startswith("1 ")
    assert report.unmapped["pending_messages"].startswith("1 ")
    assert report.unmapped["session titles"].startswith("1 ")
    assert report.unmapped["session status"].startswith("3 ")


def test_a_second_claude_mem_import_changes_nothing_and_the_file_is_untouched(
    settings: Settings, claude_mem_path: Path
) -> None:
    digest = hashlib.sha256(claude_mem_path.read_bytes()).hexdigest()
    import_claude_mem(settings, claude_mem_path)
    before = _rows(settings), _summaries(settings)
    again = import_claude_mem(settings, claude_mem_path)
    assert (_rows(settings), _summaries(settings)) == before
    assert all(t.new == 0 for t in again.tallies.values()), again.tallies
    assert again.tally("prompts").present == 3 and again.tally("observations").present == 2
    assert again.tally("session summaries").present == 1 and not again.conflict_notes
    assert hashlib.sha256(claude_mem_path.read_bytes()).hexdigest() == digest


def test_a_claude_mem_dry_run_writes_nothing(settings: Settings, claude_mem_path: Path) -> None:
    report = import_claude_mem(settings, claude_mem_path, dry_run=True)
    assert report.tally("prompts").new == 3 and report.tally("session summaries").new == 1
    assert _rows(settings) == [] and _summaries(settings) == []


def test_the_first_claude_mem_schema_is_read_with_its_old_column_names(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "old.db"
    cm.build_old(path)
    report = import_claude_mem(settings, path)
    rows = _rows(settings)
    prompt = next(r for r in rows if r["role"] == "user")
    assert prompt["message"] == "rename the CLI" and prompt["session_id"] == "old-session"
    observation = next(r for r in rows if r["agent_platform"] == "claude-mem")
    assert observation["message"] == "[decision]\nThe CLI is called am now"
    (summary,) = _summaries(settings)
    assert summary["session_id"] == "old-session" and "completed: renamed" in summary["summary"]
    assert report.tally("prompts").new == 1


def test_a_file_that_is_not_claude_mem_is_refused_in_one_line(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "other.db"
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(DatabaseError, match="not a claude-mem database"):
        import_claude_mem(settings, path)


def test_a_prompt_capture_already_stored_is_not_imported_again(
    settings: Settings, claude_mem_path: Path
) -> None:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        user = ensure_user(conn, settings.user_name)
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, session_id, role, message, source)"
            " VALUES (%s, 'claude-code', %s, 'user', %s, 'capture')",
            (user, cm.SESSION, f"  {cm.PROMPT} "),
        )
    report = import_claude_mem(settings, claude_mem_path)
    assert report.captured == 1 and report.tally("prompts").new == 2
    prompts = [r for r in _rows(settings) if r["message"].strip() == cm.PROMPT]
    assert [r["source"] for r in prompts] == ["capture"]


def test_the_cold_path_is_woken_for_every_new_row(
    settings: Settings, claude_mem_path: Path
) -> None:
    assert settings.database_url
    with psycopg.connect(settings.database_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {NEW_MEMORY_CHANNEL}")
        report = import_claude_mem(settings, claude_mem_path)
        payloads = [n.payload for n in listener.notifies(timeout=5, stop_after=1)]
    assert payloads == ["5"]  # 3 prompts and 2 observations, all waiting for their vector
    assert report.reembed == 5 and "memories" not in report.tallies
