"""The brief a session-start hook injects: gathered for the client's hook event, cut to the
client's limit and wrapped in its envelope (both from the client's adapter).

Used by the hook itself when it builds the brief directly and by the capture daemon's brief
socket (:mod:`agents_memory.recall.socket_server`), so both answer the same bytes.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.adapters import get_adapter
from agents_memory.config import Settings
from agents_memory.recall.brief import BriefRequest, build_brief
from agents_memory.store.knowledge import latest_model


def _text(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value else None


def brief_for(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
) -> str:
    """The brief for a session described by the client's hook ``event`` (its model, session id
    and working directory when the client sends them)."""
    model = _text(event, "model") or latest_model(
        conn, user_id, platform, _text(event, "session_id")
    )
    return build_brief(
        conn,
        settings,
        user_id,
        BriefRequest.full(
            settings,
            platform=platform,
            model=model,
            cwd=_text(event, "cwd"),
            max_chars=get_adapter(platform).brief_limit,
        ),
    )


def hook_output(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
) -> str:
    """What the session-start hook of ``platform`` prints: the brief in the client's envelope
    (empty when there is nothing to say)."""
    return get_adapter(platform).hook_output(brief_for(conn, settings, user_id, platform, event))
