"""The MCP tools, one module per group; :func:`register_tools` puts them all on a server."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from agents_memory.recall.state import ServerState
from agents_memory.server.tools import knowledge, pins, read, search, startup, tags


def register_tools(server: MCPServer[Any], state: ServerState) -> None:
    """Register the seven tools. ``state`` only shapes their descriptions (which clients are
    captured); each call reads its state from the server's lifespan."""
    startup.register(server)
    search.register(server)
    read.register(server)
    knowledge.register(server, captured=state.captured_platforms)
    tags.register(server)
    pins.register(server)
