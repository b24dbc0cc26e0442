"""Codex CLI's tool calls: the ``response_item`` call items (``function_call``,
``custom_tool_call``, ``local_shell_call``, ``web_search_call``) and their ``*_output`` items,
paired by ``call_id``.

Keys: the ``call_id`` (a web search, which has no call id, by its item ``id``), unique within
the platform and session the action carries. The
issuing turn is the latest assistant turn of the rollout since its latest user turn (``None``
when the model called a tool before saying anything; the store then links the action to the
turn before it).

Arguments: ``shell`` / ``local_shell_call`` take an argv (``bash -lc <script>`` is kept as
the script), ``exec_command`` a ``cmd`` string; ``apply_patch`` (a custom tool, or run through
the shell as ``applypatch`` / ``apply_patch <<'EOF'``) is an edit of the files its envelope
names, with its diffstat (a write when it only adds files).
MCP tools carry their server as ``namespace`` (``mcp__<server>``).

Outputs: a JSON object ``{"output", "metadata": {"exit_code", "duration_seconds"}}`` (0.3x),
a text with ``Exit code: N`` / ``Process exited with code N`` and ``Wall time: S seconds``
headers before ``Output:`` (newer builds), or a list of ``input_text`` items.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from agents_memory.adapters._actions import (
    ActionLog,
    Result,
    command_line,
    kind_of,
    nonempty,
    patch_stat,
    relative,
    short,
)
from agents_memory.adapters.base import Action, ActionOutcome

PLATFORM: Final = "codex-cli"
CALL_ITEMS: Final = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
OUTPUT_ITEMS: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
TOOL_ITEMS: Final = CALL_ITEMS | OUTPUT_ITEMS
_EXIT: Final = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)", re.MULTILINE)
_WALL: Final = re.compile(r"^Wall time: ([0-9.]+) seconds", re.MULTILINE)
_OUTPUT_MARK: Final = "\nOutput:\n"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    raw = payload.get("arguments", payload.get("input"))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw if isinstance(raw, dict) else {}


def call_of(
    payload: dict[str, Any],
    *,
    platform: str,
    session_id: str,
    turn_key: str | None,
    at: datetime | None,
    cwd: str | None,
) -> Action | None:
    """The action a call item asks for (``None`` without an id)."""
    item = payload.get("type")
    call_id = _str(payload.get("call_id")) or (
        _str(payload.get("id")) if item == "web_search_call" else None
    )
    if call_id is None:
        return None
    if item == "web_search_call":
        action = payload.get("action")
        query = _str(action.get("query")) if isinstance(action, dict) else None
        url = _str(action.get("url")) if isinstance(action, dict) else None
        return Action(
            call_id, platform, session_id, "web_search", "web", turn_key,
            targets=nonempty([url]), command=short(query), outcome="ok", started_at=at, cwd=cwd,
        )  # fmt: skip
    tool = "local_shell" if item == "local_shell_call" else _str(payload.get("name")) or "tool"
    namespace = _str(payload.get("namespace"))
    base = Action(
        call_id, platform, session_id, tool, kind_of(tool), turn_key,
        started_at=at, cwd=cwd,
    )  # fmt: skip
    if namespace and namespace.startswith("mcp__"):
        server = namespace.removeprefix("mcp__")
        return replace(base, kind="mcp", targets=(f"{server}/{tool}",))
    args = payload.get("action") if item == "local_shell_call" else _arguments(payload)
    return _described(base, args if isinstance(args, dict) else {}, cwd)


def _described(action: Action, args: dict[str, Any], cwd: str | None) -> Action:
    """``action`` with the command, targets and diffstat its arguments give."""
    workdir = _str(args.get("workdir")) or _str(args.get("working_directory")) or cwd
    command = command_line(args.get("command")) or _str(args.get("cmd"))
    patch = _str(args.get("input")) if action.tool == "apply_patch" else command
    stat = patch_stat(patch) if patch and "*** Begin Patch" in patch else None
    if stat is not None:
        targets = tuple(relative(f, workdir) for f in stat.files)
        kind = stat.kind
        return replace(action, kind=kind, targets=targets, added=stat.added, removed=stat.removed)
    path = _str(args.get("path")) or _str(args.get("file_path"))
    targets = nonempty([relative(path, workdir) if path else None, _str(args.get("url"))])
    if command is not None:
        return replace(action, kind="shell", command=short(command), targets=targets)
    query = _str(args.get("query")) or _str(args.get("pattern"))
    return replace(action, targets=targets, command=short(query))


def _output_text(output: object) -> str | None:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return _str(output.get("text"))
    if isinstance(output, list):
        texts = [
            item["text"]
            for item in output
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def result_of(payload: dict[str, Any], at: datetime | None) -> Result:
    """The outcome an output item records."""
    text = _output_text(payload.get("output"))
    exit_code: int | None = None
    seconds: float | None = None
    if text and text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            meta = parsed.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            code, took = meta.get("exit_code"), meta.get("duration_seconds")
            exit_code = code if isinstance(code, int) else None
            seconds = float(took) if isinstance(took, int | float) else None
            text = _output_text(parsed.get("output"))
    elif text:
        code_match, wall = _EXIT.search(text), _WALL.search(text)
        exit_code = int(code_match.group(1)) if code_match else None
        seconds = float(wall.group(1)) if wall else None
        if _OUTPUT_MARK in text and (code_match or wall):
            text = text.split(_OUTPUT_MARK, 1)[1]
    outcome: ActionOutcome = "ok"
    if exit_code or _rejected(text):
        outcome = "error"
    duration = round(seconds * 1000) if seconds is not None else None
    return Result(outcome, exit_code, text, duration, at)


def _rejected(text: str | None) -> bool:
    """Codex's own refusals of a call (a bad patch, a denied command) come back as text."""
    head = (text or "").lstrip()[:200].lower()
    return head.startswith(("patch rejected", "error", "failed", "execution error", "aborted"))


def add_item(
    log: ActionLog,
    payload: dict[str, Any],
    *,
    platform: str,
    session_id: str,
    turn_key: str | None,
    at: datetime | None,
    cwd: str | None,
) -> None:
    """A ``response_item`` that is a call or an output, into ``log``."""
    item = payload.get("type")
    if not isinstance(item, str):
        return  # a hostile or newer record: no action
    if item in CALL_ITEMS:
        action = call_of(
            payload, platform=platform, session_id=session_id, turn_key=turn_key, at=at, cwd=cwd
        )
        if action is not None:
            log.call(action)
    elif item in OUTPUT_ITEMS:
        call_id = _str(payload.get("call_id"))
        if call_id is not None:
            log.result(session_id, call_id, result_of(payload, at))
