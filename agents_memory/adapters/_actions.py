"""What the adapters share about tool calls: the normalised kinds, project-relative targets,
the capped excerpt of a result, an edit's diffstat, and the log that pairs each call with its
result within one read.

A client's tool *format* lives in its adapter (``claude_code_actions``, ``codex_actions``);
this module only knows tools by name. Nothing here keeps a file's contents or a whole diff:
an edit becomes its path and a count of lines added and removed, a read its path alone.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any, Final

from agents_memory.adapters.base import Action, ActionKind, ActionOutcome

EXCERPT_CHARS: Final = 300
"""The longest excerpt kept of a failure's error lines. Measured on the fixtures: every
failure's error lines fit in 300 characters (the longest, a refused edit's notice, is 250);
only the longest stack traces are cut."""

TAIL_CHARS: Final = 100
TAIL_LINES: Final = 2
"""The most of a successful shell command's output an excerpt keeps: its last 2 lines, cut
to 100 characters (a test run's or a build's summary line fits). Measured on the fixtures
(``tests/capture/test_actions_capture.py`` prints the bytes per transcript): with 5 lines /
300 characters the Codex fixture's actions took 9.2 % of its bytes, most of it the tails of
listings and file prints nobody searches."""

BOOKKEEPING_TOOLS: Final = frozenset(
    {
        "todowrite",
        "todoread",
        "update_plan",
        "exitplanmode",
        "enterplanmode",
        "write_todos",
        "update_topic",
    }
)
"""Tools that only keep the agent's own plan or to-do list: they act on nothing, and their
text is the plan the assistant's turns state anyway. Not stored as actions (measured: 14 of
the 31 calls of the Claude fixture ``vct_v1.0.95``)."""

_KINDS: Final[dict[str, ActionKind]] = {
    # edit: a change to an existing file
    **dict.fromkeys(
        ("edit", "multiedit", "notebookedit", "apply_patch", "applypatch", "replace", "patch"),
        "edit",
    ),
    **dict.fromkeys(("str_replace", "str_replace_editor", "edit_file", "search_replace"), "edit"),
    **dict.fromkeys(("replace_file_content", "multi_replace_file_content"), "edit"),
    # write: a file created or overwritten whole
    **dict.fromkeys(("write", "write_file", "create_file", "create", "write_to_file"), "write"),
    # read: a file (or image) looked at
    **dict.fromkeys(
        (
            "read",
            "read_file",
            "read_many_files",
            "view",
            "view_image",
            "notebookread",
            "cat",
            "view_file",
        ),
        "read",
    ),
    # shell: a command line run
    **dict.fromkeys(
        (
            "bash",
            "shell",
            "local_shell",
            "exec_command",
            "run_shell_command",
            "shell_command",
            "terminal",
            "bashoutput",
            "killshell",
            "write_stdin",
            "run_terminal_cmd",
            "run_command",
            "send_command_input",
            "command_status",
        ),
        "shell",
    ),
    # search: files or text looked for
    **dict.fromkeys(
        (
            "grep",
            "glob",
            "ls",
            "list",
            "list_directory",
            "search_file_content",
            "find",
            "codesearch",
            "tool_search",
            "list_dir",
            "grep_search",
            "file_search",
            "codebase_search",
            "find_by_name",
        ),
        "search",
    ),
    # web: a page fetched or the web searched
    **dict.fromkeys(
        (
            "webfetch",
            "websearch",
            "web_fetch",
            "web_search",
            "google_web_search",
            "fetch",
            "search_web",
            "read_url_content",
        ),
        "web",
    ),
    # agent: work handed to a subagent
    **dict.fromkeys(("task", "agent", "spawn_agent", "subagent", "delegate_task"), "agent"),
}


def kind_of(tool: str, *, mcp: bool = False) -> ActionKind:
    """The normalised kind of a tool by its client name (``mcp``: the client says it is an
    MCP tool). Claude Code names MCP tools ``mcp__<server>__<tool>``."""
    if mcp or tool.startswith("mcp__"):
        return "mcp"
    return _KINDS.get(tool.lower(), "other")


def mcp_target(tool: str) -> str | None:
    """``server/tool`` of an MCP tool named ``mcp__<server>__<tool>``, else ``None``."""
    if not tool.startswith("mcp__"):
        return None
    server, _, name = tool.removeprefix("mcp__").partition("__")
    return f"{server}/{name}" if name else server


def relative(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies under it (``./`` dropped), else as given."""
    if cwd and path.startswith("/"):
        try:
            rel = PurePosixPath(path).relative_to(PurePosixPath(cwd))
        except ValueError:
            return path
        return str(rel) if str(rel) != "." else path
    return path.removeprefix("./")


