"""The brief a session-start hook injects: gathered for the client's hook event, cut to the
client's limit and wrapped in its envelope (both from the client's adapter).

Used by the hook itself when it builds the brief directly and by the capture daemon's brief
socket (:mod:`agents_memory.recall.socket_server`), so both answer the same bytes. The hook's
brief records the turns it showed for the session (table ``prompt_recalls``), so that the
session's prompts are not given them again (:mod:`agents_memory.recall.prompt_recall`).
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from agents_memory.adapters import get_adapter
from agents_memory.config import Settings
from agents_memory.errors import first_line
from agents_memory.recall.brief import BriefRequest, brief_with_ids
from agents_memory.store.knowledge import latest_model
from agents_memory.store.prompt_recalls import record_given

log = logging.getLogger(__name__)


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
    return _brief(conn, settings, user_id, platform, event)[0]


def _brief(
    conn: psycopg.Connection[Any],
    settings: Settings,
    user_id: int,
    platform: str,
    event: dict[str, Any],
) -> tuple[str, tuple[int, ...]]:
    model = _text(event, "model") or latest_model(
        conn, user_id, platform, _text(event, "session_id")
    )
    return brief_with_ids(
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
    (empty when there is nothing to say). With the event's session id, the turns it shows are
    recorded for the session (committed; a failure to record costs the brief nothing)."""
    brief, ids = _brief(conn, settings, user_id, platform, event)
    session_id = _text(event, "session_id")
    if session_id and ids:
        try:
            record_given(
                conn, user_id, platform, session_id, kind="brief", outcome="brief", memory_ids=ids
            )
            conn.commit()
        except psycopg.Error as exc:
            log.warning("could not record the brief's turns: %s", first_line(exc))
            conn.rollback()
    return get_adapter(platform).hook_output(brief)
