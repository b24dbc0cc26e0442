"""``search_memory``: the tool's signature; the search itself is :mod:`..search_tool`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from agents_memory.adapters import all_adapters, all_platforms
from agents_memory.server import search_tool
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text

ANNOTATIONS = ToolAnnotations(
    title="Search memory",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


def platform_help() -> str:
    """The ``agent_platform`` description: the registered clients' names and short names."""
    short = ", ".join(f"{a.short_name} = {a.name}" for a in all_adapters() if a.short_name)
    return f'Only this client ({", ".join(all_platforms())}; short: {short}); "*" or omitted = all.'


def register(server: MCPServer[Any]) -> None:
    # The annotations are evaluated when the tool is registered, so platform_help() lists the
    # adapters registered at that moment.
    @server.tool(annotations=ANNOTATIONS)
    def search_memory(
        ctx: ServerContext,
        query: Annotated[
            Text | None,
            Field(
                description="What to look for, in any language. Omit to list the newest memories."
            ),
        ] = None,
        p_tag: Annotated[
            Text | None,
            Field(description="Only this project tag (aliases resolve to their project)."),
        ] = None,
        date_range: Annotated[
            Text | None,
            Field(
                description="today, yesterday, last_week, last_month, N_days_ago, YYYY-MM-DD "
                "(since that day) or a range A..B such as 2026-01-01..2026-02-01."
            ),
        ] = None,
        role: Annotated[
            Literal["user", "assistant"] | None,
            Field(description="Only what the user said, or only what agents answered."),
        ] = None,
        agent_platform: Annotated[Text | None, Field(description=platform_help())] = None,
        device_scope: Annotated[
            Literal["global", "local"],
            Field(
                description="global (default): every machine; local: this machine only "
                "(pinned memories always included)."
            ),
        ] = "global",
        limit: Annotated[int, Field(ge=1, le=50, description="How many results (1-50).")] = 10,
        include_archived: Annotated[
            bool, Field(description="Also search archived (older or removed) memories.")
        ] = False,
    ) -> search_tool.SearchOutput:
        """Search the shared memory of all agents: full-text and meaning, newest first when
        equally relevant. Use it before assuming what was decided, named or preferred.
        Put identifiers, file paths and error messages in the query verbatim, and name the
        project and the day (YYYY-MM-DD) when you know them: they narrow the search. Each
        result has a confidence; ``weak`` true (with a note) means nothing matched well."""
        return search_tool.run_search(
            state_of(ctx),
            query=query,
            p_tag=p_tag,
            date_range=date_range,
            role=role,
            agent_platform=agent_platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            now=datetime.now(UTC),
        )
