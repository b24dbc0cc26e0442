"""Claude Code's tool calls: ``tool_use`` blocks of assistant lines, and the ``tool_result``
blocks (with the line's ``toolUseResult``) of the user lines that answer them.

Keys: the ``tool_use.id`` (unique within the platform and session the action carries); the
issuing turn is the assistant line's response key
(``claude-code:a:<message.id>``), the one :mod:`agents_memory.adapters.claude_code` gives the
response's text. A tool-only response has no turn of its own; its calls keep the key anyway.

Outcome: ``is_error`` is an error (``Exit code N`` at the start of a Bash failure gives the
exit code), a refusal by the user or ``interrupted`` in ``toolUseResult`` is interrupted,
anything else answered is ok. Duration: ``toolUseResult.durationMs`` (or
``totalDurationMs``), else the two lines' timestamps.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from agents_memory.adapters._actions import (
    ActionLog,
    Result,
    command_line,
    kind_of,
    line_count,
    mcp_target,
    nonempty,
    relative,
    short,
)
from agents_memory.adapters.base import Action, ActionOutcome

PLATFORM: Final = "claude-code"
_EXIT_CODE: Final = re.compile(r"^Exit code (\d+)")
_REFUSED: Final = ("doesn't want to proceed", "interrupted by user", "User rejected tool use")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def call_of(
    block: dict[str, Any],
    *,
    session_id: str | None,
    turn_key: str,
    at: datetime | None,
    cwd: str | None,
) -> Action | None:
    """The action a ``tool_use`` block asks for (``None`` when the block has no id or name)."""
    tool_id, tool = _str(block.get("id")), _str(block.get("name"))
    if tool_id is None or tool is None:
        return None
    args = block.get("input")
    args = args if isinstance(args, dict) else {}
    kind = kind_of(tool)
    action = Action(
        key=tool_id,
        platform=PLATFORM,
        session_id=session_id,
        tool=tool,
        kind=kind,
        turn_key=turn_key,
        started_at=at,
        cwd=cwd,
    )
    return _described(action, tool, args, cwd)


def _described(action: Action, tool: str, args: dict[str, Any], cwd: str | None) -> Action:
    """``action`` with the targets, command and diffstat its arguments give."""
    path = _str(args.get("file_path")) or _str(args.get("notebook_path")) or _str(args.get("path"))
    targets = nonempty([relative(path, cwd) if path else None, _str(args.get("url"))])
    command: str | None = None
    added = removed = None
    if action.kind == "mcp":
        targets = nonempty([mcp_target(tool), *targets])
    elif action.kind == "shell":
        command = command_line(args.get("command"))
    elif action.kind == "search":
        command = _str(args.get("pattern"))
    elif action.kind == "web":
        command = _str(args.get("query"))
    elif action.kind == "agent":
        command = _str(args.get("description"))
    elif action.kind == "write":
        added = line_count(args.get("content"))
    elif action.kind == "edit":
        added, removed = _edit_stat(args)
    return replace(action, targets=targets, command=short(command), added=added, removed=removed)


def _edit_stat(args: dict[str, Any]) -> tuple[int, int]:
    """Lines added and removed by an ``Edit`` (or each edit of a ``MultiEdit``)."""
    edits = args.get("edits")
    pairs = edits if isinstance(edits, list) else [args]
    added = removed = 0
    for edit in pairs:
        if isinstance(edit, dict):
            added += line_count(edit.get("new_string") or edit.get("new_source"))
            removed += line_count(edit.get("old_string"))
    return added, removed


def _result_text(content: object) -> str | None:
    """The text of a ``tool_result``'s content (images and other blocks left out)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def result_of(block: dict[str, Any], rec: dict[str, Any], at: datetime | None) -> Result:
    """The outcome a ``tool_result`` block (and its line's ``toolUseResult``) records."""
    text = _result_text(block.get("content"))
    extra = rec.get("toolUseResult")
    detail = extra if isinstance(extra, dict) else {}
    outcome: ActionOutcome = "error" if block.get("is_error") is True else "ok"
    refused = any(mark in (text or "") for mark in _REFUSED) or (
        isinstance(extra, str) and any(mark in extra for mark in _REFUSED)
    )
    if refused or detail.get("interrupted") is True:
        outcome = "interrupted"
    exit_code: int | None = None
    match = _EXIT_CODE.match(text or "")
    if match:
        exit_code = int(match.group(1))
    stdout, stderr = _str(detail.get("stdout")), _str(detail.get("stderr"))
    if stdout or stderr:
        text = "\n".join(part for part in (stdout, stderr) if part)
    duration = detail.get("durationMs", detail.get("totalDurationMs"))
    return Result(
        outcome,
        exit_code,
        text,
        int(duration) if isinstance(duration, int | float) else None,
        at,
    )


def add_calls(
    log: ActionLog,
    content: object,
    *,
    session_id: str | None,
    turn_key: str,
    at: datetime | None,
    cwd: str | None,
) -> None:
    """The ``tool_use`` blocks of an assistant line's content, into ``log``."""
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            action = call_of(block, session_id=session_id, turn_key=turn_key, at=at, cwd=cwd)
            if action is not None:
                log.call(action)


def add_results(
    log: ActionLog, rec: dict[str, Any], *, session_id: str | None, at: datetime | None
) -> None:
    """The ``tool_result`` blocks of a user line, into ``log``."""
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            tool_id = _str(block.get("tool_use_id"))
            if tool_id is not None:
                log.result(session_id, tool_id, result_of(block, rec, at))
