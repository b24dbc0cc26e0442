"""The tools' definitions as a client lists them (``tools/list``), without what costs a
model's context and tells it nothing.

Every session pays for the definitions before its first call, so :class:`MemoryServer` lists
each tool with its description's whitespace folded (docstrings are indented) and its schemas
without pydantic's generated ``title`` of every property, without ``default: null``, and an
optional argument as its own type rather than ``anyOf [type, null]`` (it is simply left out;
the server still accepts ``null``). The output schemas keep ``null`` (the client validates the
structured result against them) as ``"type": [T, "null"]``. Nothing a tool declares is lost:
names, types, enums, bounds, required arguments, descriptions, annotations.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import Tool

_MAPS = ("properties", "$defs", "definitions")
_SCHEMAS = ("items", "additionalProperties", "not")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
NULL = {"type": "null"}


def compact_schema(schema: Any, *, output: bool) -> Any:
    """``schema`` without titles and null defaults; an ``anyOf`` of one type and null as that
    type (input: null left out; ``output``: ``[type, "null"]``)."""
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and (value is None or value is False or output)):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key in _MAPS and isinstance(value, dict):
            node[key] = {name: compact_schema(sub, output=output) for name, sub in value.items()}
        elif key in _SCHEMAS:
            node[key] = compact_schema(value, output=output)
        elif key in _LISTS and isinstance(value, list):
            node[key] = [compact_schema(sub, output=output) for sub in value]
        else:
            node[key] = value
    return _without_null(node, output=output)


def _without_null(node: dict[str, Any], *, output: bool) -> dict[str, Any]:
    arms = node.get("anyOf")
    if not isinstance(arms, list) or NULL not in arms:
        return node
    others = [arm for arm in arms if arm != NULL]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if not output:
        return {**others[0], **rest} if len(others) == 1 else {"anyOf": others, **rest}
    if len(others) == 1 and set(others[0]) == {"type"} and isinstance(others[0]["type"], str):
        return {"type": [others[0]["type"], "null"], **rest}
    if len(others) == 1 and isinstance(others[0].get("enum"), list):
        return {"enum": [*others[0]["enum"], None], **rest}
    return node


def compact_tool(tool: Tool) -> Tool:
    """``tool`` as listed: folded description, compact schemas."""
    return tool.model_copy(
        update={
            "description": " ".join((tool.description or "").split()),
            "input_schema": compact_schema(tool.input_schema, output=False),
            "output_schema": (
                compact_schema(tool.output_schema, output=True) if tool.output_schema else None
            ),
        }
    )


class MemoryServer(MCPServer[Any]):
    """The MCP server whose ``tools/list`` gives :func:`compact_tool` definitions."""

    async def list_tools(self) -> list[Tool]:
        return [compact_tool(tool) for tool in await super().list_tools()]
