"""``task_pin`` through the real MCP client: hand-offs, their history, the brief, and errors."""

from __future__ import annotations

from typing import Any

from agents_memory.config import Settings
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.server.mcpcall import call, error, ok


def _pin(server: Any, **args: Any) -> Any:
    return ok(call(server, "task_pin", {"action": "create", **args}))


def test_a_pin_moves_from_pending_to_done_and_keeps_its_history(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    created = _pin(
        server,
        to="codex-cli",
        title="Run the migration tests on staging",
        payload={"command": "pytest tests/store"},
    )
    pin = created["pins"][0]
    assert pin["status"] == "pending" and pin["from_agent"] == "claude-code"
    assert pin["payload"] == {"command": "pytest tests/store"}
    pin_id = pin["pin"]
    started = ok(
        call(
            server,
            "task_pin",
            {"action": "update", "pin": pin_id, "status": "in_progress", "note": "on it"},
            client="codex-mcp-client",
        )
    )
    assert started["pins"][0]["status"] == "in_progress"
    done = ok(
        call(
            server,
            "task_pin",
            {"action": "update", "pin": pin_id, "status": "done", "note": "all green"},
            client="codex-mcp-client",
        )
    )
    history = done["pins"][0]["history"]
    assert [(h["status"], h["by"]) for h in history] == [
        ("pending", "claude-code"),
        ("in_progress", "codex-cli"),
        ("done", "codex-cli"),
    ]
    with state.pool.connection() as conn:
        events = conn.execute("SELECT count(*) FROM task_pin_events").fetchone()
        in_memory = conn.execute("SELECT count(*) FROM memory").fetchone()
    assert events == (3,) and in_memory == (0,)  # append-only, and never a memory row


def test_query_collapses_history_and_filters(state: ServerState, server_settings: Settings) -> None:
    server = create_server(server_settings, state)
    first = _pin(server, to="codex-cli", title="Review the tagger", project="orbit")["pins"][0]
    _pin(server, to="gemini-cli", title="Write the docs", project="orbit")
    ok(
        call(
            server,
            "task_pin",
            {"action": "update", "pin": first["pin"], "status": "in_progress"},
        )
    )

    def query(**args: Any) -> list[tuple[str, str]]:
        found = ok(call(server, "task_pin", {"action": "query", **args}))
        return [(p["title"], p["status"]) for p in found["pins"]]

    assert query() == [("Write the docs", "pending"), ("Review the tagger", "in_progress")]
    assert query(to="codex-cli") == [("Review the tagger", "in_progress")]
    assert query(status="pending") == [("Write the docs", "pending")]
    assert query(project="orbit", status="done") == []
    one = ok(call(server, "task_pin", {"action": "query", "pin": first["pin"]}))
    assert len(one["pins"][0]["history"]) == 2


def test_open_pins_appear_in_the_recipients_brief_only(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    _pin(server, to="codex-cli", title="Rotate the staging credentials")
    with state.pool.connection() as conn:

        def brief(platform: str) -> str:
            return build_brief(
                conn,
                server_settings,
                state.user_id,
                BriefRequest(
                    platform=platform, model=None, device="d", mode="compact", max_chars=1500
                ),
            )

        assert "Rotate the staging credentials" in brief("codex-cli")
        assert "Rotate the staging credentials" not in brief("gemini-cli")
    # Not in search either.
    found = ok(call(server, "search_memory", {"detail": "full", "query": "staging credentials"}))
    assert found["count"] == 0


def test_pin_errors_tell_the_model_what_to_do(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)

    def fails(**args: Any) -> str:
        return error(call(server, "task_pin", args))

    assert "`to`" in fails(action="create", title="x")
    assert "`title`" in fails(action="create", to="codex-cli")
    assert "payload" in fails(action="create", to="codex-cli", title="t" * 301)
    assert "`pin`" in fails(action="update", status="done")
    assert "task_pin action=query" in fails(action="update", pin=9999, status="done", note="x")
    pin = _pin(server, to="codex-cli", title="Ship it")["pins"][0]["pin"]
    assert "`note`" in fails(action="update", pin=pin, status="done")
    ok(call(server, "task_pin", {"action": "update", "pin": pin, "status": "failed", "note": "no"}))
    assert "create a new pin" in fails(action="update", pin=pin, status="in_progress")
    assert "no task pin" in fails(action="query", pin=9999)
