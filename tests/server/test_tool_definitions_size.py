"""The seven tools' definitions cost every session's context before its first call. Through
the SDK's real client, the names, descriptions and input schemas (what a model reads) are at
most half of what they were before issue 30, the whole ``tools/list`` (as sent: compact JSON)
at most 60 %, and every tool keeps its types, bounds and annotations."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server

BEFORE = 21_663
"""``tools/list`` before issue 30, measured the same way (compact JSON of the listed tools)."""
BEFORE_MODEL = 11_488
"""The names, descriptions and input schemas alone (what a client puts in a model's context:
the issue's 11,333 was measured this way on an older release)."""


MODEL_KEYS = ("name", "description", "inputSchema")


def _listed(server: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with Client(server, client_info=Implementation(name="claude-code", version="1")) as c:
            listed = await c.list_tools()
            return [
                t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools
            ]

    return anyio.run(go)


def _size(tools: list[dict[str, Any]]) -> int:
    return len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))


def test_the_tool_definitions_are_at_most_half_their_old_size(
    state: ServerState, server_settings: Settings
) -> None:
    tools = _listed(create_server(server_settings, state))
    assert len(tools) == 7
    size = _size(tools)
    model = _size([{k: v for k, v in t.items() if k in MODEL_KEYS} for t in tools])
    print(f"tools/list {size} (was {BEFORE}); without output schemas {model} (was {BEFORE_MODEL})")
    assert model <= BEFORE_MODEL // 2, model
    assert size <= BEFORE * 0.6, size  # the output schemas keep their types (client-validated)
    for tool in tools:
        assert tool["annotations"]["title"] and "readOnlyHint" in tool["annotations"]
        for name, prop in tool["inputSchema"]["properties"].items():
            assert "type" in prop or "enum" in prop or "anyOf" in prop, (tool["name"], name)
            assert "title" not in prop and prop.get("default", 0) is not None
