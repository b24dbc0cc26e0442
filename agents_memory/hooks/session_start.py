"""``memory-capture hook session-start --platform P``: print the brief for a new session.

Fails open, always: on a time-out, a database that is down or hung, bad input or any other
error it prints nothing and exits 0 within ``HOOK_TIMEOUT_MS`` (the deadline is armed by
:mod:`agents_memory.hooks.fast` before anything heavy is imported).

Two ways to the brief, fastest first:

1. ask the running capture daemon over its Unix socket (it has the database connection and the
   modules loaded, so the hook process needs nothing but the standard library);
2. build it here: settings, a database connection, the brief builder.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

    from agents_memory.config import Settings

# What each client accepts as injected context (characters).
CLIENT_LIMITS = {"claude-code": 9500, "codex-cli": 8000, "gemini-cli": 8000}
DEFAULT_LIMIT = 6000


def render(brief: str) -> str:
    """The hook's stdout: the JSON envelope every injecting client reads."""
    if not brief:
        return ""
    payload = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief}}
    return json.dumps(payload, ensure_ascii=False)


def parse_event(stdin_text: str) -> dict[str, Any]:
    """The client's hook JSON (an empty or malformed one is treated as no information)."""
    try:
        event = json.loads(stdin_text) if stdin_text.strip() else {}
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


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
    """The brief for a session described by the client's hook ``event``."""
    from agents_memory.server.brief import BriefRequest, build_brief
    from agents_memory.store.knowledge import latest_model

    model = _text(event, "model") or latest_model(
        conn, user_id, platform, _text(event, "session_id")
    )
    return build_brief(
        conn,
        settings,
        user_id,
        BriefRequest(
            platform=platform,
            model=model,
            device=settings.device_name,
            cwd=_text(event, "cwd"),
            mode="full",
            max_chars=CLIENT_LIMITS.get(platform, DEFAULT_LIMIT),
        ),
    )


def build_direct(platform: str, event: dict[str, Any]) -> str:
    """Path 2: load settings, connect (never start a server), build the brief."""
    from agents_memory.config import load_settings
    from agents_memory.store import database
    from agents_memory.store.memories import ensure_user

    settings = load_settings()
    db = database.locate_database(settings, start=False)
    timeout = max(1.0, settings.hook_timeout_ms / 1000)
    with database.connect(
        db, connect_timeout=timeout, statement_timeout_ms=settings.hook_timeout_ms
    ) as conn:
        user_id = ensure_user(conn, settings.user_name)
        brief = brief_for(conn, settings, user_id, platform, event)
        conn.rollback()
    return brief
