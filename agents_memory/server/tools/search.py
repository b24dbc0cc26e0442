"""``search_memory``: the search service (:mod:`agents_memory.recall.search`) behind a typed
result, its argument errors as messages a model can act on."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from functools import partial
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from agents_memory.adapters import all_platforms
from agents_memory.errors import SearchArgumentError, UnknownProjectError
from agents_memory.recall.search import (
    PendingVector,
    QueryVector,
    embed_query,
    prepare_search,
    search_user,
)
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.state import ServerState
from agents_memory.server.tools.context import ServerContext, state_of
from agents_memory.server.tools.text import Text
from agents_memory.store.search import HIT_MAX_CHARS, SearchResult
from agents_memory.store.search.action_text import ActionKind
from agents_memory.store.search.excerpt import hit_line, query_stems, session_line

log = logging.getLogger(__name__)


class SearchHitOut(BaseModel):
    id: int
    kind: str = "turn"
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


class SessionHitOut(BaseModel):
    """A session the query names: its summary (``read_memory`` with its ``session_id`` reads
    its turns)."""

    agent_platform: str
    session_id: str
    title: str
    summary: str
    project: str | None = None
    git_root: str | None = None
    started_at: str
    last_at: str
    turns: int
    score: float


class SearchOutput(BaseModel):
    # Compact (the default): count, hits (one line each) and next; weak and note when nothing
    # matched well. Full (detail="full"): every field but hits.
    used: str | None = None
    count: int
    hits: list[str] | None = None
    session_lines: list[str] | None = None
    """Compact: the sessions the query names, one line each (their summaries)."""
    note: str | None = None
    top_similarity: float | None = None
    threshold: float | None = None
    p_tag: str | None = None
    vector_used: bool = False
    weak: bool = False
    results: list[SearchHitOut] = []
    sessions: list[SessionHitOut] = []
    next: str | None = None


def search_request_of(**arguments: Any) -> SearchRequest:
    """The tool's arguments as the one search request; an argument it cannot take is a
    :class:`ToolError` saying which and how to fix it."""
    try:
        return SearchRequest.build(**arguments)
    except SearchArgumentError as exc:
        raise _tool_error(exc) from exc


def _tool_error(exc: SearchArgumentError) -> ToolError:
    if exc.argument in ("since", "until", "as_of"):
        return ToolError(f"{exc.argument} {exc.value!r} not understood: {exc}")
    return ToolError(f"{exc}. Fix that argument and call search_memory again.")


Detail = Literal["compact", "full"]


def run_search(
    state: ServerState, request: SearchRequest, *, now: datetime, detail: Detail = "compact"
) -> CallToolResult:
    """The tool's answer: compact lines (text and structured alike) or today's full hits."""
    text, data = answer(search_result(state, request, now=now), request.phrasings, detail)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def answer(
    result: SearchResult, phrasings: tuple[str, ...], detail: Detail
) -> tuple[str, dict[str, Any]]:
    """What a model reads (text) and the structured result, for ``detail``."""
    if detail == "full":
        data = full_output(result).model_dump(mode="json", exclude={"hits"})
        return json.dumps(data, ensure_ascii=False, indent=2), data
    words = query_stems(phrasings)
    output = SearchOutput(
        count=result.count,
        hits=[hit_line(h, words) for h in result.hits],
        session_lines=[session_line(s, words) for s in result.sessions] or None,
        weak=result.weak,
        note=result.note,
        next=COMPACT_NEXT if result.hits else None,
    )
    data = output.model_dump(mode="json", exclude_defaults=True)
    data["count"] = result.count
    return compact_text(output), data


COMPACT_NEXT = (
    'full text: read_memory memory_id=<id> (the turn and its neighbours); detail="full" '
    "returns whole hits"
)


def compact_text(output: SearchOutput) -> str:
    """The compact answer as a model reads it: the count (and why it is weak), one line per
    hit, how to read more."""
    head = f"{output.count} hits" + (" (weak: nothing matched well)" if output.weak else "")
    lines = [head, *(output.hits or ())]
    if output.session_lines:
        lines += ["sessions (read_memory session_id=<id>):", *output.session_lines]
    if output.note and output.weak:
        lines.append(f"note: {output.note}")
    if output.next:
        lines.append(output.next)
    return "\n".join(lines)


def search_result(state: ServerState, request: SearchRequest, *, now: datetime) -> SearchResult:
    """The search of ``request`` with the server's embedder, its failures as tool errors."""
    try:
        prepared = prepare_search(request, device_name=state.settings.device_name, now=now)
    except SearchArgumentError as exc:
        raise _tool_error(exc) from exc
    pending: PendingVector | None = None
    vector = QueryVector(None)
    if prepared.text and not prepared.more:  # embedded while the search sends the rest
        embedder = state.embedder()
        embed = partial(embed_query, embedder, prepared.text)
        pending = state.pace.start(embedder, prepared.text, embed)
    elif prepared.text:
        vector = embed_query(state.embedder(), prepared.text, prepared.more)
    try:
        source = vector.vector if pending is None else pending.vector
        with state.pool.connection() as conn:
            result = search_user(
                conn,
                state.user_id,
                prepared,
                source,
                state.settings,
                vector.more,
                arm_ahead=pending is None or pending.arm_ahead,
            )
        if pending is not None:
            state.pace.observe(pending)
        return result
    except UnknownProjectError as exc:
        raise ToolError(
            f"{exc}. Call search_memory without project, or with one of those projects."
        ) from exc
    finally:
        note = vector.note if pending is None else pending.note
        if note:
            log.warning("%s", note)


