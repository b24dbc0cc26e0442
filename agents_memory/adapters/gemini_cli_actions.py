"""Gemini CLI's tool calls: the ``toolCalls`` of a ``gemini`` message, each with its call
(``id``, ``name``, ``args``) and its end (``status``, ``result`` ``functionResponse``) in one
object. The message is re-appended as the calls progress (an upsert), so a later read
returns the same key with the fuller record.

Keys: the call's ``id``; the issuing turn is the message's key
(``gemini-cli:<sessionId>:<message id>``; a tool-only message, with empty text, has none of
its own). MCP tools are named ``mcp_<server>_<tool>`` and say their server in
``displayName`` (``fake_echo (fake MCP Server)``). Outcome: ``success`` ok, ``error`` error,
``cancelled`` interrupted; a shell command's ``Exit Code: N`` its exit code.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Final

from agents_memory.adapters._actions import (
    ActionLog,
    ArgNames,
    Result,
    kind_of,
    with_arguments,
)
from agents_memory.adapters._jsonl import parse_timestamp
from agents_memory.adapters.base import Action, ActionOutcome

_STATUS: Final[dict[str, ActionOutcome]] = {
    "success": "ok",
    "error": "error",
    "cancelled": "interrupted",
}
_MCP_SERVER: Final = re.compile(r"\((.+?) MCP Server\)\s*$")
_EXIT: Final = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)


_ARGS = ArgNames(
    paths=("file_path", "absolute_path", "path", "dir_path"),
    commands=("command", "pattern", "query"),
    new_text="new_string",
    old_text="old_string",
)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _mcp(call: dict[str, Any], tool: str) -> str | None:
    """``server/tool`` of an MCP call (from its ``displayName``), else ``None``."""
    display = _str(call.get("displayName")) or ""
    match = _MCP_SERVER.search(display)
    if match is None:
        return None
    server = match.group(1)
    name = display[: match.start()].strip() or tool.removeprefix(f"mcp_{server}_")
    return f"{server}/{name}"


def _call(
    call: dict[str, Any], platform: str, session_id: str, turn_key: str | None, cwd: str | None
) -> Action | None:
    call_id, tool = _str(call.get("id")), _str(call.get("name"))
    if call_id is None or tool is None:
        return None
    args = call.get("args")
    args = args if isinstance(args, dict) else {}
    mcp = _mcp(call, tool)
    action = Action(
        call_id, platform, session_id, tool, kind_of(tool, mcp=mcp is not None), turn_key,
        started_at=parse_timestamp(call.get("timestamp")), cwd=cwd,
    )  # fmt: skip
    if mcp is not None:
        return replace(action, targets=(mcp,))
    return with_arguments(action, args, _ARGS, cwd)


def _result(call: dict[str, Any]) -> Result | None:
    status = _str(call.get("status"))
    if status is None:
        return None
    texts: list[str] = []
    for part in call.get("result") or []:
        response = part.get("functionResponse", {}) if isinstance(part, dict) else {}
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            texts.extend(t for t in (body.get("error"), body.get("output")) if isinstance(t, str))
    text = "\n".join(texts) or _str(call.get("resultDisplay"))
    match = _EXIT.search(text or "")
    code = int(match.group(1)) if match else None
    outcome = _STATUS.get(status, "unknown")
    if code and outcome == "ok":
        outcome = "error"
    return Result(outcome, code, text, None, parse_timestamp(call.get("timestamp")))


def add_calls(
    log: ActionLog,
    message: dict[str, Any],
    *,
    platform: str,
    session_id: str,
    turn_key: str,
    cwd: str | None,
) -> None:
    """The ``toolCalls`` of a ``gemini`` message, into ``log``."""
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return
    for call in calls:
        if not isinstance(call, dict):
            continue
        action = _call(call, platform, session_id, turn_key, cwd)
        if action is None:
            continue
        log.call(action)
        result = _result(call)
        if result is not None:
            log.result(session_id, action.key, result)
