"""Every text argument of every tool refuses what PostgreSQL text cannot hold (a NUL byte, a
lone surrogate) with a message naming the argument and the problem, through the SDK's real
client, instead of a bare "Error executing tool"."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.server.mcpcall import call, error

BAD = {"nul": ("a\x00b", "NUL byte"), "surrogate": ("a\ud800b", "lone surrogate")}


def _kinds(schema: dict[str, Any]) -> set[str]:
    options = schema.get("anyOf", [schema])
    return {str(option.get("type")) for option in options}


def _valid(schema: dict[str, Any]) -> Any:
    """A value the property's schema takes (the first choice of an enum)."""
    options = schema.get("anyOf", [schema])
    for option in options:
        if "enum" in option:
            return option["enum"][0]
        if "const" in option:
            return option["const"]
    kinds = _kinds(schema)
    if "string" in kinds:
        return "x"
    if "integer" in kinds:
        return 1
    if "boolean" in kinds:
        return False
    return None


def _tools(server: Any) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(server, client_info=Implementation(name="claude-code", version="1")) as c:
            return list((await c.list_tools()).tools)

    return anyio.run(go)


@pytest.mark.parametrize("kind", list(BAD))
def test_every_text_argument_of_every_tool_names_what_is_wrong(
    state: ServerState, server_settings: Settings, kind: str
) -> None:
    server = create_server(server_settings, state)
    bad, says = BAD[kind]
    checked: list[str] = []
    for tool in _tools(server):
        properties: dict[str, Any] = tool.input_schema.get("properties", {})
        required = set(tool.input_schema.get("required", []))
        base = {name: _valid(properties[name]) for name in required}
        for name, schema in properties.items():
            if "string" not in _kinds(schema) or "enum" in str(schema):
                continue
            message = error(call(server, tool.name, {**base, name: bad}))
            assert says in message and name in message, (tool.name, name, message)
            assert "Error executing tool" in message and "Traceback" not in message
            checked.append(f"{tool.name}.{name}")
    for expected in ("search_memory.query", "search_memory.project", "read_memory.session_id"):
        assert expected in checked
    assert any(c.endswith(".to") for c in checked) and any(c.endswith(".source") for c in checked)
    assert len(checked) >= 20, checked


def test_a_nul_inside_a_pins_payload_object_is_refused_too(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    args = {"action": "create", "to": "codex-cli", "title": "t", "payload": {"files": ["a\x00"]}}
    message = error(call(server, "task_pin", args))
    assert "payload" in message and "NUL byte" in message
