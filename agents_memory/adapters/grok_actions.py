"""Grok Build's tool calls: the ``tool_calls`` of ``assistant`` lines (``id``, ``name``,
``arguments`` as a JSON string), answered by ``tool_result`` lines (``tool_call_id``,
``content``), and ``backend_tool_call`` lines for the searches xAI's backend runs itself
(``kind``: ``tool_type`` ``web_search``, its ``action.query``, ``id`` and ``status``).

Keys: the call's ``id``; the issuing turn is the assistant line's own key when it has text,
else the assistant turn before it since the last user turn (``None`` when there is none).
Grok writes no times per line, so an action has no time. MCP tools are named
``<server>__<tool>``. Outcome: a result is ok unless its text starts like a failure
(``Error``, ``error:``, ``failed``) or names a non-zero exit code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from agents_memory.adapters._actions import ActionLog, ArgNames, Result, kind_of, with_arguments
from agents_memory.adapters.base import Action, ActionOutcome

PLATFORM: Final = "grok"
_ARGS = ArgNames(
    paths=("target_file", "file_path", "path", "relative_workspace_path", "target_directory"),
    commands=("command", "query", "pattern", "glob_pattern"),
    new_text="new_string",
    old_text="old_string",
)
_EXIT: Final = re.compile(r"exit(?:ed with)? code:? (-?\d+)", re.IGNORECASE)
_FAILED: Final = ("error", "failed", "fatal")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def add_calls(
    log: ActionLog,
    record: Mapping[str, Any],
    *,
    session_id: str,
    turn_key: str | None,
    cwd: str | None,
) -> None:
    """The ``tool_calls`` of an ``assistant`` line, into ``log``."""
    calls = record.get("tool_calls")
    if not isinstance(calls, list):
        return
    for call in calls:
        if not isinstance(call, dict):
            continue
        call_id, tool = _str(call.get("id")), _str(call.get("name"))
        if call_id is None or tool is None:
            continue
        mcp = "__" in tool
        action = Action(
            call_id, PLATFORM, session_id, tool, kind_of(tool, mcp=mcp), turn_key, cwd=cwd
        )
        if mcp:
            server, _, name = tool.partition("__")
            log.call(replace(action, targets=(f"{server}/{name}",)))
            continue
        log.call(with_arguments(action, _arguments(call.get("arguments")), _ARGS, cwd))


def add_result(log: ActionLog, record: Mapping[str, Any], *, session_id: str) -> None:
    """A ``tool_result`` line, into ``log``."""
    key = _str(record.get("tool_call_id"))
    if key is None:
        return
    content = record.get("content")
    text = content if isinstance(content, str) else None
    code_match = _EXIT.search(text or "")
    code = int(code_match.group(1)) if code_match else None
    failed = bool(code) or (text or "").lstrip()[:40].lower().startswith(_FAILED)
    outcome: ActionOutcome = "error" if failed else "ok"
    log.result(session_id, key, Result(outcome, code, text))


def add_backend_call(
    log: ActionLog,
    record: Mapping[str, Any],
    *,
    session_id: str,
    turn_key: str | None,
    cwd: str | None,
) -> None:
    """A ``backend_tool_call`` line (a web search xAI ran), into ``log``."""
    kind = record.get("kind")
    kind = kind if isinstance(kind, dict) else {}
    key = _str(kind.get("id")) or _str(record.get("id"))
    tool = _str(kind.get("tool_type")) or "backend_tool"
    if key is None:
        return
    action_part = kind.get("action")
    query = _str(action_part.get("query")) if isinstance(action_part, dict) else None
    status = _str(kind.get("status")) or _str(record.get("status"))
    outcome: ActionOutcome = (
        "ok" if status == "completed" else "error" if status == "failed" else "unknown"
    )
    action = Action(key, PLATFORM, session_id, tool, kind_of(tool), turn_key, cwd=cwd)
    log.call(replace(action, command=query, outcome=outcome))
