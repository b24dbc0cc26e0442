"""Grok Build's tool calls become actions: the real fixture (a ``read_file`` call, a
``run_terminal_cmd`` call and a backend web search) read by the real backfill into the real
database, linked to the assistant turn that made them, and found by the search."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.store.search import SearchFilters, SearchTuning, find_user_id, search_memories

GROK = Path(__file__).parent.parent / "fixtures" / "transcripts" / "grok" / "session"


def test_grok_tool_calls_are_stored_once_and_found(
    settings: Settings, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    where = tmp_path / ".grok" / "sessions" / "%2Ftmp%2Fas-agent-lab%2Fgrok%2Fproject" / "s1"
    where.mkdir(parents=True)
    for part in GROK.iterdir():
        shutil.copyfile(part, where / part.name)

    backfill(settings, Catalog(all_adapters(), tmp_path))
    backfill(settings, Catalog(all_adapters(), tmp_path))  # a rescan stores nothing twice

    rows = conn.execute(
        "SELECT a.tool, a.kind, a.targets, a.command, a.outcome, a.excerpt, m.role"
        " FROM actions a LEFT JOIN memory m ON m.id = a.memory_id"
        " WHERE a.agent_platform = 'grok' ORDER BY a.tool"
    ).fetchall()
    assert rows == [
        ("read_file", "read", ["hello.py"], None, "ok", None, "assistant"),
        ("run_terminal_cmd", "shell", None, "python3 hello.py", "ok",
         "hello from the grok fixture", "assistant"),
        ("web_search", "web", None, "python print builtin", "ok", None, "assistant"),
    ]  # fmt: skip
    user_id = find_user_id(conn, settings.user_name)
    assert user_id is not None
    found = search_memories(
        conn, user_id, query="python3 hello.py", query_vector=None,
        filters=SearchFilters(action_kind="shell"), tuning=SearchTuning(),
    )  # fmt: skip
    assert [a.command for h in found.hits for a in h.actions] == ["python3 hello.py"]
