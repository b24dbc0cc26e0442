"""What per-prompt recall gave today, as ``memory-capture status`` (text and ``--json``) and the
console's status page show it; and the console's brief page previewing what a prompt would get
(the real app through Starlette's test client)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from click.testing import CliRunner

from agents_memory.adapters import all_adapters
from agents_memory.capture.discovery import Catalog
from agents_memory.cli.capture import status
from agents_memory.config import Settings
from agents_memory.ops.status import capture_status
from agents_memory.recall.prompt_recall import recall_for_prompt
from agents_memory.recall.prompt_report import SHOWN, prompts_today
from agents_memory.recall.search import QueryVector
from agents_memory.store.memories import ensure_user
from agents_memory.store.search import SearchTuning
from tests.search.helpers import add, mem

BAR = replace(SearchTuning(), speak_above=0.05)


def _prompt(conn: psycopg.Connection[Any], settings: Settings, prompt: str, session: str) -> None:
    uid = ensure_user(conn, settings.user_name)
    recall_for_prompt(
        conn,
        settings,
        uid,
        "claude-code",
        {"prompt": prompt, "session_id": session},
        vector=lambda text: QueryVector(None),
        tuning=BAR,
    )


def _day(conn: psycopg.Connection[Any], settings: Settings) -> dict[str, Any]:
    add(conn, [mem("the gateway timeout is thirty seconds"), mem("the pool holds ten conns")])
    _prompt(conn, settings, "what is the gateway timeout in seconds?", "s1")
    _prompt(conn, settings, "ok", "s1")
    _prompt(conn, settings, "how many moons does jupiter have?", "s1")
    for i in range(SHOWN + 2):
        _prompt(conn, settings, "the pool holds how many conns?", f"s-pool-{i}")
    conn.execute("UPDATE prompt_recalls SET created_at = now() - interval '2 days' WHERE id = 1")
    conn.commit()
    return prompts_today(conn, ensure_user(conn, settings.user_name))


def test_today_counts_the_prompts_and_names_the_newest_given(
    conn: psycopg.Connection[Any], settings: Settings
) -> None:
    day = _day(conn, settings)
    assert (day["prompts"], day["given"]) == (SHOWN + 4, SHOWN + 2), "yesterday's is not today's"
    assert len(day["recent"]) == SHOWN
    newest = day["recent"][0]
    assert newest["platform"] == "claude-code" and newest["best"] >= BAR.speak_above
    assert [m["preview"] for m in newest["memories"]] == ["the pool holds ten conns"]


def test_status_shows_them_in_text_and_json(
    conn: psycopg.Connection[Any], settings: Settings, tmp_path: Path
) -> None:
    _day(conn, settings)
    report = capture_status(settings, Catalog(all_adapters(), tmp_path), tmp_path / "pid")
    assert report.prompts is not None and report.prompts["given"] == SHOWN + 2
    runner = CliRunner(env={"HOME": str(tmp_path)})
    as_json = runner.invoke(status, ["--json"], obj=settings)
    shown = json.loads(as_json.output)["prompts"]
    assert shown["given"] == SHOWN + 2 and len(shown["recent"]) == SHOWN
    text = runner.invoke(status, [], obj=settings).output
    assert f"per-prompt recall today: {SHOWN + 2} of {SHOWN + 4} prompts got memories" in text
    assert "the pool holds ten conns" in text
