"""Gemini CLI transcripts (``~/.gemini/tmp/<project>/chats/``).

Two layouts, one set of keys (``gemini-cli:<sessionId>:<message id>``), so a legacy session that
Gemini migrates from ``.json`` to ``.jsonl`` yields each message once:

* ``session-*.jsonl`` (≥0.39) is read in ``append`` mode. Line 1 is the session metadata
  (``sessionId``, ``projectHash``, ``kind``), kept in ``state`` for later reads. Any object with a
  string ``id`` is a message; **the same id re-appended is an upsert**: the turn is returned again,
  with its new text, under the same ``external_uuid``. ``{"$set": {...}}`` updates metadata; a
  ``$set.messages`` list (a checkpoint after ``/compress`` or a history sync) is read as messages
  and upserted the same way. Subagent sessions (``chats/<parent>/<child>.jsonl``, ``kind:
  "subagent"``) are owned too and flagged ``subagent``.
* ``session-*.json`` (<0.39) is the whole ``ConversationRecord``, rewritten on every update:
  ``whole`` mode, parsed in full each time.

``{"$rewindTo": id}`` makes Gemini drop that message and everything after it from the live
conversation. For a lossless memory we drop nothing: what was said before a rewind was still said
(and may be the very thing the user wanted to remember), the rows may already be stored from an
earlier read, and a single parse must yield what chunked reads yield. Likewise a checkpoint that
replaces the message list removes nothing, and a later version of a message whose text became
empty does not erase the text captured before.

Text: ``displayContent`` (what the user typed, e.g. ``/init``) over ``content`` (a string or a Part
list). User turns follow Gemini's own ``isIgnoredUserContent``: slash commands, ``?`` help,
``<session_context>`` preambles and tool results (``functionResponse`` parts) are not someone
typing; ``<hook_context>`` blocks (our own brief, injected by a SessionStart hook) are cut out of
the prompt they prefix; ``@file`` expansions are cut at Gemini's "referenced files" marker (the
full text is kept in ``raw_text``). Assistant = ``type: "gemini"`` with text (tool-only records
carry ``""``); ``info``/``error``/``warning`` are skipped; other types are counted as unknown.
Model: the message's ``model``; user turns carry the session's last model. cwd: the project's
``.project_root`` file, else ``~/.gemini/projects.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents_memory.adapters import gemini_cli_actions as tools
from agents_memory.adapters._actions import ActionLog
from agents_memory.adapters._jsonl import (
    complete_end,
    iter_records,
    loads,
    parse_timestamp,
    repaired,
)
from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    PROMPT_HOOK_SEC,
    Adapter,
    Commands,
    EnsureSetting,
    FileEdit,
    HookGroup,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    ReadMode,
    Role,
    Turn,
    hook_group,
    stdio_server,
)

PLATFORM = "gemini-cli"

_SKIPPED_TYPES = frozenset({"info", "error", "warning"})
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>", "<state_snapshot>")
_CONTINUE_PROMPT = "System: Please continue."
_COMPRESSION_ACK = "Got it. Thanks for the additional context!"
_REFERENCED_FILES = "\n--- Content from referenced files ---"
_FIRST_LINE_LIMIT = 1 << 16


class GeminiCliAdapter(Adapter):
    name = PLATFORM
    short_name = "gemini"
    display_name = "Gemini CLI"
    binaries = ("gemini",)
    mcp_client_names = ("gemini",)
    brief_limit = 8000
    prompt_hook_event = "BeforeAgent"

    def prompt_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """BeforeAgent's ``prompt`` carries the session-start brief (``<hook_context>``, on
        the first prompt) before what the user typed: cut out, it would be the search."""
        prompt = event.get("prompt")
        if isinstance(prompt, str) and "<hook_context>" in prompt:
            return {**event, "prompt": _HOOK_CONTEXT.sub("", prompt)}
        return event

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".gemini" / "settings.json", home / ".gemini" / "tmp"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """Everything in ``~/.gemini/settings.json``: ``hooksConfig.enabled`` (when unset),
        the brief at SessionStart (matcher ``*``: Gemini compares lifecycle matchers as exact
        strings, so an alternation would never match), per-prompt recall at BeforeAgent, flush
        at AfterAgent and SessionEnd
        (timeouts in milliseconds, named handlers), and the MCP server."""
        flush = commands.hook("flush")
        start = commands.hook("session-start", "--platform", PLATFORM)
        prompt = commands.hook("prompt", "--platform", PLATFORM)
        edit = FileEdit(
            home / ".gemini" / "settings.json",
            "json",
            (
                EnsureSetting(("hooksConfig", "enabled"), True),
                HookGroup(
                    "SessionStart",
                    hook_group(start, matcher="*", name=f"{MCP_SERVER_NAME}-brief", timeout=10000),
                ),
                HookGroup(
                    "BeforeAgent",
                    hook_group(
                        prompt,
                        matcher="*",
                        name=f"{MCP_SERVER_NAME}-recall",
                        timeout=PROMPT_HOOK_SEC * 1000,
                    ),
                ),
                HookGroup(
                    "AfterAgent",
                    hook_group(flush, matcher="*", name=f"{MCP_SERVER_NAME}-flush", timeout=5000),
                ),
                HookGroup(
                    "SessionEnd",
                    hook_group(flush, matcher="*", name=f"{MCP_SERVER_NAME}-flush", timeout=5000),
                ),
                OwnedEntry(("mcpServers", MCP_SERVER_NAME), stdio_server(commands, env={})),
            ),
            "SessionStart brief, BeforeAgent recall, AfterAgent/SessionEnd flush hooks, MCP server",
        )
        return InstallPlan(PLATFORM, (edit,))

    def roots(self, home: Path) -> list[Path]:
        return [home / ".gemini" / "tmp"]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            parts = path.relative_to(home / ".gemini" / "tmp").parts
        except ValueError:
            return False
        if len(parts) == 3 and parts[1] == "chats":
            return parts[2].startswith("session-") and parts[2].endswith((".jsonl", ".json"))
        return len(parts) == 4 and parts[1] == "chats" and parts[3].endswith(".jsonl")

    def read_mode(self, path: Path) -> ReadMode:
        return "whole" if path.suffix == ".json" else "append"

    def parse(
        self,
        path: Path,
        data: bytes,
        *,
        offset: int,
        state: JsonState,
        final: bool = False,
        home: Path | None = None,
    ) -> ParseResult:
        """Turns in ``data``; ``final`` is not needed (nothing is held back).

        A read from offset 0 (every ``whole`` read, a rescan) starts afresh: only the resolved
        cwd is taken from ``state``.
        """
        fresh = offset == 0 or self.read_mode(path) == "whole"
        session = _Session.from_state({"cwd": state.get("cwd")} if fresh else state, path, home)
        if self.read_mode(path) == "whole":
            resume = session.read_whole(data)
        else:
            resume = session.read_lines(data, offset, path, final=final)
        return ParseResult(
            turns=list(session.turns.values()),
            resume_offset=resume,
            state=session.to_state(),
            unknown_kinds=session.unknown,
            issues=session.issues,
            actions=session.actions.actions(PLATFORM),
        )


@dataclass(slots=True)
class _Session:
    """What one read knows about its session, and the turns it found (upserted by key)."""

    session_id: str | None
    project_hash: str | None
    subagent: bool
    cwd: str | None
    model: str | None
    fallback_id: str
    """The file name's id, used only when no ``sessionId`` could be read at all."""
    turns: dict[str, Turn] = field(default_factory=dict)
    unknown: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)
    actions: ActionLog = field(default_factory=ActionLog)

    @classmethod
    def from_state(cls, state: JsonState, path: Path, home: Path | None) -> _Session:
        return cls(
            session_id=state.get("session_id"),
            project_hash=state.get("project_hash"),
            subagent=bool(state.get("subagent", False)),
            cwd=state.get("cwd") or _resolve_cwd(path, home),
            model=state.get("model"),
            fallback_id=path.stem,
        )

    def to_state(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "project_hash": self.project_hash,
            "subagent": self.subagent,
            "cwd": self.cwd,
            "model": self.model,
        }

    def read_whole(self, data: bytes) -> int:
        """A legacy ``ConversationRecord``; an unreadable file (mid-write) consumes nothing."""
        try:
            record, was_repaired = loads(data) if data.strip() else ({}, False)
        except (ValueError, RecursionError) as exc:
            self.issues.append(ParseIssue(0, f"invalid JSON document: {exc}"))
            return 0
        if was_repaired:
            self.issues.append(repaired(0, "document"))
        if not isinstance(record, dict):
            self.issues.append(ParseIssue(0, "not a JSON object"))
            return 0
        self.set_metadata(record)
        self.read_messages(record.get("messages"))
        return len(data)

    def read_lines(self, data: bytes, offset: int, path: Path, *, final: bool) -> int:
        if self.session_id is None and offset > 0:
            self.session_id = _session_from_file(path)
        for record in iter_records(data, self.issues, offset=offset, complete_tail=final):
            self.read_record(record.data)
        return offset + len(data) if final else complete_end(data, offset=offset)

    def read_record(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("id"), str):
            self.read_message(record)
        elif "$set" in record:
            update = record["$set"]
            if isinstance(update, dict):
                self.set_metadata(update)
                self.read_messages(update.get("messages"))
        elif "$rewindTo" in record:
            return  # lossless: see the module docstring
        elif "sessionId" in record:
            self.set_metadata(record)
        else:
            directive = next((key for key in record if key.startswith("$")), None)
            self.unknown[directive or "record"] += 1

    def set_metadata(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("sessionId"), str):
            self.session_id = record["sessionId"]
        if isinstance(record.get("projectHash"), str):
            self.project_hash = record["projectHash"]
        if "kind" in record:
            self.subagent = record["kind"] == "subagent"

    def read_messages(self, messages: object) -> None:
        if isinstance(messages, list):
            for message in messages:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self.read_message(message)

    def read_message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "user":
            cleaned = _user_text(message)
            if cleaned is not None:
                self.add(message, "user", *cleaned, model=self.model)
        elif kind == "gemini":
            model = message.get("model")
            if isinstance(model, str) and model:
                self.model = model
            session_id = self.session_id or self.fallback_id
            tools.add_calls(
                self.actions,
                message,
                platform=PLATFORM,
                session_id=session_id,
                turn_key=f"{PLATFORM}:{session_id}:{message['id']}",
                cwd=self.cwd,
            )
            text = _parts_text(message.get("content")).strip()
            if text and text != _COMPRESSION_ACK:
                self.add(message, "assistant", text, None, model=self.model)
        elif not isinstance(kind, str):
            self.unknown["message:(no type)"] += 1
        elif kind not in _SKIPPED_TYPES:
            self.unknown[f"message:{kind}"] += 1

    def add(
        self, message: dict[str, Any], role: Role, text: str, raw: str | None, *, model: str | None
    ) -> None:
        session_id = self.session_id or self.fallback_id
        key = f"{PLATFORM}:{session_id}:{message['id']}"
        self.turns[key] = Turn(  # an upsert keeps the turn where it first appeared
            external_uuid=key,
            platform=PLATFORM,
            role=role,
            text=text,
            session_id=session_id,
            message_at=parse_timestamp(message.get("timestamp")),
            model=model,
            subagent=self.subagent,
            subagent_model=model if self.subagent else None,
            cwd=self.cwd,
            raw_text=raw,
        )


