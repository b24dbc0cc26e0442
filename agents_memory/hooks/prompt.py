"""``memory-capture hook prompt --platform P``: add the few memories a user's prompt needs.

Runs on every prompt, so its budget is its own and short (``PROMPT_HOOK_TIMEOUT_MS``, 300 ms by
default, armed by :mod:`agents_memory.hooks.fast` before anything heavy is imported). Fails
open, always: on a time-out, a database that is down or hung, bad input or any other error the
prompt goes through unchanged (no output, exit 0).

Two ways, fastest first:

1. ask the running capture daemon over its Unix socket (a ``{"prompt": …}`` request): it holds
   the connections and the embedding model, so it searches like ``search_memory``;
2. build it here, full-text only (loading an embedding model would take longer than the whole
   budget): settings, a database connection, :func:`agents_memory.recall.prompt_hook.prompt_output`.
"""

from __future__ import annotations

from typing import Any


def build_direct(platform: str, event: dict[str, Any]) -> str:
    """Path 2: load settings, connect (never start a server), render the hook's output."""
    from agents_memory.config import load_settings
    from agents_memory.recall.prompt_hook import full_text_only, prompt_output, switched_off
    from agents_memory.store.entry import open_user_connection

    settings = load_settings()
    if switched_off(settings, platform, event):
        return ""  # before connecting: off costs nothing
    budget = settings.prompt_hook_timeout_ms
    with open_user_connection(
        settings, start=False, connect_timeout=1.0, statement_timeout_ms=budget
    ) as opened:
        return prompt_output(
            opened.conn,
            settings,
            opened.user_id,
            platform,
            event,
            vector=full_text_only(settings),
        )
