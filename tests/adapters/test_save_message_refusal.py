"""``save_message`` refuses the clients whose turns capture already stores, by the name the
client sends in MCP ``initialize`` — OpenCode 1.18.33 sends ``clientInfo.name = "opencode"``
(read from its binary)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.config import Settings
from agents_memory.server.app import create_server
from agents_memory.server.state import open_state


def _save_as(settings: Settings, client_name: str) -> dict[str, Any]:
    state = open_state(settings)
    try:
        server = create_server(settings, state)

        async def go() -> Any:
            info = Implementation(name=client_name, version="1.18.33")
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
