"""Antigravity's actions through the real backfill into the real database: the hand-written agy
transcript (``fixtures/transcripts/antigravity/hand_written_agy_actions.jsonl``) read in two
parts, cut while the sync tests still run in the background, then read again: each action
stored once, the background command completed by its ``DONE`` re-write, the token in the
failing command line masked, and ``search_memory`` (the SDK's real client) finds the failing
call by its command's words and the edit by its file; ``transcript_full.jsonl`` appearing beside
``transcript.jsonl`` (the adapter then reads only the full one) stores no action twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.recall.state import open_state
from agents_memory.server.app import create_server
from agents_memory.store import actions as action_store
from agents_memory.store.memories import ensure_user
from tests.adapters.test_antigravity_actions import HAND_WRITTEN, SCRIPT, TOKEN
from tests.server.mcpcall import call

CONVERSATION = "3b7e2c4a-8f1d-4e6b-9a2c-5d0f1e7a9b34"
FAILING = "DEPLOY_TOKEN=[redacted:token] python3 migrate_orders.py --env staging"


def _stored(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    rows = conn.execute(
        "SELECT a.id, a.external_key, a.tool, a.kind, a.outcome, a.exit_code, a.command,"
        " a.excerpt, a.targets, m.external_uuid FROM actions a"
        " LEFT JOIN memory m ON m.id = a.memory_id"
        " WHERE a.agent_platform = 'antigravity' ORDER BY a.external_key"
    ).fetchall()
    conn.commit()
    return rows


def _found(settings: Settings, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The actions ``search_memory`` shows with its hits."""
    state = open_state(settings)
    try:
        result = call(create_server(settings, state), "search_memory", {**args, "detail": "full"})
    finally:
        state.close()
    assert not result.is_error, result.content
    answer = json.loads(result.content[0].text)
    return [action for hit in answer["results"] for action in hit.get("actions") or []]


def test_agy_actions_are_stored_once_masked_completed_and_found(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    logs = tmp_path / ".gemini" / "antigravity-cli" / "brain" / CONVERSATION / ".system_generated"
    path = logs / "logs" / "transcript.jsonl"
    path.parent.mkdir(parents=True)
    data = HAND_WRITTEN.read_bytes()
    cut = data.index(b'"status": "RUNNING"')
    cut = data.index(b"\n", cut) + 1  # the background command started, not yet done
    path.write_bytes(data[:cut])
    catalog = Catalog(all_adapters(), tmp_path)

    backfill(settings, catalog)
    running = {r[1]: r for r in _stored(conn)}
    with path.open("ab") as handle:
        handle.write(data[cut:])
    backfill(settings, catalog)
    stored = _stored(conn)
    again = backfill(settings, catalog)

    assert again.stored == 0 and _stored(conn) == stored  # nothing doubled, nothing changed
    key = f"antigravity:{CONVERSATION}"
    summary = [(r[1].removeprefix(key), r[2], r[4], r[9]) for r in stored]
    assert summary == [
        (":2:0", "write_to_file", "ok", f"{key}:2"),  # its response has text: linked to it
        (":4:0", "view_file", "ok", None),  # tool-only responses: placed by time
        (":4:1", "replace_file_content", "ok", None),
        (":7:0", "run_command", "error", None),
        (":9:0", "run_command", "ok", None),
        (":9:1", "read_url_content", "unknown", None),
    ]
    background = next(r for r in stored if r[1] == f"{key}:9:0")
    assert running[background[1]][4] == "unknown" and running[background[1]][0] == background[0]
    assert background[7] == ".....\n5 passed in 0.42s"  # completed by the DONE re-write
    failed = next(r for r in stored if r[4] == "error")
    assert (failed[3], failed[5], failed[6]) == ("shell", 3, FAILING)
    assert failed[7] == "error: relation orders_archive does not exist"
    assert TOKEN not in repr(stored)
    for size in action_store.bytes_per_session(conn, ensure_user(conn, settings.user_name)):
        print(f"antigravity: {size.actions} actions, {size.bytes} B of {len(data):,} B")

    by_command = _found(settings, {"query": "migrate_orders.py staging"})
    assert FAILING in [a.get("command") for a in by_command]
    by_file = _found(settings, {"query": "orders archive table", "file": "migrate_orders.py"})
    assert [SCRIPT] in [a.get("targets") for a in by_file]


def test_the_full_transcript_appearing_beside_the_short_one_stores_no_action_twice(
    settings: Settings, tmp_path: Path, conn: psycopg.Connection[Any]
) -> None:
    logs = tmp_path / ".gemini" / "antigravity-cli" / "brain" / CONVERSATION / ".system_generated"
    (logs / "logs").mkdir(parents=True)
    steps = [json.loads(line) for line in HAND_WRITTEN.read_bytes().splitlines()]
    cut = [{**s, "content": s["content"][:40]} if "content" in s else s for s in steps]
    (logs / "logs" / "transcript.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in cut), encoding="utf-8"
    )
    catalog = Catalog(all_adapters(), tmp_path)

    backfill(settings, catalog)
    short = _stored(conn)
    (logs / "logs" / "transcript_full.jsonl").write_bytes(HAND_WRITTEN.read_bytes())
    backfill(settings, catalog)
    full = _stored(conn)

    assert [r[:3] for r in full] == [r[:3] for r in short] and len(full) == 6
    failed = next(r for r in full if r[4] == "error")
    assert failed[7] == "error: relation orders_archive does not exist"  # the full text's
