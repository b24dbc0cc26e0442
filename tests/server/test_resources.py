"""The brief, a session and the project list as MCP resources, and the ``recall`` prompt,
through the SDK's real client; and a server started with ``--no-brief`` (OpenCode, which reads
the brief from its managed ``AGENTS.md``) leaves the brief out of its instructions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.adapters import get_adapter
from agents_memory.adapters.base import Commands
from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.store import session_summaries
from agents_memory.store.memories import NewMemory, insert_memories


def _seed(state: ServerState) -> None:
    with state.pool.connection() as conn:
        conn.execute("INSERT INTO project_tags (name) VALUES ('billing')")
        conn.execute(
            "INSERT INTO project_tags (name, alias_of)"
            " SELECT 'bill', id FROM project_tags WHERE name = 'billing'"
        )
        insert_memories(
            conn,
            state.user_id,
            [
                NewMemory("codex-cli", "user", f"turn {n} about invoices", external_uuid=f"r:{n}",
                          session_id="sess-1", device_name="test-device")
                for n in range(3)
            ],
        )  # fmt: skip
        summarised = session_summaries.session_state(conn, state.user_id, "codex-cli", "sess-1")
        assert summarised is not None
        written = session_summaries.NewSessionSummary(
            "Invoice turns", "Outcome: three turns on invoices", "invoices", "extractive"
        )
        session_summaries.save_session_summary(conn, state.user_id, summarised, written)


def _session(server: Any, go: Any) -> Any:
    async def run() -> Any:
        async with Client(server, client_info=Implementation(name="claude-code", version="1")) as c:
            return await go(c)

    return anyio.run(run)


def test_the_resources_and_the_prompt_are_listed_and_read(
    state: ServerState, server_settings: Settings
) -> None:
    _seed(state)
    server = create_server(server_settings, state)

    async def go(c: Any) -> dict[str, Any]:
        return {
            "resources": await c.list_resources(),
            "templates": await c.list_resource_templates(),
            "prompts": await c.list_prompts(),
            "brief": await c.read_resource("memory://brief"),
            "projects": await c.read_resource("memory://projects"),
            "session": await c.read_resource("memory://session/sess-1"),
            "recall": await c.get_prompt("recall", {"topic": "invoice numbering"}),
        }

    got = _session(server, go)
    assert {str(r.uri) for r in got["resources"].resources} == {
        "memory://brief",
        "memory://projects",
    }
    assert [t.uri_template for t in got["templates"].resource_templates] == [
        "memory://session/{session_id}"
    ]
    assert [p.name for p in got["prompts"].prompts] == ["recall"]
    assert got["brief"].contents[0].text.startswith(BRIEF_MARKER)
    projects = json.loads(got["projects"].contents[0].text)["projects"]
    assert {"name": "billing", "aliases": ["bill"]} in projects
    session = json.loads(got["session"].contents[0].text)
    assert session["session_id"] == "sess-1" and len(session["turns"]) == 3
    assert session["summary"] == {
        "title": "Invoice turns",
        "summary": "Outcome: three turns on invoices",
    }
    text = got["recall"].messages[0].content.text
    assert "invoice numbering" in text and "queries" in text and "read_memory" in text


def test_an_unknown_session_is_an_error_naming_what_to_use(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)

    async def go(c: Any) -> str:
        try:
            await c.read_resource("memory://session/nope")
        except Exception as exc:  # the SDK raises the server's error
            return str(exc)
        return ""

    assert "session" in _session(server, go)


def test_no_brief_leaves_the_brief_out_of_the_instructions(
    state: ServerState, server_settings: Settings, tmp_path: Path
) -> None:
    async def go(c: Any) -> str | None:
        return c.instructions  # type: ignore[no-any-return]

    with_brief = _session(create_server(server_settings, state), go)
    without = _session(create_server(server_settings, state, brief=False), go)
    assert with_brief and BRIEF_MARKER in with_brief
    assert without and BRIEF_MARKER not in without and "search_memory" in without
    plan = get_adapter("opencode").install_plan(
        tmp_path, Commands(tmp_path / "memory-capture", tmp_path / "mcp-agents-memory")
    )
    entry = plan.edits[0].entries[0]
    assert entry.value["command"][-2:] == ["serve", "--no-brief"]  # type: ignore[union-attr]
