"""Claude Code: ``~/.claude/projects/<encoded-cwd>/*.jsonl`` and their subagent files.

Files owned (relative to ``~/.claude/projects``):

* ``<project>/<session>.jsonl`` — a main session;
* ``<project>/<session>/subagents/agent-<id>.jsonl`` — a Task/Agent subagent run (2.1.x), with an
  optional ``agent-<id>.meta.json`` sidecar whose ``agentType`` is the subagent role;
* ``<project>/agent-<id>.jsonl`` — the flat 2.0.x subagent layout.

``agent-acompact-*`` files are the compaction summariser and are never owned nor parsed.

Only ``user`` and ``assistant`` records carry turns. User lines that are not something a person
typed (meta expansions, compact summaries, tool results, slash-command bookkeeping, local command
output, ``!`` bash mode, task notifications, interrupt markers) are skipped; ``<system-reminder>``
spans are cut out of real text; a custom slash command keeps its ``<command-args>``. Assistant
lines keep ``text`` blocks only, and the lines of one API response (2.x writes one line per content
block, all sharing ``message.id``) are merged into one turn.

Attribution: ``session_id`` is ``sessionId`` (``<sessionId>:<agentId>`` in a subagent file,
``<sessionId>:sidechain`` for in-file ``isSidechain`` lines), ``message_at`` the line
``timestamp``, ``cwd`` the line ``cwd``; ``model`` is set on assistant turns only (user lines carry
none), and ``subagent_model`` too.

Keys (``external_uuid``):

* assistant — ``claude-code:a:<message.id>`` (``claude-code:a:<uuid>`` when a line has no id). A
  response id is unique to one API call, so a history replayed into another file collides with the
  original instead of doubling it.
* user — ``claude-code:u:<sha256(timestamp, raw text)>``, truncated to 128 bits. Claude writes the
  same user message more than once: the same line repeated, the same message delivered to a
  parallel session (identical text and millisecond timestamp, see anthropics/claude-code#66454) and,
  in older versions, a resumed session replaying history into a new file under new uuids. The line
  ``uuid`` cannot collapse those; the text plus the millisecond timestamp of the prompt does, while
  the same short prompt typed twice ("continue") stays two turns. The raw text (before cleaning) is
  hashed so that changing the cleaning rules never re-keys stored rows. With no timestamp the line
  ``uuid`` is hashed in.

Held-back groups: a response split over several lines may be cut by a read boundary. Its turn is
returned with the text seen so far, and ``resume_offset`` points at the group's first line unless
``final``; the next read re-parses the group and returns the fuller text under the same key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from agents_memory.adapters import claude_code_actions as tools
from agents_memory.adapters._actions import ActionLog
from agents_memory.adapters._jsonl import (
    Line,
    complete_end,
    decode,
    iter_lines,
    parse_timestamp,
    peek_type,
)
from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    PROMPT_HOOK_SEC,
    Adapter,
    Commands,
    FileEdit,
    HookGroup,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    Turn,
    hook_group,
    stdio_server,
)

PLATFORM = "claude-code"

_KNOWN_SKIPPED = frozenset(
    {
        "system",
        "summary",
        "progress",
        "attachment",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "ai-title",
        "agent-name",
        "last-prompt",
        "pr-link",
        "frame-link",
        "permission-mode",
        "mode",
        "worktree-state",
        "relocated",
        "bridge-session",
        "started",
        "result",
        "atis-latch",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "cost-state",
        "tools-used",
        "tag",
    }
)
"""Record kinds Claude Code writes that carry no turn text (not counted as unknown)."""

_SKIPPED: frozenset[str | None] = frozenset(_KNOWN_SKIPPED)
_LEADING_TYPE = b'{"type":"'
_SKIP_PREFIXES = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "[Request interrupted by user",
)
_COMMAND_PREFIXES = ("<command-name>", "<command-message>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_AGENT_FILE = re.compile(r"agent-([A-Za-z0-9-]+)\.jsonl")
_SYNTHETIC_MODEL = "<synthetic>"
_IMAGE = "[image]"


@dataclass(frozen=True, slots=True)
class _FileInfo:
    agent_id: str | None
    """Subagent id when the file is an ``agent-<id>.jsonl``."""
    fallback_session: str


def _file_info(path: Path) -> _FileInfo:
    match = _AGENT_FILE.fullmatch(path.name)
    return _FileInfo(match.group(1) if match else None, path.name.removesuffix(".jsonl"))


def _is_compact_agent(name: str) -> bool:
    return name.startswith("agent-acompact-")


def _read_agent_role(path: Path, agent_id: str) -> str | None:
    """``agentType`` from the ``agent-<id>.meta.json`` sidecar, if it exists and is readable."""
    try:
        meta = json.loads(path.with_name(f"agent-{agent_id}.meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    role = meta.get("agentType") if isinstance(meta, dict) else None
    return role if isinstance(role, str) and role else None


def _user_raw_text(content: object) -> str | None:
    """The user-visible text of a user message (images as ``[image]``), ignoring tool results."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "image":
            parts.append(_IMAGE)
    return "\n".join(parts) if parts else None


