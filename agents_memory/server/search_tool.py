"""``search_memory``: the search service (:mod:`agents_memory.recall.search`) behind a typed
result, its argument errors as messages a model can act on."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from agents_memory.errors import SearchArgumentError
from agents_memory.recall.search import (
    QueryVector,
    embed_query,
    search_request,
    search_user,
)
from agents_memory.server.state import ServerState
from agents_memory.store.search import HIT_MAX_CHARS

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


def run_search(
    state: ServerState,
    *,
    query: str | None,
    p_tag: str | None,
    date_range: str | None,
    role: Literal["user", "assistant"] | None,
    agent_platform: str | None,
    device_scope: Literal["global", "local"],
    limit: int,
    include_archived: bool,
    now: datetime,
) -> SearchOutput:
    try:
        request = search_request(
            query=query,
            p_tag=p_tag,
            date_range=date_range,
            role=role,
            agent_platform=agent_platform,
            device_scope=device_scope,
            limit=limit,
            include_archived=include_archived,
            device_name=state.settings.device_name,
            now=now,
        )
    except SearchArgumentError as exc:
        if exc.argument == "date_range":
            raise ToolError(f"date_range {exc.value!r} not understood: {exc}") from exc
        raise ToolError(f"{exc}. Fix that argument and call search_memory again.") from exc
    vector = embed_query(state.embedder(), request.text) if request.text else QueryVector(None)
    if vector.note:
        log.warning("%s", vector.note)
    with state.pool.connection() as conn:
        result = search_user(conn, state.user_id, request, vector.vector, state.settings)
    if p_tag and result.used == "none":
        raise ToolError(
            f"unknown p_tag {p_tag!r}: call search_memory without p_tag, or with a project tag "
            "from the brief's Active Projects"
        )
    output = SearchOutput.model_validate(result.as_dict())
    clipped = [hit.id for hit in output.results if hit.clipped]
    if clipped:
        output.next = (
            f"messages clipped to {HIT_MAX_CHARS} characters (ids {', '.join(map(str, clipped))});"
            f" read one whole: read_memory memory_id={clipped[0]} before=0 after=0 max_chars=50000"
        )
    return output
