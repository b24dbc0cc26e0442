"""``memory-capture hook session-start --platform P``: print the brief for a new session.

Fails open, always: on a time-out, a database that is down or hung, bad input or any other
error it prints nothing and exits 0 within ``HOOK_TIMEOUT_MS`` (the deadline is armed by
:mod:`agents_memory.hooks.fast` before anything heavy is imported).

Two ways to the brief, fastest first:

1. ask the running capture daemon over its Unix socket (it has the database connection and the
   modules loaded, so the hook process needs nothing but the standard library);
2. build it here: settings, a database connection, :mod:`agents_memory.recall.session`.
"""

from __future__ import annotations

import json
from typing import Any


def parse_event(stdin_text: str) -> dict[str, Any]:
    """The client's hook JSON (an empty or malformed one is treated as no information)."""
    try:
        event = json.loads(stdin_text) if stdin_text.strip() else {}
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def build_direct(platform: str, event: dict[str, Any]) -> str:
    """Path 2: load settings, connect (never start a server), render the hook's output."""
    from agents_memory.config import load_settings
    from agents_memory.recall.session import hook_output
    from agents_memory.store.entry import open_user_connection

    settings = load_settings()
    with open_user_connection(
        settings,
        start=False,
        connect_timeout=max(1.0, settings.hook_timeout_ms / 1000),
        statement_timeout_ms=settings.hook_timeout_ms,
    ) as opened:
        output = hook_output(opened.conn, settings, opened.user_id, platform, event)
        opened.conn.rollback()
    return output
