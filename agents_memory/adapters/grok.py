"""xAI Grok Build transcripts (``~/.grok/sessions/<percent-encoded cwd>/<session>/``).

The transcript is ``chat_history.jsonl`` (the model-facing history); ``summary.json`` beside it
gives the session id, cwd, fallback model and subagent kind (``session_kind: "subagent"``,
``agent_name``). ``updates.jsonl`` and ``events.jsonl`` are not read.

Keys are ``grok:<session>:<line index>`` (0-based physical line number, blank and malformed
lines included) because Grok rewrites early lines in place, which shifts byte offsets. ``state``
carries the number of lines consumed so an ``append`` read that starts mid-file numbers its lines
correctly; without that state the lines before ``offset`` are counted in the file.

Turns: ``user`` lines without ``synthetic_reason``, text inside ``<user_query>…</user_query>``
when present (anything still ``<…>``-wrapped, like a first-turn ``<user_info>``, is dropped);
``assistant`` lines with text ``content``. Their ``tool_calls``, the ``tool_result`` lines and
``backend_tool_call`` lines become actions (:mod:`agents_memory.adapters.grok_actions`).
``system`` and ``reasoning`` are known and skipped; other types are counted as unknown. Model:
``model_id``, else the model last seen, else ``summary.current_model_id``.

Timestamps: Grok writes none per line, and ``message_at`` stays ``None``. ``summary.json`` only
has session-level times: ``created_at`` would date every turn of a days-long session at its start
(hiding fresh turns from "recent" queries), and ``updated_at`` moves, so two reads of one line would
disagree. Leaving it unset lets the capture daemon stamp the capture time, which is right within
a second for live tailing; a backfill of old sessions is the one case it misdates.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agents_memory.adapters import grok_actions as tools
from agents_memory.adapters._actions import ActionLog
from agents_memory.adapters._jsonl import iter_records, loads
from agents_memory.adapters._text import tag_blocks
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

PLATFORM = "grok"
TRANSCRIPT = "chat_history.jsonl"
SIDECAR = "summary.json"

_SKIPPED_TYPES = frozenset({"system", "reasoning", "tool_result", "backend_tool_call"})
_ONLY_TAGS = re.compile(r"(?:\s*<([A-Za-z_][\w-]*)[^>]*>.*?</\1>)+\s*", re.DOTALL)
_COUNT_CHUNK = 1 << 20
_NEWLINE = ord("\n")


class GrokAdapter(Adapter):
    name = PLATFORM
    display_name = "Grok"
    binaries = ("grok",)
    mcp_client_names = ("grok",)

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".grok"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """The MCP server in ``~/.grok/config.toml`` and a managed rules file
        ``~/.grok/rules/mcp-agents-memory.md``: Grok ignores SessionStart hook output, so the
        brief reaches it as a rules file the capture daemon keeps fresh."""
        mcp = FileEdit(
            home / ".grok" / "config.toml",
            "toml",
            (OwnedEntry(("mcp_servers", MCP_SERVER_NAME), stdio_server(commands)),),
            "MCP server",
        )
        rules = FileEdit(
            home / ".grok" / "rules" / f"{MCP_SERVER_NAME}.md",
            "text-block",
            (TextBlock(),),
            "memory brief rules file (kept fresh by the daemon)",
        )
        return InstallPlan(PLATFORM, (mcp, rules))

    def roots(self, home: Path) -> list[Path]:
        return [home / ".grok" / "sessions"]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            parts = path.relative_to(home / ".grok" / "sessions").parts
        except ValueError:
            return False
        return len(parts) == 3 and parts[2] == TRANSCRIPT

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
        issues: list[ParseIssue] = []
        state = state if offset > 0 else {}  # a read from 0 (a rescan) starts afresh
        first_line = state.get("lines")
        if not isinstance(first_line, int):
            first_line = _count_lines(path, offset, issues)
        session = _Session.open(path, state)
        end = len(data) if final else data.rfind(b"\n") + 1
        turns: list[Turn] = []
        unknown: Counter[str] = Counter()
        records = iter_records(
            data, issues, offset=offset, first_line=first_line, complete_tail=final
        )
        log = ActionLog()
        for record in records:
            kind = record.data.get("type")
            if kind == "user":
                turn = session.user_turn(record.data, record.line.number)
                session.answering = None
            elif kind == "assistant":
                turn = session.assistant_turn(record.data, record.line.number)
                session.answering = turn.external_uuid if turn else session.answering
                tools.add_calls(log, record.data, session_id=session.session_id,
                                turn_key=session.answering, cwd=session.cwd)  # fmt: skip
            elif kind in ("tool_result", "backend_tool_call"):
                if kind == "tool_result":
                    tools.add_result(log, record.data, session_id=session.session_id)
                else:
                    tools.add_backend_call(log, record.data, session_id=session.session_id,
                                           turn_key=session.answering, cwd=session.cwd)  # fmt: skip
                continue
            else:
                if not isinstance(kind, str):
                    unknown["(no type)"] += 1
                elif kind not in _SKIPPED_TYPES:
                    unknown[kind] += 1
                continue
            if turn is not None:
                turns.append(turn)
        lines = first_line + data.count(b"\n", 0, end)
        if end and data[end - 1] != _NEWLINE:  # a final read took an unterminated last line
            lines += 1
        return ParseResult(
            turns=turns,
            actions=log.actions(PLATFORM),
            resume_offset=offset + end,
            state={"lines": lines, "model": session.model},
            unknown_kinds=unknown,
            issues=issues,
        )


@dataclass(slots=True)
class _Session:
    """Session facts from the sidecar and the model last seen; builds this session's turns."""

    session_id: str
    cwd: str | None
    model: str | None
    subagent: bool
    agent_name: str | None
    answering: str | None = None
    """The key of the assistant turn answering the last user turn (its tool calls' turn)."""

    @classmethod
    def open(cls, path: Path, state: JsonState) -> _Session:
        summary = _read_summary(path.parent / SIDECAR)
        info = summary.get("info")
        info = info if isinstance(info, Mapping) else {}
        session_id = _str(info.get("id")) or path.parent.name
        cwd = _str(info.get("cwd")) or _decode_cwd(path.parent.parent.name)
        subagent = summary.get("session_kind") == "subagent"
        return cls(
            session_id=session_id,
            cwd=cwd,
            model=_str(state.get("model")) or _str(summary.get("current_model_id")),
            subagent=subagent,
            agent_name=_str(summary.get("agent_name")) if subagent else None,
        )

    def user_turn(self, record: Mapping[str, Any], index: int) -> Turn | None:
        if record.get("synthetic_reason"):
            return None
        original = _content_text(record.get("content")).strip()
        queries, outside = tag_blocks(original, "<user_query>", "</user_query>")
        text = "\n\n".join(queries) if queries else original
        if not text or (text[0] == "<" and _ONLY_TAGS.fullmatch(text)):
            return None
        return self.turn(index, "user", text, original if queries and outside else None)

    def assistant_turn(self, record: Mapping[str, Any], index: int) -> Turn | None:
        model = _str(record.get("model_id"))
        if model:
            self.model = model
        text = _content_text(record.get("content")).strip()
        return self.turn(index, "assistant", text, None) if text else None

    def turn(self, index: int, role: Role, text: str, raw: str | None) -> Turn:
        return Turn(
            external_uuid=f"{PLATFORM}:{self.session_id}:{index}",
            platform=PLATFORM,
            role=role,
            text=text,
            session_id=self.session_id,
            model=self.model,
            subagent=self.subagent,
            subagent_model=self.model if self.subagent else None,
            subagent_role=self.agent_name,
            cwd=self.cwd,
            raw_text=raw,
        )


def _count_lines(path: Path, offset: int, issues: list[ParseIssue]) -> int:
    """Lines before ``offset`` in the file itself, for a mid-file read that lost its state."""
    if offset <= 0:
        return 0
    count = 0
    try:
        with path.open("rb") as handle:
            remaining = offset
            while remaining > 0:
                chunk = handle.read(min(remaining, _COUNT_CHUNK))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                remaining -= len(chunk)
    except OSError as exc:
        issues.append(ParseIssue(offset, f"cannot count lines before offset: {exc}"))
    return count


def _content_text(content: object) -> str:
    """A string, or the ``text`` parts of a part list (images and other parts skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type", "text") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def _read_summary(path: Path) -> Mapping[str, Any]:
    try:
        summary, _repaired = loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return summary if isinstance(summary, dict) else {}


def _decode_cwd(name: str) -> str | None:
    decoded = unquote(name)
    return decoded if decoded.startswith("/") or decoded[1:3] == ":\\" else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