def clean_user_text(raw: str) -> str | None:
    """What the person typed, or ``None`` when the message is client bookkeeping."""
    text = _SYSTEM_REMINDER.sub("", raw) if "<system-reminder>" in raw else raw
    text = text.strip()
    if text.startswith(_COMMAND_PREFIXES):
        match = _COMMAND_ARGS.search(text)
        args = match.group(1).strip() if match else ""
        return args or None
    if not text or text.startswith(_SKIP_PREFIXES):
        return None
    return text


def _assistant_texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content.strip()] if content.strip() else []
    if not isinstance(content, list):
        return []
    texts: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
    return texts


def _user_key(timestamp: object, raw: str, uuid: object) -> str:
    salt = timestamp if isinstance(timestamp, str) and timestamp else f"uuid:{uuid}"
    digest = hashlib.sha256(f"{salt}\x1f{raw}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{PLATFORM}:u:{digest}"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _Where(NamedTuple):
    """Per-line attribution shared by both roles."""

    session_id: str | None
    message_at: datetime | None
    cwd: str | None
    subagent: bool
    subagent_role: str | None


@dataclass(slots=True)
class _Group:
    """The lines of one assistant API response (one ``message.id``)."""

    key: str
    offset: int
    where: _Where
    model: str | None = None
    texts: list[str] = field(default_factory=list)

    def add(self, texts: list[str]) -> None:
        for text in texts:
            if text in self.texts:
                continue  # a repeated line, or a snapshot already seen
            for i, old in enumerate(self.texts):
                if text.startswith(old):  # a fuller snapshot of a block streamed earlier
                    self.texts[i] = text
                    break
            else:
                self.texts.append(text)

    def turn(self) -> Turn | None:
        if not self.texts:
            return None
        where = self.where
        return Turn(
            external_uuid=self.key,
            platform=PLATFORM,
            role="assistant",
            text="\n\n".join(self.texts),
            session_id=where.session_id,
            message_at=where.message_at,
            model=self.model,
            subagent=where.subagent,
            subagent_model=self.model if where.subagent else None,
            subagent_role=where.subagent_role,
            cwd=where.cwd,
        )


class _Builder:
    """Turns, in file order, from the ``user``/``assistant`` records of one read."""

    def __init__(self, info: _FileInfo, role: str | None) -> None:
        self._info = info
        self._role = role
        self._slots: list[Turn | _Group] = []
        self._groups: dict[str, _Group] = {}
        self._open: dict[str | None, _Group] = {}
        """Per thread (session id), the latest response that more lines may still extend."""
        self.actions = ActionLog()

    def _where(self, rec: dict[str, Any]) -> _Where:
        session = _str(rec.get("sessionId")) or self._info.fallback_session
        if self._info.agent_id is not None:
            session, subagent, role = f"{session}:{self._info.agent_id}", True, self._role
        elif rec.get("isSidechain") is True:
            session, subagent, role = f"{session}:sidechain", True, None
        else:
            subagent, role = False, None
        return _Where(
            session, parse_timestamp(rec.get("timestamp")), _str(rec.get("cwd")), subagent, role
        )

    def user(self, rec: dict[str, Any]) -> None:
        if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"):
            return
        message = rec.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            where = self._where(rec)
            tools.add_results(self.actions, rec, session_id=where.session_id, at=where.message_at)
        raw = _user_raw_text(message.get("content")) if isinstance(message, dict) else None
        text = clean_user_text(raw) if raw is not None else None
        if raw is None or text is None:
            return
        where = self._where(rec)
        self._slots.append(
            Turn(
                external_uuid=_user_key(rec.get("timestamp"), raw, rec.get("uuid")),
                platform=PLATFORM,
                role="user",
                text=text,
                session_id=where.session_id,
                message_at=where.message_at,
                subagent=where.subagent,
                subagent_role=where.subagent_role,
                cwd=where.cwd,
                raw_text=raw if raw != text else None,
            )
        )
        # A prompt in the main thread means every earlier response has finished.
        if where.subagent:
            self._open.pop(where.session_id, None)
        else:
            self._open.clear()

    def assistant(self, rec: dict[str, Any], line: Line) -> None:
        message = rec.get("message")
        if not isinstance(message, dict):
            return
        model = _str(message.get("model"))
        if model == _SYNTHETIC_MODEL:
            return
        texts = _assistant_texts(message.get("content"))
        message_id = _str(message.get("id"))
        key = f"{PLATFORM}:a:{message_id or rec.get('uuid') or line.offset}"
        where = self._where(rec)
        tools.add_calls(
            self.actions,
            message.get("content"),
            session_id=where.session_id,
            turn_key=key,
            at=where.message_at,
            cwd=where.cwd,
        )
        if message_id is None and not texts:
            return
        group = self._groups.get(key)
        if group is None:
            group = _Group(key, line.offset, where)
            self._groups[key] = group
            self._slots.append(group)
        group.add(texts)
        group.model = group.model or model
        if message_id is not None:
            self._open[group.where.session_id] = group

    def finish(self) -> tuple[list[Turn], int | None]:
        """The turns (one per key, in first-seen order) and the start of the earliest open group."""
        out: dict[str, Turn] = {}
        for slot in self._slots:
            turn = slot.turn() if isinstance(slot, _Group) else slot
            if turn is not None:
                out[turn.external_uuid] = turn
        hold = min((g.offset for g in self._open.values()), default=None)
        return list(out.values()), hold


class ClaudeCodeAdapter(Adapter):
    """Claude Code transcripts (see the module docstring for the rules and keys)."""

    name = PLATFORM
    short_name = "claude"
    display_name = "Claude Code"
    binaries = ("claude",)
    mcp_client_names = ("claude-code",)
    brief_limit = 9500
    prompt_hook_event = "UserPromptSubmit"

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".claude", home / ".claude.json"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """Hooks in ``~/.claude/settings.json`` (brief at SessionStart, per-prompt recall at
        UserPromptSubmit, flush at Stop and SessionEnd; timeouts in seconds) and the MCP server
        at user scope in ``~/.claude.json``."""
        flush = commands.hook("flush")
        start = commands.hook("session-start", "--platform", PLATFORM)
        prompt = commands.hook("prompt", "--platform", PLATFORM)
        hooks = FileEdit(
            home / ".claude" / "settings.json",
            "json",
            (
                HookGroup(
                    "SessionStart",
                    hook_group(start, matcher="startup|resume|clear|compact", timeout=10),
                ),
                HookGroup("UserPromptSubmit", hook_group(prompt, timeout=PROMPT_HOOK_SEC)),
                HookGroup("Stop", hook_group(flush, timeout=5)),
                HookGroup("SessionEnd", hook_group(flush, timeout=5)),
            ),
            "SessionStart brief, UserPromptSubmit recall, Stop/SessionEnd flush hooks",
        )
        server = stdio_server(commands, env={})
        mcp = FileEdit(
            home / ".claude.json",
            "json",
            (OwnedEntry(("mcpServers", MCP_SERVER_NAME), {"type": "stdio", **server}),),
            "MCP server (user scope)",
        )
        return InstallPlan(PLATFORM, (hooks, mcp))

    def roots(self, home: Path) -> list[Path]:
        return [home / ".claude" / "projects"]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            parts = path.relative_to(self.roots(home)[0]).parts
        except ValueError:
            return False
        name = parts[-1] if parts else ""
        if not name.endswith(".jsonl") or _is_compact_agent(name):
            return False
        if len(parts) == 2:  # <project>/<session>.jsonl or flat 2.0.x <project>/agent-<id>.jsonl
            return True
        return (
            len(parts) == 4 and parts[2] == "subagents" and _AGENT_FILE.fullmatch(name) is not None
        )

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
        end = complete_end(data, offset=offset)
        if _is_compact_agent(path.name):
            return ParseResult(turns=[], resume_offset=end)
        info = _file_info(path)
        role = _str(state.get("subagent_role"))
        if role is None and info.agent_id is not None:
            role = _read_agent_role(path, info.agent_id)
        builder = _Builder(info, role)
        issues: list[ParseIssue] = []
        unknown: Counter[str] = Counter()
        for line in iter_lines(data, offset=offset):
            # Bookkeeping records start with {"type":…; skip them without decoding.
            if line.raw.startswith(_LEADING_TYPE) and peek_type(line.raw, within=1) in _SKIPPED:
                continue
            rec = decode(line, issues)
            if rec is None:
                continue
            rtype = rec.get("type")
            if rtype == "user":
                builder.user(rec)
            elif rtype == "assistant":
                builder.assistant(rec, line)
            elif not isinstance(rtype, str) or rtype not in _KNOWN_SKIPPED:
                unknown[rtype if isinstance(rtype, str) else "<no type>"] += 1
        turns, hold = builder.finish()
        resume = end if final or hold is None else hold
        new_state: dict[str, Any] = {"subagent_role": role} if role else {}
        actions = builder.actions.actions(PLATFORM)
        return ParseResult(turns, resume, new_state, unknown, issues, actions)
