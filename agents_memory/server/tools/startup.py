"""``memory_startup``: the full memory brief for a new session."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.server.tools.context import ServerContext, client_platform, state_of
from agents_memory.server.tools.text import Text
from agents_memory.store.knowledge import latest_model

ANNOTATIONS = ToolAnnotations(
    title="Memory brief",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=ANNOTATIONS)
    def memory_startup(
        ctx: ServerContext,
        short_term_days: Annotated[
            int | None,
            Field(
                ge=1,
                le=30,
                description="Days of recent turns.",
            ),
        ] = None,
        agent_platform_filter: Annotated[
            bool,
            Field(description="false: all agents."),
        ] = True,
        agent_model: Annotated[
            Text | None,
            Field(description="Your model id."),
        ] = None,
    ) -> str:
        """The brief (profile, facts, projects, recent turns): call once, at session start."""
        state = state_of(ctx)
        platform = client_platform(ctx)
        with state.pool.connection() as conn:
            model = agent_model or (
                latest_model(conn, state.user_id, platform, None) if platform else None
            )
            return build_brief(
                conn,
                state.settings,
                state.user_id,
                BriefRequest.full(
                    state.settings,
                    platform=platform,
                    model=model,
                    cwd=state.cwd,
                    short_term_days=short_term_days,
                    same_agent_only=agent_platform_filter,
                ),
            )
