"""``mcp-agents-memory forget`` takes a session's actions (tool calls) with its turns, leaves
them tombstoned (keys, no text), and no rescan or backfill brings them back; another session
that reuses the same tool-call ids keeps its own. Real transcripts, database and CLI."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from tests.owner.helpers import (
    SPOTTER,
    SPOTTER_SESSION,
    count,
    env_for,
    place_spotter,
    run,
    run_backfill,
)

TWIN = "twin-session"


def _actions(conn: psycopg.Connection[Any], session: str) -> int:
    return count(conn, "SELECT count(*) FROM actions WHERE session_id = %s", session)


def test_forgetting_a_session_takes_its_actions_and_they_never_come_back(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    transcript = place_spotter(tmp_path)
    twin = transcript.with_name(f"{TWIN}.jsonl")  # the same tool-call ids, another session
    twin.write_bytes(SPOTTER.read_bytes().replace(SPOTTER_SESSION.encode(), TWIN.encode()))
    run_backfill(settings, tmp_path)
    before = _actions(conn, SPOTTER_SESSION)
    assert before > 0 and _actions(conn, TWIN) == before
    env = env_for(settings.database_url or "", tmp_path)

    done = run("mcp-agents-memory", "forget", "--session", SPOTTER_SESSION, "--yes", env=env)
    whole = transcript.read_bytes()
    transcript.write_bytes(whole[: len(whole) // 3])  # truncated: its cursor restarts
    run_backfill(settings, tmp_path)
    shutil.copyfile(SPOTTER, transcript)  # whole again: rescanned from the start
    again = run("memory-capture", "backfill", env=env)

    assert done.returncode == 0, done.stderr
    assert f"actions: {before} tool calls of theirs forgotten with them" in done.stdout
    assert again.returncode == 0, again.stderr
    assert _actions(conn, SPOTTER_SESSION) == 0
    assert _actions(conn, TWIN) == before
    buried = count(
        conn,
        "SELECT count(*) FROM action_tombstones WHERE session_id = %s AND reason = 'forgotten'",
        SPOTTER_SESSION,
    )
    assert buried == before
    # The turns' own tombstones are only the turns' (their counts are unchanged by actions).
    turns = count(conn, "SELECT count(*) FROM tombstones WHERE session_id = %s", SPOTTER_SESSION)
    assert turns == count(
        conn,
        "SELECT count(*) FROM tombstones WHERE session_id = %s AND role IN ('user', 'assistant')",
        SPOTTER_SESSION,
    )
