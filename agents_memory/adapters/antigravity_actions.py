"""Antigravity CLI's tool use: a ``PLANNER_RESPONSE`` step's ``tool_calls`` (``name``, ``args``
whose values are JSON-encoded strings: decoded twice) and the tool-result steps that follow it
(``LIST_DIRECTORY``, ``VIEW_FILE``, ``RUN_COMMAND``, ``CODE_ACTION``, ``SEARCH_WEB``,
``GREP_SEARCH``, ``GENERIC``), which carry no id of the call they answer.

Each result step is evidence of one action done: its type gives the kind, its content the
targets (``File Path: `file:///…```, ``Created file file:///…``) and the outcome (``The command
completed successfully.``; a failure's wording or exit code; ``status`` ``RUNNING`` is a
background task started, outcome unknown). A result step is paired with the earliest unpaired
call of the planner response before it **only when the two are compatible** (:data:`_ANSWERS`:
``list_dir`` ↔ ``LIST_DIRECTORY``, ``run_command`` ↔ ``RUN_COMMAND``, …); a result step with no
compatible call is an action of its own (tool: its type), a call with no result one with an
unknown outcome. Nothing is guessed across kinds.

Keys, unique within the conversation (the session): a call is
``antigravity:<conversation>:<planner step>:<position>``, a result of its own
``antigravity:<conversation>:<step>``. A step re-written under its ``step_index`` (``RUNNING`` →
``DONE``) is the same action: the read remembers which key each result step got, and ``state``
carries the still-running ones and the open calls of the last planner response to the next read,
so a read in pieces pairs as a read of the whole file does. The issuing turn is the planner
response's key (a tool-only response has no turn of its own: the store places its actions by
time, as for Gemini CLI and Claude Code); a result of its own belongs to the last planner
response since the last ``USER_INPUT``. cwd is not recorded: paths stay absolute.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from agents_memory.adapters._actions import (
    ActionLog,
    ArgNames,
    Result,
    kind_of,
    line_count,
    nonempty,
    parsed_json,
    relative,
    short,
    text_value,
    with_arguments,
)
from agents_memory.adapters._jsonl import parse_timestamp
from agents_memory.adapters.base import Action, ActionOutcome

PLATFORM: Final = "antigravity"

_ANSWERS: Final[dict[str, frozenset[str]]] = {
    "LIST_DIRECTORY": frozenset({"list_dir"}),
    "VIEW_FILE": frozenset({"view_file"}),
    "RUN_COMMAND": frozenset({"run_command"}),
    "CODE_ACTION": frozenset(
        {
            "write_to_file",
            "write_file",
            "replace_file_content",
            "multi_replace_file_content",
            "edit_file",
        }
    ),
    "SEARCH_WEB": frozenset({"search_web"}),
    "GREP_SEARCH": frozenset({"grep_search"}),
}
"""Each result step type and the calls (by tool name) it can answer."""

RESULT_TYPES: Final = frozenset(_ANSWERS) | {"GENERIC"}

_ARGS: Final = ArgNames(
    paths=("TargetFile", "AbsolutePath", "DirectoryPath", "SearchPath", "SearchDirectory"),
    commands=("CommandLine", "Query", "Pattern"),
    new_text="ReplacementContent",
    old_text="TargetContent",
)
_SUCCESS: Final = "The command completed successfully"
_EXIT: Final = re.compile(r"exit(?:ed with)? code:? *(-?\d+)", re.IGNORECASE)
_FAILURE: Final = re.compile(r"^\s*(?:error\b|failed\b|(?:the )?command failed\b)", re.IGNORECASE)
_VIEWED: Final = re.compile(r"^File Path: `(file://[^`]+)`")
_WRITTEN: Final = re.compile(
    r"^(Created|Edited|Modified|Updated|Overwrote|Deleted) file (file://\S+)", re.MULTILINE
)
_SEARCHED: Final = re.compile(r'^The search for "(.+?)" returned')
_HEAD_CHARS: Final = 1000
"""How much of a result's start is searched for the file it names (never its body)."""
MAX_RUNNING: Final = 32
MAX_OPEN: Final = 64
"""The most still-running steps and open calls carried in ``state`` to the next read."""


