"""``search_memory``: the search service (:mod:`agents_memory.recall.search`) behind a typed
result, its argument errors as messages a model can act on."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from agents_memory.errors import SearchArgumentError, UnknownProjectError
from agents_memory.recall.search import (
    QueryVector,
    embed_query,
    prepare_search,
    search_user,
)
from agents_memory.recall.search_request import SearchRequest
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
