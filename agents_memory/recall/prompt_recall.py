"""Memory that speaks up: the few memories a user's prompt needs, and silence when there are none.

A per-prompt hook (Claude Code's and Codex's ``UserPromptSubmit``, Gemini CLI's ``BeforeAgent``)
hands the user's prompt to :func:`recall_for_prompt`, which runs the same search as
``search_memory`` and adds at most :data:`MAX_MEMORIES` memories in at most :data:`MAX_CHARS`
characters, one line each, only when the best hit clears the search's own calibrated confidence
(:func:`agents_memory.store.search.confidence.assess`: one "weak", one implementation).

Silence is the default: an acknowledgement or a command, a hit of the current session or one
already given to it, or a weak best hit adds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from agents_memory.clipping import clip
from agents_memory.config import Settings
from agents_memory.recall.search import PreparedSearch, QueryVector, search_user
from agents_memory.store.search.types import SearchFilters, SearchHit

MAX_MEMORIES = 3
MAX_CHARS = 1_200
PROMPT_LIMIT = 4_000
"""A prompt is searched on its first this many characters."""

Reason = Literal["added", "empty", "ack", "weak", "none", "off"]

_ACK = re.compile(
    r"^\s*(?:/\S*.*|(?:ok(?:ay)?|k|yes|yep|no|nope|sure|thanks?(?: you)?|thx|go(?: on| ahead)?|"
    r"continue|proceed|next|done|great|nice|cool|lgtm|y|n)[\s.!?]*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class PromptRecall:
    """What a prompt gets: ``text`` ("" = nothing), the memories in it, the best hit's
    confidence and why (``added`` or the reason for silence)."""

    text: str
    memory_ids: tuple[int, ...]
    best: float
    reason: Reason


def _text(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value.strip() else None


def recall_for_prompt(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
    *,
    vector: Callable[[str], QueryVector],
) -> PromptRecall:
    """The memories the prompt in the client's hook ``event`` needs (its ``prompt``,
    ``session_id`` and ``cwd``); ``vector`` embeds the prompt (or says why it cannot)."""
    prompt = _text(event, "prompt")
    if prompt is None:
        return PromptRecall("", (), 0.0, "empty")
    if _ACK.match(prompt):
        return PromptRecall("", (), 0.0, "ack")
    query = prompt[:PROMPT_LIMIT]
    result = search_user(
        conn,
        user_id,
        PreparedSearch(query, SearchFilters(limit=10)),
        vector(query).vector,
        settings,
    )
    session_id = _text(event, "session_id")
    hits = [h for h in result.hits if session_id is None or h.session_id != session_id]
    best = max((h.confidence or 0.0 for h in hits), default=0.0)
    if result.weak or not hits:
        return PromptRecall("", (), best, "weak" if hits else "none")
    chosen = hits[:MAX_MEMORIES]
    lines = [_line(h) for h in chosen]
    text, _ = clip("\n".join(lines), MAX_CHARS)
    return PromptRecall(text, tuple(h.id for h in chosen), best, "added")


def _line(hit: SearchHit) -> str:
    where = f" [{hit.p_tag}]" if hit.p_tag else ""
    excerpt = " ".join(hit.message.split())
    line, _ = clip(
        f"{hit.message_at:%Y-%m-%d} {hit.agent_platform}{where}: {excerpt} (id {hit.id})",
        MAX_CHARS // MAX_MEMORIES,
    )
    return line