def command_line(argv: object) -> str | None:
    """A command as one line: a string as it is, an argv list joined as a shell would read it,
    ``bash -lc <script>`` as the script."""
    if isinstance(argv, str):
        return argv.strip() or None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not argv:
        return None
    if len(argv) == 3 and PurePosixPath(argv[0]).name in _SHELLS and argv[1] in ("-lc", "-c"):
        return argv[2].strip() or None
    return shlex.join(argv)


_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "fish"})


def line_count(text: object) -> int:
    """The lines of ``text`` (0 when empty or not text)."""
    if not isinstance(text, str) or not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


_PATCH_FILE: Final = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$", re.MULTILINE)
_MOVE_TO: Final = re.compile(r"^\*\*\* Move to: (.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PatchStat:
    """What a patch touches: its files and its lines added and removed."""

    files: tuple[str, ...]
    added: int
    removed: int
    creates: bool = False
    """Whether the patch only adds new files (``*** Add File``): a write, not an edit."""

    @property
    def kind(self) -> ActionKind:
        return "write" if self.creates else "edit"


def patch_stat(patch: str) -> PatchStat | None:
    """The files and diffstat of a Codex ``apply_patch`` envelope (``*** Update File: …``) or
    a unified diff (``+++ b/…``); ``None`` when ``patch`` is neither."""
    headers = _PATCH_FILE.findall(patch)
    creates = bool(headers) and all(verb == "Add" for verb, _ in headers)
    files = [name for _, name in headers] + _MOVE_TO.findall(patch)
    if not files:
        files = [
            line[4:].strip().removeprefix("b/")
            for line in patch.splitlines()
            if line.startswith("+++ ") and not line.startswith("+++ /dev/null")
        ]
    if not files:
        return None
    added = removed = 0
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "***")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return PatchStat(tuple(dict.fromkeys(f.strip() for f in files)), added, removed, creates)


_ERROR_LINE: Final = re.compile(
    r"error|exception|traceback|failed|failure|fatal|denied|not found|no such|cannot|refused"
    r"|rejected|invalid|panic|abort|timed? ?out|exit code [1-9]",
    re.IGNORECASE,
)


LOOKING_COMMANDS: Final = frozenset(
    {"cat", "sed", "head", "tail", "less", "nl", "ls", "tree", "find", "fd", "rg", "grep", "wc"}
)
"""Commands that print files or listings: a successful run keeps no excerpt (its output is
a file's contents, which an action never keeps)."""


def prints_files(command: str | None) -> bool:
    """Whether ``command`` (a shell command line) starts by printing files or a listing."""
    if not command:
        return False
    first = command.split(None, 1)[0] if command.split() else ""
    return PurePosixPath(first).name in LOOKING_COMMANDS


def excerpt(text: object, *, failed: bool, shell: bool) -> str | None:
    """The part of a result worth keeping: for a failure its error lines (else its last
    lines), at most :data:`EXCERPT_CHARS` characters; for a successful shell command its last
    :data:`TAIL_LINES` lines, at most :data:`TAIL_CHARS`; for anything else nothing."""
    if not isinstance(text, str) or not (failed or shell):
        return None
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    chosen = [line for line in lines if _ERROR_LINE.search(line)] if failed else []
    if chosen:
        return _fit(chosen, EXCERPT_CHARS, from_end=False)
    if failed:
        return _fit(lines[-TAIL_LINES:], EXCERPT_CHARS, from_end=True)
    return _fit(lines[-TAIL_LINES:], TAIL_CHARS, from_end=True)


def _fit(lines: list[str], cap: int, *, from_end: bool) -> str:
    """``lines`` joined and cut to ``cap`` characters (keeping the end or the start)."""
    text = "\n".join(lines)
    if len(text) <= cap:
        return text
    return "…" + text[-(cap - 1) :] if from_end else text[: cap - 1] + "…"


COMMAND_CHARS: Final = 200
"""The longest command line (or query, pattern, description) kept: a script's first lines."""