def full_output(result: SearchResult) -> SearchOutput:
    """Today's full form: every hit whole (clipped to :data:`HIT_MAX_CHARS`) with its scores."""
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


Project = Annotated[Text | None, Field(description="Only this project.")]
Since = Annotated[
    Text | None,
    Field(description="7d, YYYY-MM-DD, yesterday…"),
]
Until = Annotated[Text | None, Field(description="As since.")]
OldName = SkipJsonSchema[Text | None]
"""An argument's older name (``p_tag``, ``date_range``, ``agent_platform``): still accepted
for one release, left out of the tool's schema."""


def platform_help() -> str:
    """The ``platform`` description: the registered clients' names and short names."""
    return f"Only this client (e.g. {all_platforms()[1]})."


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
            Field(description="Omit: newest first."),
        ] = None,
        queries: Annotated[
            list[Text] | None,
            Field(
                max_length=4,
                description="Other phrasings (synonyms, paraphrase), fused.",
            ),
        ] = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        role: Annotated[
            Literal["user", "assistant"] | None, Field(description="Whose turns.")
        ] = None,
        platform: Annotated[Text | None, Field(description=platform_help())] = None,
        device_scope: Annotated[
            Literal["global", "local"],
            Field(description="local: this machine."),
        ] = "global",
        limit: Annotated[int, Field(ge=1, le=50, description="Hits.")] = 10,
        include_archived: Annotated[bool, Field(description="Also archived ones.")] = False,
        as_of: Annotated[Text | None, Field(description="As on this date.")] = None,
        kind: Annotated[ActionKind | None, Field(description="Tool call kind.")] = None,
        file: Annotated[Text | None, Field(description="Path touched.")] = None,
        detail: Annotated[Detail, Field(description="full: whole hits, costly.")] = "compact",
        p_tag: OldName = None,
        date_range: OldName = None,
        agent_platform: OldName = None,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search all agents' memory (turns, tool calls) before assuming past decisions,
        names or preferences; quote identifiers and errors verbatim. read_memory
        memory_id=<id> reads a hit whole."""
        request = search_request_of(
            query=query,
            queries=queries or (),
            project=project,
            since=since,
            until=until,
            role=role,
            platform=platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            as_of=as_of,
            kind=kind,
            file=file,
            # the older names, still accepted for one release but left out of the schema
            p_tag=p_tag,
            date_range=date_range,
            agent_platform=agent_platform,
        )
        return run_search(state_of(ctx), request, now=datetime.now(UTC), detail=detail)
