"""OpenCode's tool calls: the ``tool`` parts of an assistant message (``callID``, ``tool``,
``state``: ``status``, ``input``, ``output`` / ``error``, ``time.start`` / ``time.end`` in ms).
A part is rewritten as the call runs; a re-read returns the same key with the newer state.

Keys: the ``callID``; the issuing turn is the message's key (``opencode:<message id>``).
OpenCode names an MCP tool ``<server>_<tool>`` (``fake_fake_echo``): a tool that is none of
OpenCode's own and has an ``_`` is taken as one. Outcome: ``completed`` ok, ``error`` error
(``aborted`` in the error text: interrupted), ``pending`` / ``running`` unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from agents_memory.adapters import _sqlite
from agents_memory.adapters._actions import (
    ActionLog,
    ArgNames,
    Result,
    kind_of,
    with_arguments,
)
from agents_memory.adapters.base import Action, ActionOutcome

_OWN_TOOLS: Final = frozenset(
    {
        "bash", "read", "write", "edit", "multiedit", "patch", "glob", "grep", "list", "ls",
        "webfetch", "websearch", "codesearch", "task", "todowrite", "todoread", "lsp",
        "invalid", "batch", "skill", "question",
    }
)  # fmt: skip


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


_ARGS = ArgNames(
    paths=("filePath", "path"),
    commands=("command", "pattern", "query", "description"),
    new_text="newString",
    old_text="oldString",
)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _call(
    part: Mapping[str, Any], platform: str, session_id: str, turn_key: str, cwd: str | None
) -> Action | None:
    call_id, tool = _str(part.get("callID")), _str(part.get("tool"))
    if call_id is None or tool is None:
        return None
    state = _mapping(part.get("state"))
    args = _mapping(state.get("input"))
    started = _sqlite.from_millis(_mapping(state.get("time")).get("start"))
    is_mcp = tool not in _OWN_TOOLS and "_" in tool
    action = Action(
        call_id, platform, session_id, tool, kind_of(tool, mcp=is_mcp), turn_key,
        started_at=started, cwd=cwd,
    )  # fmt: skip
    if is_mcp:
        server, _, name = tool.partition("_")
        return replace(action, targets=(f"{server}/{name}",))
    return with_arguments(action, args, _ARGS, cwd)


def _result(part: Mapping[str, Any]) -> Result | None:
    state = _mapping(part.get("state"))
    status = _str(state.get("status"))
    if status not in ("completed", "error"):
        return None
    error = _str(state.get("error"))
    outcome: ActionOutcome = "ok" if status == "completed" else "error"
    if error and "abort" in error.lower():
        outcome = "interrupted"
    exit_code = _mapping(state.get("metadata")).get("exit")
    code = exit_code if isinstance(exit_code, int) else None
    if code and outcome == "ok":
        outcome = "error"
    times = _mapping(state.get("time"))
    start, end = times.get("start"), times.get("end")
    duration = end - start if isinstance(start, int) and isinstance(end, int) else None
    text = error or _str(state.get("output"))
    return Result(outcome, code, text, duration, _sqlite.from_millis(end))


def add_part(
    log: ActionLog,
    part: Mapping[str, Any],
    *,
    platform: str,
    session_id: str,
    turn_key: str,
    cwd: str | None,
) -> None:
    """A ``tool`` part, into ``log``."""
    action = _call(part, platform, session_id, turn_key, cwd)
    if action is None:
        return
    log.call(action)
    result = _result(part)
    if result is not None:
        log.result(session_id, action.key, result)
