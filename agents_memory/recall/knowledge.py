"""``manage_knowledge`` and ``save_message``: what an agent stores on purpose.

Every text goes through :mod:`agents_memory.admission.admit` first (private spans, brief
echoes, excluded projects, redaction, the size limit). Errors are :class:`KnowledgeError` with a
message that tells the model what to do instead; ``save_message`` reports a refusal of what
the text *is* (a brief echo, all private, an excluded project) as ``skipped``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import psycopg
from pydantic import BaseModel

from agents_memory.admission.admit import (
    MAX_SAVED_CHARS,
    Admission,
    Admitted,
    Refused,
    create_admission,
)
from agents_memory.coldpath import tagger
from agents_memory.coldpath.llm_routing import role_endpoint
from agents_memory.daterange import parse_date_range, parse_duration
from agents_memory.errors import AgentsMemoryError, KnowledgeError
from agents_memory.recall.state import ServerState
from agents_memory.store import knowledge
from agents_memory.store.memories import NewMemory, insert_memories
from agents_memory.store.passages import passage_of
from agents_memory.store.recall import slots

log = logging.getLogger(__name__)

MAX_TEXT = MAX_SAVED_CHARS


class KnowledgeResult(BaseModel):
    stored: bool
    action: str
    target: str
    id: int | None = None
    is_pinned: bool | None = None
    tagged: Literal["ok", "pending"] | None = None
    embedded: Literal["ok", "pending", "disabled"] | None = None
    sub_profile: str | None = None
    slot: str | None = None
    expires_at: datetime | None = None
    superseded: int | None = None
    note: str | None = None


class SaveResult(BaseModel):
    stored: bool
    id: int | None = None
    role: str | None = None
    created_at: datetime | None = None
    skipped: str | None = None


def _admission(state: ServerState) -> Admission:
    # Cheap to build (a few compiled globs); ServerState could hold one for the server's life.
    return create_admission(state.settings, home=Path.home())


def _require_text(content: str | None, action: str) -> str:
    if content is None:
        raise KnowledgeError(f"action={action} needs `content` with the text to store")
    return content


def _refusal(refused: Refused, text: str, action: str) -> KnowledgeError:
    """The error that tells the model why nothing was stored and what to do instead."""
    if refused.reason == "empty":
        return KnowledgeError(f"action={action} needs `content` with the text to store")
    if refused.reason == "too-long":
        return KnowledgeError(
            f"content is {len(text)} characters; the limit is {MAX_TEXT}. Store a summary instead."
        )
    if refused.reason == "echo":
        return KnowledgeError(
            "this text is the memory brief itself (it carries the brief's marker) and memory "
            "already holds it; store the fact in your own words instead"
        )
    if refused.reason == "private-only":
        return KnowledgeError(
            "nothing left after removing <private> spans; nothing was stored. "
            "Leave out the <private> tags for text that should be remembered."
        )
    if refused.reason == "opted-out":
        return KnowledgeError(f"{refused.detail}; nothing was stored")
    return KnowledgeError(
        "this project is excluded from memory by CAPTURE_EXCLUDE; nothing was stored"
    )


def _admitted(result: Admitted | Refused, text: str, action: str) -> Admitted:
    if isinstance(result, Refused):
        raise _refusal(result, text, action)
    return result


def manage_knowledge(
    state: ServerState,
    *,
    action: Literal["add", "update", "remove"],
    target: Literal["memory", "sub_profile"],
    content: str | None,
    memory_id: int | None,
    platform: str | None,
    model: str | None,
    slot: str | None = None,
    expires: str | None = None,
    now: datetime | None = None,
    speaker: Speaker | None = None,
) -> KnowledgeResult:
    """``speaker``: the subagent that stores a fact (seed A's fields; only ``add`` keeps it).
    ``model`` is not kept: a pinned fact is the user's."""
    del model
    if target == "sub_profile":
        return _sub_profile(state, action, content)
    if action == "add":
        text = _require_text(content, action)
        fact = FactSlot(
            slot_name(slot) if slot is not None else None,
            expiry(expires, now or datetime.now(UTC)) if expires is not None else None,
        )
        admitted = _admitted(_admission(state).pinned_fact(text, cwd=state.cwd), text, action)
        return _add(state, admitted, platform, speaker or Speaker(), fact)
    if slot is not None or expires is not None:
        raise KnowledgeError(
            "`slot` and `expires` go with action=add: add the new value and it replaces the "
            "slot's old one"
        )
    if memory_id is None:
        raise KnowledgeError(
            f"action={action} on target=memory needs `memory_id` (the `id` of a "
            "search_memory result)"
        )
    with state.pool.connection() as conn:
        row = knowledge.get_memory(conn, state.user_id, memory_id)
        if row is None:
            raise KnowledgeError(
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
        text = _require_text(content, action)
        admitted = _admitted(_admission(state).edited_text(text), text, action)
        knowledge.update_memory_text(
            conn,
            memory_id,
            admitted.text,
            changed_by="manage_knowledge",
            has_vector=state.has_vector,
        )
        embedded = _embed_now(state, conn, memory_id, admitted.text)
        tagged = _tag_now(state, conn, memory_id)
        return KnowledgeResult(
            stored=True,
            action=action,
            target=target,
            id=memory_id,
            is_pinned=row.is_pinned,
            tagged=tagged,
            embedded=embedded,
            note="previous text kept in history",
        )


def _add(
    state: ServerState,
    admitted: Admitted,
    platform: str | None,
    speaker: Speaker,
    fact: FactSlot,
) -> KnowledgeResult:
    git = admitted.git
    with state.pool.connection() as conn, conn.transaction():
        if fact.slot is not None:
            slots.lock_slot(conn, state.user_id, fact.slot)
            live = slots.live_value(conn, state.user_id, fact.slot)
            if live is not None and live.message == admitted.text:
                slots.fill_slot(conn, state.user_id, live.id, fact.slot, fact.expires_at)
                return KnowledgeResult(
                    stored=False,
                    action="add",
                    target="memory",
                    id=live.id,
                    is_pinned=True,
                    slot=fact.slot,
                    note="the slot already holds this value; nothing changed",
                )
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    agent_platform=platform or "unknown",
                    role="user",
                    message=admitted.text,
                    agent_model=None,
                    subagent=speaker.subagent,
                    subagent_model=speaker.subagent_model if speaker.subagent else None,
                    subagent_role=speaker.subagent_role if speaker.subagent else None,
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
        replaced = None
        if fact.slot is not None or fact.expires_at is not None:
            replaced = slots.fill_slot(conn, state.user_id, memory_id, fact.slot, fact.expires_at)
        embedded = _embed_now(state, conn, memory_id, admitted.text)
        tagged = _tag_now(state, conn, memory_id)
    # the pinned fact is the user's: the model is not kept (seed A stored none either)
    return KnowledgeResult(
        stored=True,
        action="add",
        target="memory",
        id=memory_id,
        is_pinned=True,
        tagged=tagged,
        embedded=embedded,
        slot=fact.slot,
        expires_at=fact.expires_at,
        superseded=replaced,
        note=f"replaced memory {replaced} (kept in history, found with include_archived=true)"
        if replaced
        else None,
    )


@dataclass(frozen=True, slots=True)
class Speaker:
    """Who stores a fact when it is a subagent (seed A's ``subagent`` fields)."""

    subagent: bool = False
    subagent_model: str | None = None
    subagent_role: str | None = None


@dataclass(frozen=True, slots=True)
class FactSlot:
    slot: str | None
    expires_at: datetime | None


_SLOT = re.compile(r"^[a-z0-9][a-z0-9_.:/-]{0,99}$")


def slot_name(text: str) -> str:
    """A slot name as stored (lower case), or a KnowledgeError saying what a slot looks like."""
    name = text.strip().lower()
    if not _SLOT.match(name):
        raise KnowledgeError(
            f"slot {text!r} is not a slot name: use dotted words such as db.staging.port "
            "(letters, digits, . _ - : /, at most 100 characters)"
        )
    return name


def expiry(text: str, now: datetime) -> datetime:
    """When a fact stops being shown: a duration from now (``7d``, ``12h``), a day or month in
    the product's one date grammar (its end, in ``now``'s zone), or an ISO date and time."""
    token = text.strip()
    try:
        when = now + parse_duration(token)
    except ValueError:
        try:
            if "T" in token or " " in token.strip():
                when = datetime.fromisoformat(token.replace("Z", "+00:00"))
                when = when if when.tzinfo else when.replace(tzinfo=UTC)
            else:
                end = parse_date_range(f"..{token}", now).end
                if end is None:
                    raise ValueError(token)
                when = end
        except ValueError:
            raise KnowledgeError(
                f"expires {text!r} not understood: give a duration such as 7d or 12h, or a "
                "date such as 2026-03-01"
            ) from None
    if when <= now:
        raise KnowledgeError(f"expires {text!r} is in the past; give a future date or a duration")
    return when


def _tag_now(
    state: ServerState, conn: psycopg.Connection[Any], memory_id: int
) -> Literal["ok", "pending"]:
    """Tag at once with the tagger's heuristic (its repository's project, keyword d_tags);
    with a tagger model configured the Cold Path still refines the row. A failure leaves the
    row for the Cold Path (``pending``)."""
    final = role_endpoint(state.settings, "tagger") is None
    try:
        with conn.transaction():
            tagger.tag_now(conn, state.user_id, memory_id, final=final)
    except psycopg.Error as exc:
        log.warning("tagging memory %d failed, left for the Cold Path: %s", memory_id, exc)
        return "pending"
    return "ok"


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
            note = _require_text(content, action)
            text = _admitted(_admission(state).edited_text(note), note, action).text
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
    result = _admission(state).saved_message(message, cwd=state.cwd)
    if isinstance(result, Refused):
        if result.reason in ("empty", "too-long"):
            raise _refusal(result, message, "save_message")
        return SaveResult(stored=False, skipped=_SKIPPED[result.reason])
    git = result.git
    with state.pool.connection() as conn:
        counts = insert_memories(
            conn,
            state.user_id,
            [
                NewMemory(
                    agent_platform=platform or "unknown",
                    role=role,
                    message=result.text,
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


_SKIPPED = {
    "echo": "brief echo: the text is the memory brief itself",
    "private-only": "nothing left after removing private spans",
    "excluded": "excluded project (CAPTURE_EXCLUDE)",
    "opted-out": "project opted out (.agents-memory/no-memory)",
}
