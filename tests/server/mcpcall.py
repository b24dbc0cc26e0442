"""Calling the MCP server through the SDK's real in-process client (shared by the tool tests)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation


def call(server: Any, tool: str, args: dict[str, Any], client: str = "claude-code") -> Any:
    async def go() -> Any:
        async with Client(server, client_info=Implementation(name=client, version="1")) as c:
            return await c.call_tool(tool, args)

    return anyio.run(go)


def ok(result: Any) -> Any:
    """The JSON of a successful call."""
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def error(result: Any) -> str:
    """The message of a tool error (what the model reads)."""
    assert result.is_error, result.content
    text: str = result.content[0].text
    return text
