"""``manage_knowledge`` and ``save_message``: what an agent stores on purpose.

Errors are :class:`ToolError` with a message that tells the model what to do instead.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

import psycopg
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from agents_memory.admission.filters import strip_private
from agents_memory.admission.redact import redact
from agents_memory.errors import AgentsMemoryError
from agents_memory.gitinfo import git_info
from agents_memory.server.state import ServerState
from agents_memory.store import knowledge
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.passages import passage_of

log = logging.getLogger(__name__)

MAX_TEXT = 200_000


class KnowledgeResult(BaseModel):
    stored: bool
    action: str
    target: str
    id: int | None = None
    is_pinned: bool | None = None
    tagged: Literal["ok", "pending"] | None = None
    embedded: Literal["ok", "pending", "disabled"] | None = None
    sub_profile: str | None = None
    note: str | None = None


class SaveResult(BaseModel):
    stored: bool
    id: int | None = None
    role: str | None = None
    created_at: datetime | None = None
    skipped: str | None = None


def _clean(state: ServerState, text: str) -> str:
    cleaned = strip_private(text).strip()
    if state.settings.redact_enabled:
        cleaned = redact(cleaned).text
    return cleaned


def _require_text(content: str | None, action: str) -> str:
    if content is None or not content.strip():
        raise ToolError(f"action={action} needs `content` with the text to store")
    if len(content) > MAX_TEXT:
        raise ToolError(
            f"content is {len(content)} characters; the limit is {MAX_TEXT}. "
            "Store a summary instead."
        )
    return content


def manage_knowledge(
    state: ServerState,
    *,
    action: Literal["add", "update", "remove"],
    target: Literal["memory", "sub_profile"],
    content: str | None,
    memory_id: int | None,
    platform: str | None,
    model: str | None,
) -> KnowledgeResult:
    if target == "sub_profile":
        return _sub_profile(state, action, content)
    if action == "add":
        return _add(state, _require_text(content, action), platform, model)
    if memory_id is None:
        raise ToolError(
            f"action={action} on target=memory needs `memory_id` (the `id` of a "
            "search_memory result)"
        )
    with state.pool.connection() as conn:
        row = knowledge.get_memory(conn, state.user_id, memory_id)
        if row is None:
            raise ToolError(
                f"no memory with id {memory_id}; find the right id with search_memory first"
            )
        if action == "remove":
            knowledge.archive_memory(conn, memory_id)
            return KnowledgeResult(
                stored=True,
                action=action,
                target=target,
                id=memory_id,
                is_pinned=False,
                note="archived (recoverable with include_archived=true); it was pinned"
                if row.is_pinned
                else "archived (recoverable with include_archived=true)",
            )
        text = _clean(state, _require_text(content, action))
        knowledge.update_memory_text(
            conn, memory_id, text, changed_by="manage_knowledge", has_vector=state.has_vector
        )
        embedded = _embed_now(state, conn, memory_id, text)
        return KnowledgeResult(
            stored=True,
            action=action,
            target=target,
            id=memory_id,
            is_pinned=row.is_pinned,
            tagged="pending",
            embedded=embedded,
            note="previous text kept in history",
        )


def _add(
    state: ServerState, content: str, platform: str | None, model: str | None
) -> KnowledgeResult:
    text = _clean(state, content)
    git = git_info(state.cwd)
    with state.pool.connection() as conn:
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    agent_platform=platform or "unknown",
                    role="user",
                    message=text,
                    agent_model=None,
                    device_name=state.settings.device_name,
                    source="manage_knowledge",
                    is_pinned=True,
                    cwd=state.cwd,
                    git_root=git.root,
                    git_remote=git.remote,
                )
            ],
            has_vector=state.has_vector,
        )
        memory_id = counts.ids[0]
        embedded = _embed_now(state, conn, memory_id, text)
    del model  # the pinned fact is the user's, not the model's
    return KnowledgeResult(
        stored=True,
        action="add",
        target="memory",
        id=memory_id,
        is_pinned=True,
        tagged="pending",
        embedded=embedded,
    )


def _embed_now(
    state: ServerState, conn: psycopg.Connection[Any], memory_id: int, text: str
) -> Literal["ok", "pending", "disabled"]:
    """Embed synchronously; a failure leaves the row for the Cold Path (``pending``)."""
    if not state.has_vector or state.settings.embedding_backend == "none":
        return "disabled"
    embedder = state.embedder()
    if embedder is None:
        return "pending"
    try:
        from agents_memory.embeddings import to_halfvec

        vector = embedder.embed_passages([passage_of(conn, memory_id) or text])[0]
        knowledge.set_embedding(conn, memory_id, to_halfvec(vector), embedder.spec.model)
    except AgentsMemoryError as exc:
        log.warning("embedding memory %d failed, left for the Cold Path: %s", memory_id, exc)
        return "pending"
    return "ok"


def _sub_profile(state: ServerState, action: str, content: str | None) -> KnowledgeResult:
    with state.pool.connection() as conn:
        current = knowledge.get_profiles(conn, state.user_id).sub_profile
        if action == "remove":
            value = None
        else:
            text = _clean(state, _require_text(content, action))
            value = f"{current}\n{text}" if action == "add" and current else text
        knowledge.set_profile(
            conn, state.user_id, "sub_profile", value, changed_by="manage_knowledge"
        )
    return KnowledgeResult(stored=True, action=action, target="sub_profile", sub_profile=value)


def save_message(
    state: ServerState,
    *,
    role: Literal["user", "assistant"],
    message: str,
    platform: str | None,
    model: str | None,
    session_id: str | None,
    subagent: bool,
    subagent_model: str | None,
    subagent_role: str | None,
) -> SaveResult:
    if platform in state.captured_platforms:
        return SaveResult(stored=False, skipped="auto-capture active")
    text = _clean(state, _require_text(message, "save_message"))
    if not text:
        return SaveResult(stored=False, skipped="nothing left after removing private spans")
    git = git_info(state.cwd)
    with state.pool.connection() as conn:
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    agent_platform=platform or "unknown",
                    role=role,
                    message=text,
                    agent_model=model if role == "assistant" else None,
                    subagent=subagent,
                    subagent_model=subagent_model if subagent else None,
                    subagent_role=subagent_role if subagent else None,
                    session_id=session_id,
                    cwd=state.cwd,
                    git_root=git.root,
                    git_remote=git.remote,
                    device_name=state.settings.device_name,
                    source="save_message",
                )
            ],
            has_vector=state.has_vector,
        )
        row = knowledge.get_memory(conn, state.user_id, counts.ids[0])
    assert row is not None
    return SaveResult(stored=True, id=row.id, role=row.role, created_at=row.created_at)
