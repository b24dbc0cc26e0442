"""``search_memory``: the tool's signature; the search itself is :mod:`..search_tool`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

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


Project = Annotated[
    Text | None, Field(description="Only this project (an alias finds its project).")
]
Since = Annotated[
    Text | None,
    Field(
        description="Only from the start of this day or period: today, yesterday, last_week, "
        "last_month, N_days_ago, 7d, YYYY-MM-DD or YYYY-MM."
    ),
]
Until = Annotated[
    Text | None,
    Field(description="Only up to the end of this day or period (same forms as since)."),
]
OldName = SkipJsonSchema[Text | None]
"""An argument's older name (``p_tag``, ``date_range``, ``agent_platform``): still accepted
for one release, left out of the tool's schema."""


def platform_help() -> str:
    """The ``platform`` description: the registered clients' names and short names."""
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
        project: Project = None,
        since: Since = None,
        until: Until = None,
        role: Annotated[
            Literal["user", "assistant"] | None,
            Field(description="Only what the user said, or only what agents answered."),
        ] = None,
        platform: Annotated[Text | None, Field(description=platform_help())] = None,
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
        p_tag: OldName = None,
        date_range: OldName = None,
        agent_platform: OldName = None,
    ) -> search_tool.SearchOutput:
        """Search the shared memory of all agents: full-text and meaning, newest first when
        equally relevant. Use it before assuming what was decided, named or preferred.
        Put identifiers, file paths and error messages in the query verbatim, and name the
        project and the day (YYYY-MM-DD) when you know them: they narrow the search. Each
        result has a confidence; ``weak`` true (with a note) means nothing matched well."""
        request = search_tool.search_request_of(
            query=query,
            project=project,
            since=since,
            until=until,
            role=role,
            platform=platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            # the older names, still accepted for one release but left out of the schema
            p_tag=p_tag,
            date_range=date_range,
            agent_platform=agent_platform,
        )
        return search_tool.run_search(state_of(ctx), request, now=datetime.now(UTC))
