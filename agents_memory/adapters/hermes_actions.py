"""Hermes Agent's tool calls: an ``assistant`` row's ``tool_calls`` (OpenAI-style
``[{id, function: {name, arguments}}]``) and the ``tool`` rows that answer them
(``tool_call_id``, ``tool_name``, ``content``: the tool's output, often a JSON object).

Keys: the call's ``id``; the issuing turn is the assistant row's key
(``hermes:<session id>:<message id>``; a row that only calls tools has no text, so no turn of
its own). Outcome: a JSON answer with an ``error`` (or ``status`` ``error`` / ``failed``) is
an error, ``exit_code`` its exit code; any other answer is ok. A store written before Hermes
kept tool calls has no such columns: then there are no actions.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from agents_memory.adapters._actions import (
    ActionLog,
    ArgNames,
    Result,
    kind_of,
    parsed_json,
    patch_stat,
    relative,
    text_value,
    with_arguments,
)
from agents_memory.adapters.base import Action, ActionOutcome

COLUMNS: Final = ("tool_calls", "tool_call_id")


def tool_columns(conn: sqlite3.Connection) -> str:
    """The select list of the tool columns, ``NULL`` for those this store lacks."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
    return ", ".join(name if name in present else "NULL" for name in COLUMNS)


def add_calls(
    log: ActionLog,
    tool_calls: object,
    *,
    platform: str,
    session_id: str,
    turn_key: str,
    at: datetime | None,
    cwd: str | None,
) -> None:
    """An assistant row's ``tool_calls``, into ``log``."""
    calls = parsed_json(tool_calls)
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        call_id = text_value(call.get("id")) if isinstance(call, dict) else None
        tool = text_value(function.get("name")) if isinstance(function, dict) else None
        if call_id is None or tool is None or not isinstance(function, dict):
            continue
        args = parsed_json(function.get("arguments"))
        args = args if isinstance(args, dict) else {}
        action = Action(
            call_id, platform, session_id, tool, kind_of(tool), turn_key, started_at=at, cwd=cwd
        )
        log.call(_described(action, args, cwd))


_ARGS: Final = ArgNames(
    paths=("path", "file_path"),
    commands=("command", "goal", "query", "pattern"),
    new_text="new_string",
    old_text="old_string",
)


def _described(action: Action, args: dict[str, Any], cwd: str | None) -> Action:
    """``action`` with its targets, command and diffstat: ``write_file`` its ``content``'s
    lines, ``patch`` in ``replace`` mode its strings' lines, in ``patch`` mode its envelope's
    files and diffstat (``*** Begin Patch``, as Codex writes them)."""
    patch = text_value(args.get("patch")) if args.get("mode") == "patch" else None
    stat = patch_stat(patch) if patch else None
    if stat is not None:
        targets = tuple(relative(f, cwd) for f in stat.files)
        return replace(
            action, kind=stat.kind, targets=targets, added=stat.added, removed=stat.removed
        )
    return with_arguments(action, args, _ARGS, cwd)


def add_result(
    log: ActionLog, call_id: object, content: object, *, session_id: str, at: datetime | None
) -> None:
    """A ``tool`` row answering ``call_id``, into ``log``."""
    key = text_value(call_id)
    if key is None:
        return
    answer = parsed_json(content)
    outcome: ActionOutcome = "ok"
    code: int | None = None
    text = content if isinstance(content, str) else None
    if isinstance(answer, dict):
        status = str(answer.get("status", "")).lower()
        error = answer.get("error")
        exit_code = answer.get("exit_code")
        code = exit_code if isinstance(exit_code, int) else None
        if error or status in ("error", "failed") or code:
            outcome = "error"
        text = text_value(error) or text_value(answer.get("output")) or text
    log.result(session_id, key, Result(outcome, code, text, None, at))