def _parts_text(value: object) -> str:
    """Text of a ``PartListUnion``: a string, one Part, or a list of them (thoughts skipped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        text = value.get("text")
        return text if isinstance(text, str) and not value.get("thought") else ""
    if isinstance(value, list):
        return "".join(_parts_text(part) for part in value)
    return ""


def _user_text(message: dict[str, Any]) -> tuple[str, str | None] | None:
    """``(text, raw_text)`` of what a person typed, or ``None`` for injected/tool content."""
    shown = message.get("displayContent")
    original = _parts_text(shown if shown is not None else message.get("content"))
    if "<hook_context>" in original:
        original = _HOOK_CONTEXT.sub("", original)
    without_hooks = original.strip()
    if (
        not without_hooks
        or without_hooks.startswith(_IGNORED_PREFIXES)
        or without_hooks == _CONTINUE_PROMPT
    ):
        return None
    text = without_hooks.split(_REFERENCED_FILES, 1)[0].rstrip()
    return text, (without_hooks if text != without_hooks else None)


def _session_from_file(path: Path) -> str | None:
    """The ``sessionId`` of the metadata line, for a read that starts mid-file without state."""
    try:
        with path.open("rb") as handle:
            first, _repaired = loads(handle.readline(_FIRST_LINE_LIMIT))
    except (OSError, ValueError, RecursionError):
        return None
    session = first.get("sessionId") if isinstance(first, dict) else None
    return session if isinstance(session, str) else None


def _project_dir(path: Path) -> Path | None:
    """``~/.gemini/tmp/<project>`` for a file under its ``chats/`` directory."""
    for parent in path.parents:
        if parent.name == "chats":
            return parent.parent
    return None


def _resolve_cwd(path: Path, home: Path | None) -> str | None:
    """The project's absolute path: ``.project_root``, else ``projects.json`` (slug or sha256)."""
    project = _project_dir(path)
    if project is None:
        return None
    try:
        root = (project / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        root = ""
    if root:
        return root
    gemini_dir = home / ".gemini" if home is not None else project.parent.parent
    return _cwd_from_registry(gemini_dir / "projects.json", project.name)


def _cwd_from_registry(registry: Path, project_id: str) -> str | None:
    try:
        projects = json.loads(registry.read_bytes()).get("projects")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(projects, dict):
        return None
    for cwd, slug in projects.items():
        if slug == project_id:
            return str(cwd)
    for cwd in projects:
        if hashlib.sha256(str(cwd).encode()).hexdigest() == project_id:
            return str(cwd)
    return None
