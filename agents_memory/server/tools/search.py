"""``search_memory``: the search service (:mod:`agents_memory.recall.search`) behind a typed
result, its argument errors as messages a model can act on."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from agents_memory.adapters import all_adapters, all_platforms
from agents_memory.errors import SearchArgumentError, UnknownProjectError
from agents_memory.recall.search import (
    QueryVector,
    embed_query,
    prepare_search,
    search_user,
)
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text
from agents_memory.store.search import HIT_MAX_CHARS
from agents_memory.store.search.action_text import ActionKind

log = logging.getLogger(__name__)


class SearchHitOut(BaseModel):
    id: int
    role: str
    message: str
    clipped: bool = False
    chars: int | None = None
    agent_platform: str
    agent_model: str | None = None
    session_id: str | None = None
    p_tag_name: str | None = None
    d_tag: list[str] = []
    is_pinned: bool = False
    archived: bool = False
    message_at: str
    device_name: str | None = None
    cwd: str | None = None
    similarity: float | None = None
    confidence: float | None = None
    found_by_action: bool = False
    actions: list[dict[str, Any]] = []
    why: dict[str, Any] = {}


class SearchOutput(BaseModel):
    used: str
    count: int
    note: str | None = None
    top_similarity: float | None = None
    threshold: float | None = None
    p_tag: str | None = None
    vector_used: bool = False
    weak: bool = False
    results: list[SearchHitOut] = []
    next: str | None = None


def search_request_of(**arguments: Any) -> SearchRequest:
    """The tool's arguments as the one search request; an argument it cannot take is a
    :class:`ToolError` saying which and how to fix it."""
    try:
        return SearchRequest.build(**arguments)
    except SearchArgumentError as exc:
        raise _tool_error(exc) from exc


def _tool_error(exc: SearchArgumentError) -> ToolError:
    if exc.argument in ("since", "until"):
        return ToolError(f"{exc.argument} {exc.value!r} not understood: {exc}")
    return ToolError(f"{exc}. Fix that argument and call search_memory again.")


def run_search(state: ServerState, request: SearchRequest, *, now: datetime) -> SearchOutput:
    try:
        prepared = prepare_search(request, device_name=state.settings.device_name, now=now)
    except SearchArgumentError as exc:
        raise _tool_error(exc) from exc
    vector = embed_query(state.embedder(), prepared.text) if prepared.text else QueryVector(None)
    if vector.note:
        log.warning("%s", vector.note)
    try:
        with state.pool.connection() as conn:
            result = search_user(conn, state.user_id, prepared, vector.vector, state.settings)
    except UnknownProjectError as exc:
        raise ToolError(
            f"{exc}. Call search_memory without project, or with one of those projects."
        ) from exc
    output = SearchOutput.model_validate(result.as_dict())
    clipped = [hit.id for hit in output.results if hit.clipped]
    if clipped:
        output.next = (
            f"messages clipped to {HIT_MAX_CHARS} characters (ids {', '.join(map(str, clipped))});"
            f" read one whole: read_memory memory_id={clipped[0]} before=0 after=0 max_chars=50000"
        )
    return output


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
    """Register ``search_memory``. Long because the tool's signature is its schema: every
    argument with the description the model reads."""

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
        kind: Annotated[
            ActionKind | None,
            Field(description="Only turns that made a tool call of this kind."),
        ] = None,
        file: Annotated[
            Text | None,
            Field(
                description="Only turns that touched this path (a part of it, or a glob with *)."
            ),
        ] = None,
        p_tag: OldName = None,
        date_range: OldName = None,
        agent_platform: OldName = None,
    ) -> SearchOutput:
        """Search the shared memory of all agents: full-text and meaning, newest first when
        equally relevant. Use it before assuming what was decided, named or preferred.
        Put identifiers, file paths and error messages in the query verbatim, and name the
        project and the day (YYYY-MM-DD) when you know them: they narrow the search. The
        agents' tool calls (files edited, commands run, errors seen) are searched too: a
        result found through one lists it under ``actions``; ``kind`` and ``file`` keep only
        turns that made such a call. Each result has a confidence; ``weak`` true (with a
        note) means nothing matched well."""
        request = search_request_of(
            query=query,
            project=project,
            since=since,
            until=until,
            role=role,
            platform=platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            kind=kind,
            file=file,
            # the older names, still accepted for one release but left out of the schema
            p_tag=p_tag,
            date_range=date_range,
            agent_platform=agent_platform,
        )
        return run_search(state_of(ctx), request, now=datetime.now(UTC))
