"""Per-prompt recall weighs actions through the one search: a prompt about an error that only
an action holds gets the turn that made it, and its line carries the action (the command or
what it acted on, how it ended, the error's first line). The real Codex and Claude Code
fixtures captured by the real backfill."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.config import Settings
from agents_memory.recall.prompt_recall import recall_for_prompt
from agents_memory.recall.search import QueryVector
from agents_memory.store.memories import ensure_user
from agents_memory.store.search import SearchTuning
from tests.search.test_actions_found import captured

PROMPT = "the patch failed with an error again: rejected?"
"""Its words: patch, failed, error, rejected. The action's own text holds two of them ("patch
rejected: empty patch"); its outcome (``error``) stands for the other two: without them the
prompt's best hit covers half its words, which stays under the bar."""


def _ask(conn: psycopg.Connection[Any], settings: Settings, tuning: SearchTuning) -> Any:
    uid = ensure_user(conn, settings.user_name)
    event = {"prompt": PROMPT, "cwd": None, "session_id": "a-new-session"}
    return recall_for_prompt(
        conn,
        settings,
        uid,
        "claude-code",
        event,
        vector=lambda _t: QueryVector(None),
        record=False,
        tuning=tuning,
    )


def test_a_prompt_about_an_error_an_action_holds_gets_the_action(
    settings: Settings, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    captured(settings, tmp_path)
    got = _ask(conn, settings, SearchTuning())
    assert got.reason == "added", got
    line = got.text.splitlines()[1]
    assert "codex-cli" in line and "→ error" in line and "patch rejected: empty patch" in line
    without = _ask(conn, settings, replace(SearchTuning(), action_fusion="off"))
    assert "patch rejected: empty patch" not in without.text
