"""The one search finds actions: a question about a file changed, an error seen or a command
run finds the turn that made the action, the hit carries the action; ``kind`` and ``file``
narrow the search to turns that acted. The real Claude Code and Codex fixtures captured by
the real backfill, searched through the store's search (the CLI and MCP surfaces have their
own tests)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.store.search import SearchFilters, SearchTuning, find_user_id, search_memories
from agents_memory.store.search.types import SearchResult
from tests.owner.helpers import place_spotter, run_backfill

CODEX = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex"
CODEX_SHELL = CODEX / "vct_v0.39.0_vscode_unicode.jsonl"


def captured(settings: Settings, home: Path) -> None:
    """The tool-heavy Claude Code fixture and a Codex one with a failing patch, captured."""
    place_spotter(home)
    rollout = home / ".codex" / "sessions" / "2025" / "09" / "19" / f"rollout-{CODEX_SHELL.name}"
    rollout.parent.mkdir(parents=True)
    shutil.copyfile(CODEX_SHELL, rollout)
    run_backfill(settings, home)


def search(
    conn: psycopg.Connection[Any],
    settings: Settings,
    query: str | None,
    tuning: SearchTuning | None = None,
    **filters: Any,
) -> SearchResult:
    user_id = find_user_id(conn, settings.user_name)
    assert user_id is not None
    return search_memories(
        conn,
        user_id,
        query=query,
        query_vector=None,
        filters=SearchFilters(**filters),
        tuning=tuning or SearchTuning(),
    )


@pytest.fixture
def filled(settings: Settings, conn: psycopg.Connection[Any], tmp_path: Path) -> Settings:
    captured(settings, tmp_path)
    return settings


def test_an_error_only_an_action_holds_is_found_through_its_turn(
    filled: Settings, conn: psycopg.Connection[Any]
) -> None:
    result = search(conn, filled, "what error did the patch hit")
    lines = [a.as_dict()["line"] for h in result.hits[:3] for a in h.actions]
    assert any("patch rejected: empty patch" in line for line in lines), lines
    top = next(h for h in result.hits if h.actions)
    assert "action" in top.why.arms and top.why.action_rank == 1
    assert top.role == "assistant" and top.agent_platform == "codex-cli"
    off = search(conn, filled, "what error did the patch hit", SearchTuning(action_fusion="off"))
    assert not any(h.actions for h in off.hits)
