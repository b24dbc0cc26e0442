"""``save_message`` refuses the clients whose turns capture already stores, by the name the
client sends in MCP ``initialize``, as the real programs send it (seen by the e2e suite's fake
MCP server logs): OpenCode 1.18.33 sends ``{"name": "opencode", "version": "1.18.33"}``, Hermes
Agent 0.19.0 the Python SDK's default ``{"name": "mcp", "version": "0.1.0"}``. That generic name
means Hermes only as a whole name: a client merely containing it keeps its own identity."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.adapters import platform_for_client
from agents_memory.config import Settings
from agents_memory.recall.state import open_state
from agents_memory.server.app import create_server


def _save_as(settings: Settings, client_name: str, version: str = "1.18.33") -> dict[str, Any]:
    state = open_state(settings)
    try:
        server = create_server(settings, state)

        async def go() -> Any:
            info = Implementation(name=client_name, version=version)
            async with Client(server, client_info=info) as client:
                return await client.call_tool("save_message", {"role": "user", "message": "hi"})

        saved = anyio.run(go)
    finally:
        state.close()
    assert not saved.is_error, saved.content
    result: dict[str, Any] = json.loads(saved.content[0].text)
    return result


def test_save_message_refuses_opencode_whose_sessions_are_captured(
    make_settings: Any, db_url: str
) -> None:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    refused = _save_as(settings, "opencode")
    assert refused["skipped"] == "auto-capture active"
    assert refused["stored"] is False


def test_save_message_refuses_hermes_by_the_sdk_default_name_it_sends(
    make_settings: Any, db_url: str
) -> None:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    refused = _save_as(settings, "mcp", "0.1.0")
    assert refused == {**refused, "stored": False, "skipped": "auto-capture active"}


def test_a_name_that_only_contains_mcp_is_not_taken_for_hermes(
    make_settings: Any, db_url: str
) -> None:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    assert platform_for_client("mcp") == "hermes"
    assert platform_for_client("TinyChat-MCP-Client") == "tinychat-mcp-client"
    assert platform_for_client("codex-mcp-client") == "codex-cli"
    saved = _save_as(settings, "TinyChat-MCP-Client", "1")
    assert saved["stored"] is True, saved