def _file(uri: str) -> str | None:
    """The path of a ``file://`` URI (percent-decoded), else ``None``."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or not parts.path:
        return None
    return unquote(parts.path)


def _arguments(raw: object) -> dict[str, Any]:
    """A call's ``args`` (itself a JSON string in some builds), each value JSON-decoded; a path
    given as a ``file://`` URI as its path."""
    args = parsed_json(raw) if isinstance(raw, str) else raw
    if not isinstance(args, dict):
        return {}
    out: dict[str, Any] = {}
    for name, value in args.items():
        decoded = parsed_json(value)
        out[str(name)] = value if decoded is None else decoded
    for name in _ARGS.paths:
        value = out.get(name)
        if isinstance(value, str) and value.startswith("file://"):
            out[name] = _file(value) or value
    return out


def tool_calls(raw: object) -> list[tuple[str, dict[str, Any]]]:
    """``(tool name, decoded arguments)`` of a planner response's ``tool_calls`` (a list, or a
    JSON string of one)."""
    calls = parsed_json(raw) if isinstance(raw, str) else raw
    out: list[tuple[str, dict[str, Any]]] = []
    for call in calls if isinstance(calls, list) else []:
        name = text_value(call.get("name")) if isinstance(call, dict) else None
        if name is not None and isinstance(call, dict):
            out.append((name, _arguments(call.get("args"))))
    return out


def described(action: Action, args: Mapping[str, Any]) -> Action:
    """``action`` with what its arguments say (the shared rules): a write's ``CodeContent``
    lines, an edit's ``ReplacementChunks`` lines added and removed."""
    aliased = {**args, "content": args.get("CodeContent"), "url": args.get("Url")}
    action = with_arguments(action, aliased, _ARGS, None)
    if action.kind == "write" and "CodeContent" not in args:
        action = replace(action, added=None)  # the call does not say what it wrote
    chunks = args.get("ReplacementChunks")
    if action.kind == "edit" and isinstance(chunks, list):
        parts = [c for c in chunks if isinstance(c, dict)]
        added = sum(line_count(c.get(_ARGS.new_text)) for c in parts)
        removed = sum(line_count(c.get(_ARGS.old_text)) for c in parts)
        action = replace(action, added=added, removed=removed)
    return action


def result_of(step_type: str, status: object, content: object, at: datetime | None) -> Result:
    """The outcome a result step records: ``RUNNING`` unknown (started in the background);
    ``DONE`` ok, or error when it says it failed or names a non-zero exit code (a command that
    says neither is unknown); a command's text is its ``Output:``."""
    if status != "DONE" or not isinstance(content, str):
        return Result("unknown", finished_at=at if status == "DONE" else None)
    command = step_type == "RUN_COMMAND"
    head, found, output = content.partition("\nOutput:") if command else (content, "", "")
    head = head[:_HEAD_CHARS] if command else head.split("\n", 1)[0]
    match = _EXIT.search(head)
    code = int(match.group(1)) if match else None
    outcome: ActionOutcome = "ok"
    if code or _FAILURE.match(head):
        outcome = "error"
    elif command and not head.startswith(_SUCCESS):
        outcome = "unknown"
    return Result(outcome, code, output if found else content, None, at)


def standalone(step_type: str, content: object, base: Action) -> Action:
    """``base`` (key, session, turn, time) as the action of a result step no call answers: the
    tool is its type, the kind and the file from its content."""
    head = content[:_HEAD_CHARS] if isinstance(content, str) else ""
    kind = kind_of(step_type)
    uris: list[str] = []
    if step_type == "VIEW_FILE":
        uris = [m.group(1) for m in [_VIEWED.match(head)] if m]
    elif step_type == "CODE_ACTION":
        written = _WRITTEN.findall(head)
        kind = "write" if written and all(v == "Created" for v, _ in written) else "edit"
        uris = [uri for _, uri in written]
    paths = [_file(uri) for uri in uris]
    targets = nonempty(relative(p, base.cwd) if p else None for p in paths)
    query = _SEARCHED.match(head) if step_type == "SEARCH_WEB" else None
    command = short(query.group(1)) if query else None
    return replace(base, tool=step_type, kind=kind, targets=targets, command=command)


@dataclass(slots=True)
class _Step:
    """Which action a result step is, remembered for its re-writes."""

    key: str
    paired: bool
    turn_key: str | None
    at: datetime | None
    running: bool = False


@dataclass(slots=True)
class _Planner:
    """The last planner response: its step, time and the calls no result answered yet."""

    step: int
    at: datetime | None
    open: list[tuple[int, str]] = field(default_factory=list)
    known: int = 0