def short(text: str | None, limit: int = COMMAND_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters (a command line, a query)."""
    if text is None:
        return None
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Result:
    """A call's outcome as a client records it, before it is paired with its call."""

    outcome: ActionOutcome
    exit_code: int | None = None
    text: str | None = None
    """The result's text as the client wrote it (only an excerpt of it is kept)."""
    duration_ms: int | None = None
    finished_at: datetime | None = None


class ActionLog:
    """The tool calls of one read, in order, each paired with its result(s) by key. A result
    whose call is not in this read is kept as a *result only* (:attr:`Action.tool` ``None``)
    for the store to complete the call it stored earlier."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str | None, str], Action] = {}
        self._results: dict[tuple[str | None, str], Result] = {}
        self._skipped: set[tuple[str | None, str]] = set()

    def call(self, action: Action) -> None:
        slot = (action.session_id, action.key)
        if action.tool is not None and action.tool.lower() in BOOKKEEPING_TOOLS:
            self._skipped.add(slot)
            return
        old = self._calls.get(slot)
        self._calls[slot] = action if old is None else _fuller(old, action)

    def result(self, session_id: str | None, key: str, result: Result) -> None:
        slot = (session_id, key)
        if slot in self._skipped:
            return
        old = self._results.get(slot)
        self._results[slot] = result if old is None else _merged(old, result)

    def actions(self, platform: str) -> list[Action]:
        out: list[Action] = []
        for slot, call in self._calls.items():
            result = self._results.pop(slot, None)
            out.append(call if result is None else completed(call, result))
        for (session_id, key), result in self._results.items():
            # The call is unknown here: keep what a shell call or a failure would keep; the
            # store drops it for a stored call that is neither.
            out.append(completed(Action(key, platform, session_id, None, "shell"), result))
        return out


def _fuller(old: Action, new: Action) -> Action:
    """A call seen twice in one read (a streamed snapshot, a repeated line): the later one,
    keeping what only the earlier one knew."""
    return replace(
        new,
        turn_key=new.turn_key or old.turn_key,
        started_at=old.started_at or new.started_at,
        cwd=new.cwd or old.cwd,
    )


def _merged(old: Result, new: Result) -> Result:
    """Two records of one call's result (a tool's output item and its end event)."""
    return Result(
        new.outcome if new.outcome != "unknown" else old.outcome,
        new.exit_code if new.exit_code is not None else old.exit_code,
        old.text or new.text,
        new.duration_ms if new.duration_ms is not None else old.duration_ms,
        new.finished_at or old.finished_at,
    )


def completed(call: Action, result: Result) -> Action:
    """``call`` with ``result``'s outcome (a duration from the two timestamps when the client
    records none)."""
    duration = result.duration_ms
    if duration is None and call.started_at and result.finished_at:
        span = (result.finished_at - call.started_at).total_seconds()
        duration = round(span * 1000) if span >= 0 else None
    failed = result.outcome == "error" or bool(result.exit_code)
    shell = call.kind == "shell" and not prints_files(call.command)
    kept = excerpt(result.text, failed=failed, shell=shell)
    return replace(
        call,
        outcome=result.outcome,
        exit_code=result.exit_code if result.exit_code is not None else call.exit_code,
        excerpt=kept or call.excerpt,
        duration_ms=duration,
    )


def parsed_json(text: object) -> Any:
    """``text`` parsed as JSON; ``None`` for a text that is not JSON or no text at all."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def text_value(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def nonempty(values: Iterable[str | None]) -> tuple[str, ...]:
    """The strings among ``values`` that are not empty, in order, once each."""
    return tuple(dict.fromkeys(v for v in values if v))


@dataclass(frozen=True, slots=True)
class ArgNames:
    """Where a client's tool arguments keep what an action records (names differ by client)."""

    paths: tuple[str, ...]
    """The file or folder a tool works on, first present wins."""
    commands: tuple[str, ...]
    """The command line (a string or an argv list) or search words, first present wins."""
    new_text: str
    """An edit's replacement text (its lines are the lines added)."""
    old_text: str
    """An edit's replaced text (its lines are the lines removed)."""


def with_arguments(
    action: Action, args: Mapping[str, object], names: ArgNames, cwd: str | None
) -> Action:
    """``action`` with what its arguments say: the path (relative to ``cwd``) and URL as
    targets, the command line cut to :data:`COMMAND_CHARS`, an edit's or a write's diffstat."""
    path = next((v for k in names.paths if isinstance(v := args.get(k), str) and v), None)
    url = args.get("url")
    targets = nonempty(
        [relative(path, cwd) if path else None, url if isinstance(url, str) else None]
    )
    command = None
    for key in names.commands:
        value = args.get(key)
        command = (
            command_line(value) if key == "command" else value if isinstance(value, str) else None
        )
        if command:
            break
    added = removed = None
    if action.kind == "edit":
        added, removed = line_count(args.get(names.new_text)), line_count(args.get(names.old_text))
    elif action.kind == "write":
        added = line_count(args.get("content"))
    return replace(action, targets=targets, command=short(command), added=added, removed=removed)
