"""What every tool reads from its call context: the server's state and the calling client."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from agents_memory.adapters import platform_for_client
from agents_memory.recall.state import ServerState

ServerContext = Context[ServerState, Any]


def client_platform(ctx: ServerContext) -> str | None:
    """The platform of the client calling (from its ``clientInfo.name``), if it said."""
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError):
        return None
    info = getattr(params, "client_info", None)
    return platform_for_client(getattr(info, "name", None))


def state_of(ctx: ServerContext) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState)
    return state
