"""``search_memory``: argument checks with actionable errors, query embedding, the store's
hybrid search, and a typed result."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from agents_memory.daterange import DateRange, parse_date_range
from agents_memory.errors import AgentsMemoryError
from agents_memory.server.state import ServerState
from agents_memory.store.search import SearchFilters, SearchTuning, search_memories

log = logging.getLogger(__name__)


class SearchHitOut(BaseModel):
    id: int
    role: str
    message: str
    agent_platform: str
    agent_model: str | None = None
    session_id: str | None = None
    p_tag_name: str | None = None
    d_tag: list[str] = []
    is_pinned: bool = False
    message_at: str
    device_name: str | None = None
    cwd: str | None = None
    similarity: float | None = None
    why: dict[str, Any] = {}


class SearchOutput(BaseModel):
    used: str
    count: int
    note: str | None = None
    top_similarity: float | None = None
    threshold: float | None = None
    p_tag: str | None = None
    vector_used: bool = False
    results: list[SearchHitOut] = []


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
    dates = _dates(date_range, now)
    platform = None if agent_platform in (None, "", "*") else agent_platform
    try:
        filters = SearchFilters(
            p_tag=p_tag or None,
            date_range=dates,
            role=role,
            agent_platform=platform,
            device_scope=device_scope,
            device_name=state.settings.device_name,
            include_archived=include_archived,
            limit=limit,
        )
    except ValueError as exc:
        raise ToolError(f"{exc}. Fix that argument and call search_memory again.") from exc
    text = query.strip() if query and query.strip() else None
    vector = _query_vector(state, text)
    tuning = SearchTuning(
        recency_halflife_days=state.settings.search_recency_halflife_days,
        fallback_threshold=state.settings.search_fallback_threshold,
    )
    with state.pool.connection() as conn:
        result = search_memories(
            conn, state.user_id, query=text, query_vector=vector, filters=filters, tuning=tuning
        )
    if p_tag and result.used == "none":
        raise ToolError(
            f"unknown p_tag {p_tag!r}: call search_memory without p_tag, or with a project tag "
            "from the brief's Active Projects"
        )
    return SearchOutput.model_validate(result.as_dict())


def _dates(text: str | None, now: datetime) -> DateRange | None:
    if not text or not text.strip():
        return None
    try:
        return parse_date_range(text.strip(), now)
    except ValueError as exc:
        raise ToolError(f"date_range {text!r} not understood: {exc}") from exc


def _query_vector(state: ServerState, text: str | None) -> Any:
    if text is None:
        return None
    embedder = state.embedder()
    if embedder is None:
        return None
    try:
        return embedder.embed_queries([text])[0]
    except AgentsMemoryError as exc:
        log.warning("query embedding failed, full-text only: %s", exc)
        return None
