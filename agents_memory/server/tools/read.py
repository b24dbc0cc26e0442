"""``read_memory``: the tool's signature; the reading is :mod:`..read_tool`."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from agents_memory.server import read_tool
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text

ANNOTATIONS = ToolAnnotations(
    title="Read around a memory",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=ANNOTATIONS)
    def read_memory(
        ctx: ServerContext,
        memory_id: Annotated[
            int | None,
            Field(description="A search_memory result's id: read the turns around it."),
        ] = None,
        session_id: Annotated[
            Text | None,
            Field(
                description="A search_memory result's session_id, without memory_id: read the "
                "session from its first turn."
            ),
        ] = None,
        before: Annotated[
            int, Field(ge=0, le=50, description="Turns before memory_id (0-50).")
        ] = 3,
        after: Annotated[int, Field(ge=0, le=50, description="Turns after it (0-50).")] = 3,
        max_chars: Annotated[
            int,
            Field(
                ge=500,
                le=50_000,
                description="Character budget for all turns; the nearest turns come first.",
            ),
        ] = 6000,
    ) -> read_tool.ReadResult:
        """Read the conversation around a search hit, or page through a session: search
        results show one turn; this shows what was said before and after it, and under each
        assistant turn the tool calls it made (`actions`: file edits, commands and how they
        ended, one line each). `next` says how to read on."""
        return read_tool.read_memory(
            state_of(ctx),
            memory_id=memory_id,
            session_id=session_id,
            before=before,
            after=after,
            max_chars=max_chars,
        )
