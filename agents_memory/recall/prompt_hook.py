"""What the per-prompt hook prints, one implementation for its two ways: the capture daemon's
socket (:mod:`agents_memory.recall.socket_server`) and the hook's own fallback
(:mod:`agents_memory.hooks.prompt`).

The owner's switches (:mod:`agents_memory.recall.prompt_switch`) are checked first, before any
search; then :func:`~agents_memory.recall.prompt_recall.recall_for_prompt` picks the memories
and the client's adapter puts them in its envelope
(:meth:`~agents_memory.adapters.base.Adapter.prompt_hook_output`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from agents_memory.adapters import get_adapter
from agents_memory.config import Settings
from agents_memory.recall.prompt_recall import PromptRecall, recall_for_prompt
from agents_memory.recall.prompt_switch import off_reason
from agents_memory.recall.search import QueryVector, held_query_vector

OFF = PromptRecall("", (), 0.0, "off")


def switched_off(settings: Settings, platform: str, event: dict[str, Any]) -> bool:
    """Whether the prompt gets nothing before any search: ``platform`` has no per-prompt hook,
    ``PROMPT_RECALL=off``, or a marker of the prompt's project says so."""
    if get_adapter(platform).prompt_hook_event is None:
        return True
    return off_reason(settings, event.get("cwd")) is not None


def prompt_recall(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
    *,
    vector: Callable[[str], QueryVector],
    record: bool = True,
) -> PromptRecall:
    """The memories for the prompt in ``event``, or :data:`OFF` when a switch says so (the
    client has no per-prompt hook, ``PROMPT_RECALL=off``, the project's marker); ``record``
    False for a preview (the console's), which gives the session nothing."""
    if switched_off(settings, platform, event):
        return OFF
    event = get_adapter(platform).prompt_event(event)
    return recall_for_prompt(conn, settings, user_id, platform, event, vector=vector, record=record)


def prompt_output(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
    *,
    vector: Callable[[str], QueryVector],
) -> str:
    """What ``platform``'s per-prompt hook prints (empty: nothing). The connection's work is
    committed (the recall may record what it gave the session)."""
    recall = prompt_recall(conn, settings, user_id, platform, event, vector=vector)
    conn.commit()
    return get_adapter(platform).prompt_hook_output(recall.text)


def full_text_only(settings: Settings) -> Callable[[str], QueryVector]:
    """The ``vector`` of a caller that holds no embedding model (the hook's fallback: loading
    one would take longer than the hook's whole budget)."""
    return lambda text: held_query_vector(settings, None, text)
