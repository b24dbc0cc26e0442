"""Antigravity CLI (``agy``) transcripts: ``~/.gemini/antigravity*/brain/<id>/.system_generated/
logs/transcript*.jsonl``.

One JSON step per line, keyed ``antigravity:<conversation id>:<step_index>`` (the conversation id
is the ``brain/`` directory name). A step re-written under the same ``step_index`` (``RUNNING`` →
``DONE``) is an upsert: within one read the later version wins.

``transcript_full.jsonl`` is preferred: ``transcript.jsonl`` holds the same steps with long fields
cut (``truncated_fields``), so it is owned only while no ``transcript_full.jsonl`` sits beside it —
otherwise the two files would keep replacing each other's text under the same keys.

Turns: ``USER_INPUT`` text inside ``<USER_REQUEST>…</USER_REQUEST>`` (inputs without one, e.g. a
settings change alone, are not a person typing); ``PLANNER_RESPONSE`` ``content`` (not
``thinking``, not ``tool_calls``). The model exists only as "Model Selection" settings-change text
inside ``USER_INPUT`` (``<USER_SETTINGS_CHANGE>``): the current model is tracked in ``state`` and
stamped on the turns that follow (including the input that changed it). ``CHECKPOINT``,
``SYSTEM_MESSAGE``, ``CONVERSATION_HISTORY`` and ``BROWSER_*`` are known and skipped; other step
types are counted as unknown. cwd is not recorded in the transcript.

Actions: the planner responses' ``tool_calls`` and the tool-result steps, paired only where
their kinds agree (:mod:`agents_memory.adapters.antigravity_actions`); its open calls and
running steps are carried in ``state["actions"]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from agents_memory.adapters._jsonl import complete_end, iter_records, parse_timestamp
from agents_memory.adapters._text import tag_blocks
from agents_memory.adapters.antigravity_actions import RESULT_TYPES, StepActions
from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    Adapter,
    Commands,
    FileEdit,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    Role,
    TextBlock,
    Turn,
    stdio_server,
)

PLATFORM = "antigravity"
FULL_TRANSCRIPT = "transcript_full.jsonl"

_KNOWN_SKIPPED = frozenset(
    {
        "CONVERSATION_HISTORY",
        "CHECKPOINT",
        "SYSTEM_MESSAGE",
    }
)
_KNOWN_PREFIXES = ("BROWSER_",)
_MODEL_SELECTION = re.compile(r"`?Model Selection`?.*?\bto\s+(.+?)\.?\s*$", re.MULTILINE)


class AntigravityAdapter(Adapter):
    name = PLATFORM
    display_name = "Antigravity"
    binaries = ("agy", "antigravity")
    mcp_client_names = ("antigravity",)

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".gemini" / "antigravity-cli", home / ".gemini" / "config"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """The MCP server in every global ``mcp_config.json`` whose directory exists
        (``~/.gemini/config/``, Antigravity 2.0; ``~/.gemini/antigravity-cli/``, the agy guide;
        the latter when neither exists) and a managed block in ``~/.gemini/GEMINI.md``, the
        global context file agy loads (it has no SessionStart hook)."""
        base = home / ".gemini"
        dirs = [d for d in (base / "config", base / "antigravity-cli") if d.is_dir()]
        entry = OwnedEntry(("mcpServers", MCP_SERVER_NAME), stdio_server(commands, env={}))
        edits = [
            FileEdit(d / "mcp_config.json", "json", (entry,), "MCP server")
            for d in dirs or [base / "antigravity-cli"]
        ]
        edits.append(
            FileEdit(
                base / "GEMINI.md",
                "text-block",
                (TextBlock(),),
                "memory brief context block (kept fresh by the daemon)",
            )
        )
        return InstallPlan(PLATFORM, tuple(edits))

    def roots(self, home: Path) -> list[Path]:
        base = home / ".gemini"
        defaults = [base / "antigravity", base / "antigravity-cli", base / "antigravity-ide"]
        try:
            found = sorted(p for p in base.glob("antigravity*") if p.is_dir())
        except OSError:
            found = []
        return defaults + [p for p in found if p not in defaults]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            parts = path.relative_to(home / ".gemini").parts
        except ValueError:
            return False
        if not (
            len(parts) == 6
            and parts[0].startswith("antigravity")
            and parts[1] == "brain"
            and parts[3:5] == (".system_generated", "logs")
            and parts[5].startswith("transcript")
            and parts[5].endswith(".jsonl")
        ):
            return False
        return parts[5] == FULL_TRANSCRIPT or not (path.parent / FULL_TRANSCRIPT).exists()

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
        """Turns in ``data``; ``final`` is not needed (nothing is held back)."""
        fresh = offset == 0  # a read from 0 starts afresh
        model = None if fresh else state.get("model")
        conversation = _conversation_id(path)
        reader = _Reader(
            conversation,
            model if isinstance(model, str) else None,
            StepActions.from_state(conversation, None if fresh else state.get("actions")),
        )
        for record in iter_records(data, reader.issues, offset=offset, complete_tail=final):
            reader.read(record.data, record.line.offset)
        return ParseResult(
            turns=list(reader.turns.values()),
            resume_offset=offset + len(data) if final else complete_end(data, offset=offset),
            state={"model": reader.model, "actions": reader.actions.to_state()},
            unknown_kinds=reader.unknown,
            issues=reader.issues,
            actions=reader.actions.actions(),
        )


@dataclass(slots=True)
class _Reader:
    """One read of one conversation: the current model and the turns found, by key."""

    conversation: str
    model: str | None
    actions: StepActions
    turns: dict[str, Turn] = field(default_factory=dict)
    unknown: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)

    def read(self, step: Mapping[str, Any], at: int) -> None:
        kind = step.get("type")
        content = step.get("content")
        index = step.get("step_index")
        if kind == "USER_INPUT":
            self.model = _selected_model(content) or self.model
            self.actions.user_input()
            found = _user_text(content)
            if found is not None:
                self.add(step, at, "user", *found)
        elif kind == "PLANNER_RESPONSE":
            if _is_index(index):  # a response without calls ends the last one's
                stamp = parse_timestamp(step.get("created_at"))
                self.actions.planner_response(index, stamp, step.get("tool_calls"))
            text = content.strip() if isinstance(content, str) else ""
            if text:
                self.add(step, at, "assistant", text, None)
        elif isinstance(kind, str) and kind in RESULT_TYPES:
            if _is_index(index):
                self.actions.result_step(index, kind, step)
            else:
                self.issues.append(ParseIssue(at, f"{kind} step without an integer step_index"))
        elif not isinstance(kind, str) or not (
            kind in _KNOWN_SKIPPED or kind.startswith(_KNOWN_PREFIXES)
        ):
            self.unknown[kind if isinstance(kind, str) else "(no type)"] += 1

    def add(self, step: Mapping[str, Any], at: int, role: Role, text: str, raw: str | None) -> None:
        """Upsert the turn of ``step`` (a re-written step keeps its place, with its latest text)."""
        index = step.get("step_index")
        if not _is_index(index):
            self.issues.append(ParseIssue(at, f"{role} step without an integer step_index"))
            return
        key = f"{PLATFORM}:{self.conversation}:{index}"
        self.turns[key] = Turn(
            external_uuid=key,
            platform=PLATFORM,
            role=role,
            text=text,
            session_id=self.conversation,
            message_at=parse_timestamp(step.get("created_at")),
            model=self.model,
            raw_text=raw,
        )


def _is_index(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _user_text(content: object) -> tuple[str, str | None] | None:
    """``(text, raw_text)`` from the ``<USER_REQUEST>`` blocks, or ``None`` when there are none."""
    if not isinstance(content, str):
        return None
    requests, outside = tag_blocks(content, "<USER_REQUEST>", "</USER_REQUEST>")
    if not requests:
        return None
    return "\n\n".join(requests), content if outside else None


def _selected_model(content: object) -> str | None:
    """The model named by the last "Model Selection" settings change in ``content``."""
    if not isinstance(content, str) or "Model Selection" not in content:
        return None
    model = None
    for change in tag_blocks(content, "<USER_SETTINGS_CHANGE>", "</USER_SETTINGS_CHANGE>")[0]:
        for match in _MODEL_SELECTION.finditer(change):
            model = match.group(1).strip() or model
    return model


def _conversation_id(path: Path) -> str:
    """The ``brain/<id>`` directory name (``…/<id>/.system_generated/logs/<file>``)."""
    return path.parent.parent.parent.name
