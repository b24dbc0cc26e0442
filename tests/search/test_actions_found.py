"""The one search finds actions: a question about a file changed, an error seen or a command
run finds the turn that made the action, the hit carries the action; ``kind`` and ``file``
narrow the search to turns that acted. The real Claude Code and Codex fixtures captured by
the real backfill, searched through the store's search (the CLI and MCP surfaces have their
own tests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.store.search import SearchFilters, SearchTuning, find_user_id, search_memories
from agents_memory.store.search.types import SearchResult
from tests.owner.helpers import env_for, place_spotter, run, run_backfill

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


def test_a_command_is_found_by_how_to_run_it(
    filled: Settings, conn: psycopg.Connection[Any]
) -> None:
    result = search(conn, filled, "how do we start the phoenix server: mix phx")
    top = result.hits[0]
    assert top.actions[0].command == "mix phx.server"  # then the turn's other action
    assert [a.score > 0 for a in top.actions] == [True, False]
    assert "action" in top.why.arms and not result.weak


def test_kind_and_file_keep_only_turns_that_made_such_an_action(
    filled: Settings, conn: psycopg.Connection[Any]
) -> None:
    edits = search(conn, filled, None, action_kind="edit")
    readme = search(conn, filled, "the two readmes", action_file="README.zh")
    glob = search(conn, filled, None, action_file="*.python-version")
    shells = search(conn, filled, "patch", action_kind="shell", agent_platform="codex-cli")
    none = search(conn, filled, "patch", action_kind="mcp")

    assert edits.hits and all(a.kind == "edit" for h in edits.hits for a in h.actions)
    assert {t for h in edits.hits for a in h.actions for t in a.targets} >= {
        "go.mod",
        "README.zh-TW.md",
        ".python-version",
    }
    assert readme.hits and all(
        any("README.zh" in t for a in h.actions for t in a.targets) for h in readme.hits
    )
    assert [t for h in glob.hits for a in h.actions for t in a.targets] == [".python-version"]
    assert shells.hits[0].actions[0].outcome == "error"
    assert none.used == "none" and not none.hits
    assert none.note == "no match: no action in scope with kind 'mcp'"


def test_the_cli_search_finds_actions_and_takes_kind_and_file(
    filled: Settings, tmp_path: Path
) -> None:
    env = env_for(filled.database_url or "", tmp_path)

    wide = {**env, "COLUMNS": "200"}  # the action line under its turn fits on one line
    table = run("mcp-agents-memory", "search", "patch", "rejected", env=wide)
    as_json = run(
        "mcp-agents-memory", "search", "--kind", "edit", "--file", "go.mod", "--json", env=env
    )
    bad = run("mcp-agents-memory", "search", "x", "--kind", "teleport", env=env)

    assert table.returncode == 0, table.stderr
    assert "  shell `applypatch << 'PATCH'…` → error:" in table.stdout  # under its turn
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    [hit] = result["results"]
    assert [a["targets"] for a in hit["actions"]] == [["go.mod"]]
    assert hit["actions"][0]["line"].startswith("edit go.mod")
    assert bad.returncode == 2 and "--kind" in bad.stderr
