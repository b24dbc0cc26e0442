"""Every list (and object) argument of every MCP tool has a cap the schema states, and a longer
one is refused with a message naming the argument and the cap, through the real MCP client
(issue 35: ``apply_recommendations`` took 100,000 ids, 38 s and a 14 MB reply)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from agents_memory.server.tools.pins import MAX_ITEMS
from agents_memory.server.tools.tags import MAX_IDS
from tests.server.mcpcall import call, error


def _schemas(server: Any) -> dict[str, dict[str, Any]]:
    async def go() -> dict[str, dict[str, Any]]:
        async with Client(server, client_info=Implementation(name="claude-code", version="1")) as c:
            listed = await c.list_tools()
            return {tool.name: tool.input_schema for tool in listed.tools}

    return anyio.run(go)


def _containers(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every array or object with free keys in ``schema`` (through anyOf and $defs)."""
    if isinstance(schema, dict):
        if schema.get("type") == "array" or (
            schema.get("type") == "object" and "properties" not in schema
        ):
            yield path, schema
        for key, value in schema.items():
            yield from _containers(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for n, value in enumerate(schema):
            yield from _containers(value, f"{path}[{n}]")


def test_every_list_argument_of_every_tool_states_its_cap(
    state: ServerState, server_settings: Settings
) -> None:
    schemas = _schemas(create_server(server_settings, state))
    assert "manage_project_tags" in schemas and "task_pin" in schemas
    found = []
    for tool, schema in schemas.items():
        for where, container in _containers(schema.get("properties", {}), tool):
            cap = container.get("maxItems", container.get("maxProperties"))
            assert isinstance(cap, int) and cap <= 1000, f"{where} has no cap: {container}"
            found.append(where)
    assert any("suggestion_ids" in w for w in found) and any("payload" in w for w in found)


def test_apply_recommendations_refuses_100000_ids_quickly_and_clearly(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    started = time.monotonic()
    result = call(
        server,
        "manage_project_tags",
        {"action": "apply_recommendations", "suggestion_ids": list(range(100_000))},
    )
    message = error(result)
    assert time.monotonic() - started < 10
    assert "suggestion_ids" in message and str(MAX_IDS) in message, message
    assert len(message) < 2000, len(message)
    at_cap = call(
        server,
        "manage_project_tags",
        {"action": "apply_recommendations", "suggestion_ids": list(range(1, MAX_IDS + 1))},
    )
    assert not at_cap.is_error, at_cap.content


def test_task_pin_refuses_a_payload_list_over_its_cap(
    state: ServerState, server_settings: Settings
) -> None:
    server = create_server(server_settings, state)
    args = {"action": "create", "to": "codex", "title": "t", "payload": [1] * (MAX_ITEMS + 1)}
    message = error(call(server, "task_pin", args))
    assert "payload" in message and str(MAX_ITEMS) in message, message
    ok_args = {**args, "payload": [1] * MAX_ITEMS}
    assert not call(server, "task_pin", ok_args).is_error
