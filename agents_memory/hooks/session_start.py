"""``memory-capture hook session-start --platform P``: print the brief for a new session.

Fails open, always: on a time-out, a database that is down or hung, bad input or any other
error it prints nothing and exits 0 within ``HOOK_TIMEOUT_MS``. The work runs in a daemon
thread; the main thread waits for it with a deadline and, past it, leaves at once with
``os._exit(0)`` (a thread blocked in a socket cannot be interrupted otherwise).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

# What each client accepts as injected context (characters) and how it wants it.
CLIENT_LIMITS = {"claude-code": 9500, "codex-cli": 8000, "gemini-cli": 8000}
DEFAULT_LIMIT = 6000


def render(platform: str, brief: str) -> str:
    """The hook's stdout for ``platform``: the JSON envelope every injecting client reads."""
    if not brief:
        return ""
    payload: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief}
    }
    return json.dumps(payload, ensure_ascii=False)


def build(platform: str, stdin_text: str) -> str:
    """Read the client's stdin JSON, build the brief, return the hook's stdout."""
    from agents_memory.config import load_settings
    from agents_memory.server.brief import BriefRequest, build_brief
    from agents_memory.store import database
    from agents_memory.store.knowledge import latest_model
    from agents_memory.store.memories import ensure_user

    event = json.loads(stdin_text) if stdin_text.strip() else {}
    if not isinstance(event, dict):
        return ""
    settings = load_settings()
    db = database.locate_database(settings, start=False)
    timeout = max(1.0, settings.hook_timeout_ms / 1000)
    with database.connect(
        db, connect_timeout=timeout, statement_timeout_ms=settings.hook_timeout_ms
    ) as conn:
        user_id = ensure_user(conn, settings.user_name)
        session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
        model = event.get("model") if isinstance(event.get("model"), str) else None
        model = model or latest_model(conn, user_id, platform, session)
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        brief = build_brief(
            conn,
            settings,
            user_id,
            BriefRequest(
                platform=platform,
                model=model,
                device=settings.device_name,
                cwd=cwd,
                mode="full",
                max_chars=CLIENT_LIMITS.get(platform, DEFAULT_LIMIT),
            ),
        )
        conn.rollback()
    return render(platform, brief)


def run(platform: str, timeout_ms: int | None = None) -> None:
    """Entry point: never raises, never exits non-zero, never outlives the budget."""
    result: list[str] = []
    from agents_memory.config import hook_budget_ms

    budget = (timeout_ms or hook_budget_ms()) / 1000

    def work() -> None:
        try:
            stdin_text = sys.stdin.read() if not sys.stdin.isatty() else ""
            result.append(build(platform, stdin_text))
        except BaseException:
            result.append("")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(budget)
    if worker.is_alive() or not result:
        sys.stdout.flush()
        os._exit(0)
    if result[0]:
        sys.stdout.write(result[0] + "\n")
        sys.stdout.flush()
