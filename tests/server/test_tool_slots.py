"""Fact slots through ``manage_knowledge``: supersede, history, expiry, the brief, search."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agents_memory.config import Settings
from agents_memory.errors import KnowledgeError
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.recall.knowledge import expiry, slot_name
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.server.mcpcall import call, error, ok


def _brief(state: ServerState, settings: Settings) -> str:
    with state.pool.connection() as conn:
        return build_brief(
            conn,
            settings,
            state.user_id,
            BriefRequest(platform=None, model=None, device="d", mode="full"),
        )


def test_a_new_value_supersedes_the_slot_and_the_brief_shows_it_once(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    add = {"action": "add", "slot": "DB.staging.port"}
    first = ok(call(server, "manage_knowledge", {**add, "content": "staging port is 5433"}))
    second = ok(call(server, "manage_knowledge", {**add, "content": "staging port is 6543"}))
    assert second["slot"] == "db.staging.port" and second["superseded"] == first["id"]
    same = ok(call(server, "manage_knowledge", {**add, "content": "staging port is 6543"}))
    assert same["stored"] is False and same["id"] == second["id"]
    brief = _brief(state, server_settings)
    assert "db.staging.port: staging port is 6543" in brief
    assert "5433" not in brief and brief.count("6543") == 1
    found = ok(call(server, "search_memory", {"detail": "full", "query": "staging port"}))
    assert [r["id"] for r in found["results"]] == [second["id"]]
    asked = ok(
        call(
            server,
            "search_memory",
            {"detail": "full", "query": "staging port", "include_archived": True},
        )
    )
    assert {r["id"] for r in asked["results"]} == {first["id"], second["id"]}
    with state.pool.connection() as conn:
        old = conn.execute(
            "SELECT superseded_by, is_pinned, superseded_at IS NOT NULL FROM memory WHERE id = %s",
            (first["id"],),
        ).fetchone()
    assert old == (second["id"], False, True)


def test_an_expired_fact_leaves_the_brief(state: ServerState, server_settings: Settings) -> None:
    server = create_server(server_settings, state)
    ok(
        call(
            server,
            "manage_knowledge",
            {
                "action": "add",
                "content": "deploy freeze this week",
                "slot": "deploy.freeze",
                "expires": "2h",
            },
        )
    )
    ok(
        call(
            server,
            "manage_knowledge",
            {"action": "add", "content": "on call: Ana", "expires": "1d"},
        )
    )
    brief = _brief(state, server_settings)
    assert "deploy freeze this week" in brief and "on call: Ana" in brief
    with state.pool.connection() as conn:
        conn.execute("UPDATE memory SET expires_at = now() - interval '1 minute'")
    brief = _brief(state, server_settings)
    assert "deploy freeze" not in brief and "on call" not in brief


def test_slot_and_expiry_arguments_are_checked() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert slot_name(" Db.Port ") == "db.port"
    assert expiry("7d", now) == now + timedelta(days=7)
    assert expiry("2026-01-03", now) == datetime(2026, 1, 4, tzinfo=UTC)
    with pytest.raises(KnowledgeError, match=r"db\.staging\.port"):
        slot_name("has spaces in it")
    with pytest.raises(KnowledgeError, match="7d"):
        expiry("next tuesday", now)
    with pytest.raises(KnowledgeError, match="past"):
        expiry("2025-01-01", now)


def test_slot_errors_reach_the_model(state: ServerState, server_settings: Settings) -> None:
    server = create_server(server_settings, state)
    bad = call(server, "manage_knowledge", {"action": "add", "content": "x", "slot": "a b"})
    assert "slot name" in error(bad)
    misplaced = call(server, "manage_knowledge", {"action": "remove", "memory_id": 1, "slot": "a"})
    assert "action=add" in error(misplaced)