@dataclass(slots=True)
class StepActions:
    """The actions of one read of one conversation, in file order."""

    conversation: str
    planner: _Planner | None = None
    steps: dict[int, _Step] = field(default_factory=dict)
    log: ActionLog = field(default_factory=ActionLog)
    results: dict[str, Result] = field(default_factory=dict)

    @classmethod
    def from_state(cls, conversation: str, state: object) -> StepActions:
        """The open calls and running steps an earlier read left (``state["actions"]``)."""
        reader = cls(conversation)
        saved = state if isinstance(state, dict) else {}
        planner = saved.get("planner")
        if isinstance(planner, dict) and isinstance(planner.get("step"), int):
            calls = planner.get("open")
            known = planner.get("known")
            reader.planner = _Planner(
                planner["step"],
                parse_timestamp(planner.get("at")),
                [
                    (c[0], c[1])
                    for c in (calls if isinstance(calls, list) else [])
                    if isinstance(c, list) and len(c) == 2 and isinstance(c[0], int)
                    and isinstance(c[1], str)
                ],
                known if isinstance(known, int) else 0,
            )  # fmt: skip
        running = saved.get("running")
        for index, step in (running if isinstance(running, dict) else {}).items():
            if isinstance(step, list) and len(step) == 4 and str(index).isdigit():
                key, paired, turn_key, at = step
                reader.steps[int(index)] = _Step(
                    str(key), bool(paired), text_value(turn_key), parse_timestamp(at), running=True
                )
        return reader

    def to_state(self) -> dict[str, Any]:
        running = [(i, s) for i, s in self.steps.items() if s.running][-MAX_RUNNING:]
        planner = self.planner
        return {
            "planner": None
            if planner is None
            else {
                "step": planner.step,
                "at": planner.at.isoformat() if planner.at else None,
                "open": [list(c) for c in planner.open[:MAX_OPEN]],
                "known": planner.known,
            },
            "running": {
                str(i): [s.key, s.paired, s.turn_key, s.at.isoformat() if s.at else None]
                for i, s in running
            },
        }

    def turn_key(self, step: int) -> str:
        return f"{PLATFORM}:{self.conversation}:{step}"

    def user_input(self) -> None:
        """A new exchange: results from here on answer no earlier call."""
        self.planner = None

    def planner_response(self, step: int, at: datetime | None, calls: object) -> None:
        """A planner response's calls, into the log; the open calls to pair."""
        found = tool_calls(calls)
        if self.planner is None or step > self.planner.step:
            self.planner = _Planner(step, at)
        if step == self.planner.step:  # new, or re-written with more calls
            self.planner.open += [(i, c[0]) for i, c in enumerate(found) if i >= self.planner.known]
            self.planner.known = max(self.planner.known, len(found))
        for position, (tool, args) in enumerate(found):
            base = Action(
                f"{self.turn_key(step)}:{position}", PLATFORM, self.conversation, tool,
                kind_of(tool), self.turn_key(step), started_at=at,
            )  # fmt: skip
            self.log.call(described(base, args))

    def result_step(self, step: int, step_type: str, record: Mapping[str, Any]) -> None:
        """A tool-result step: the action it completes or is (a re-write keeps its key)."""
        at = parse_timestamp(record.get("created_at"))
        seen = self.steps.get(step) or self._pair(step, step_type, at)
        self.steps[step] = seen
        content = record.get("content")
        if not seen.paired:
            base = Action(
                seen.key, PLATFORM, self.conversation, step_type, turn_key=seen.turn_key,
                started_at=seen.at,
            )  # fmt: skip
            self.log.call(standalone(step_type, content, base))
        result = result_of(step_type, record.get("status"), content, at)
        # a step of its own says when it ended, not when it started: no duration
        self.results[seen.key] = result if seen.paired else replace(result, finished_at=None)
        seen.running = record.get("status") == "RUNNING"

    def _pair(self, step: int, step_type: str, at: datetime | None) -> _Step:
        """The earliest open call of the planner response before ``step`` that a result of
        ``step_type`` can answer, taken; else the step is an action of its own."""
        planner = self.planner
        if planner is None or step <= planner.step:
            return _Step(self.turn_key(step), False, None, at)
        answers = _ANSWERS.get(step_type, frozenset())
        for n, (position, tool) in enumerate(planner.open):
            if tool.lower() in answers:
                del planner.open[n]
                key = f"{self.turn_key(planner.step)}:{position}"
                return _Step(key, True, self.turn_key(planner.step), planner.at)
        return _Step(self.turn_key(step), False, self.turn_key(planner.step), at)

    def actions(self) -> list[Action]:
        for key, result in self.results.items():
            self.log.result(self.conversation, key, result)
        return self.log.actions(PLATFORM)
