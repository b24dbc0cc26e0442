"""Codex CLI: ``~/.codex/sessions/**/rollout-*.jsonl`` and their ``.jsonl.zst`` re-encodings.

Each line is ``{"timestamp", ["ordinal"], "type", "payload"}``. A turn's text is written more than
once (``response_item`` messages for the model, ``event_msg`` events for the UI, and in 0.171
``item_completed`` items); exactly one representation is used:

* ``event_msg`` ``item_completed`` items ``UserMessage``/``AgentMessage`` (0.171+); once a file has
  shown one, its ``user_message``/``agent_message`` events are ignored;
* otherwise ``event_msg`` ``user_message``/``agent_message`` (older builds);
* ``response_item`` messages are never used (they duplicate the events and carry the injected
  developer/environment messages), nor is ``compacted.replacement_history`` (old turns restated).

Injected user messages (``<environment_context>``, ``# AGENTS.md instructions``,
``<user_instructions>`` …) are skipped; an IDE preamble ("# Context from my IDE setup:") keeps only
the part after "## My request for Codex:". The model is the latest ``turn_context.model``; the
session, cwd and subagent facts come from the first ``session_meta`` (cwd also from
``turn_context``); all of it is carried in ``state`` across reads. Subagent threads are flagged from
``session_meta.source.subagent`` (role = ``agent_role``/``agent_nickname`` or the internal kind);
``model`` (and ``subagent_model``) is set on assistant turns only. The internal ``compact`` and
``memory_consolidation`` threads only restate their parent and are skipped, like Claude's
``agent-acompact`` files.

Keys: ``codex-cli:<session>:<item id>`` for ``item_completed`` items, else
``codex-cli:<session>:@<byte offset of the line>``. A ``.jsonl.zst`` file is the same bytes
compressed, so offsets (and ids) in the decompressed stream equal those of the plain file and a
rollout that Codex recompresses after 7 days yields the keys it had as ``.jsonl``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import zstandard

from agents_memory.adapters import codex_actions as tools
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
    EnsureSetting,
    FileEdit,
    HookGroup,
    InstallContext,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    Reader,
    ReadMode,
    Role,
    Turn,
    hook_group,
    stdio_server,
)
from agents_memory.gitinfo import strip_credentials

PLATFORM = "codex-cli"
DESKTOP_PLATFORM = "codex-desktop"
"""Turns written by the Codex Desktop app (``session_meta.originator`` names it, e.g.
``Codex Desktop``); seed A's name. Their keys keep the ``codex-cli:`` prefix."""

STARTUP_TIMEOUT_SEC = 30
"""Our server's ``startup_timeout_sec`` (Codex's default, 10 s, is tight on a busy machine:
importing the MCP SDK alone takes 1-3 s of CPU)."""

STARTUP_GRACE_MS = 5000
"""``mcp_optional_startup_grace_ms``, set only when the user has none: how long Codex waits for
optional MCP servers before it sends the first turn. Without it ``codex exec`` sends its one
turn at once and our tools miss it (measured with Codex 0.171). Codex stops waiting as soon
as the servers are up, so this costs only our start-up time (~1-2 s) on the first turn."""

_KNOWN_KINDS = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "token_usage_record",
    }
)
_UNUSED_KINDS = frozenset({"response_item", "compacted"})
"""Known kinds never read: skipped without decoding (they hold the large tool outputs)."""
_USED_EVENTS = frozenset({"user_message", "agent_message", "item_completed"})
_PEEK_WITHIN = 120
_PAYLOAD_TYPE = b'"payload":{"type":"'
_INTERNAL_SUBAGENTS = frozenset({"compact", "memory_consolidation"})
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<skill",
    "<hook_context>",
    "## Skills",
    "<permissions instructions>",
    "<collaboration_mode>",
)
_IDE_PREAMBLE = "# Context from my IDE setup:"
_IDE_REQUEST = "## My request for Codex:"
_ROLLOUT_NAME = re.compile(r"rollout-.*\.jsonl(\.zst)?")
_NAME_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl")
_IMAGE = "[image]"


def clean_user_text(raw: str) -> str | None:
    """What the person typed, or ``None`` for a message Codex injected."""
    text = raw.strip()
    if text.startswith(_IDE_PREAMBLE):
        _, marker, request = text.partition(_IDE_REQUEST)
        text = request.strip() if marker else ""
    if not text or text.startswith(_INJECTED_PREFIXES):
        return None
    return text


def _item_text(content: object) -> str | None:
    """Text of an ``item_completed`` message item (``text``/``Text`` parts; images marked)."""
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            parts.append(text)
        elif "image" in str(part.get("type", "")).lower():
            parts.append(_IMAGE)
    return "\n".join(parts) if parts else None


def _image_markers(payload: dict[str, Any]) -> list[str]:
    """One ``[image]`` per attachment of a ``user_message`` event."""
    count = 0
    for name in ("images", "local_images"):
        value = payload.get(name)
        count += len(value) if isinstance(value, list) else 0
    return [_IMAGE] * count


def _subagent_role(payload: dict[str, Any]) -> tuple[bool, str | None, bool]:
    """``(subagent, role, internal)`` from a ``session_meta`` payload."""
    source = payload.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    if sub is None:
        return False, None, False
    kind: str | None
    role: object
    if isinstance(sub, str):
        kind, role = sub, sub
    elif isinstance(sub, dict) and isinstance(sub.get("thread_spawn"), dict):
        spawn = sub["thread_spawn"]
        kind = "thread_spawn"
        role = (
            spawn.get("agent_role")
            or spawn.get("agent_nickname")
            or payload.get("agent_role")
            or payload.get("agent_nickname")
        )
    elif isinstance(sub, dict) and sub:
        kind = next(iter(sub))
        value = sub[kind]
        role = value if isinstance(value, str) else kind
    else:
        kind, role = None, None
    return True, role if isinstance(role, str) and role else None, kind in _INTERNAL_SUBAGENTS


def _unused(raw: bytes) -> bool:
    """Whether a line is a kind or event never read (known from its first bytes, no decoding).

    Codex serialises ``timestamp``, ``ordinal``, ``type`` and then ``payload`` (whose own ``type``
    comes first), so the first ``"type"`` is the record kind and the payload kind follows it.
    """
    kind = peek_type(raw, within=_PEEK_WITHIN)
    if kind == "response_item":  # only its tool calls and their outputs are read
        item = peek_type(raw, within=_PEEK_WITHIN + 40, key=_PAYLOAD_TYPE)
        return item not in tools.TOOL_ITEMS
    if kind in _UNUSED_KINDS:
        return True
    if kind != "event_msg":
        return False
    event = peek_type(raw, within=_PEEK_WITHIN + 40, key=_PAYLOAD_TYPE)
    return event is not None and event not in _USED_EVENTS


def _decompress(data: bytes) -> bytes:
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    with reader:
        return reader.readall()


@dataclass(slots=True)
class _Thread:
    """What a rollout says about its thread so far; serialised as the adapter state."""

    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    repository: str | None = None
    """``session_meta``'s ``git.repository_url`` when it is a URL."""
    subagent: bool = False
    subagent_role: str | None = None
    internal: bool = False
    items: bool = False
    """The file writes ``item_completed`` message items (so legacy events are duplicates)."""
    platform: str = PLATFORM
    """What wrote the thread: ``codex-desktop`` when the originator is the Desktop app."""
    last_assistant: str | None = None
    """The key of the latest assistant turn since the latest user turn (issuer of tool calls)."""

    @classmethod
    def load(cls, state: JsonState) -> _Thread:
        thread = cls()
        for slot in fields(cls):
            if slot.name in state:
                setattr(thread, slot.name, state[slot.name])
        return thread

    def meta(self, payload: dict[str, Any]) -> None:
        if self.session_id is not None:
            return  # the first session_meta is authoritative (forks replay their parent's)
        sid = payload.get("id") or payload.get("session_id")
        self.session_id = sid if isinstance(sid, str) and sid else None
        self.cwd = self.cwd or _str(payload.get("cwd"))
        self.repository = repository_url(payload.get("git"))
        self.subagent, self.subagent_role, self.internal = _subagent_role(payload)
        self.platform = platform_of_originator(payload.get("originator"))

    def context(self, payload: dict[str, Any]) -> None:
        self.model = _str(payload.get("model")) or self.model
        self.cwd = _str(payload.get("cwd")) or self.cwd


_REPOSITORY = re.compile(r"^(https?|ssh|git)://[^\s/]+/\S+$|^[\w.-]+@[\w.-]+:\S+$")


def repository_url(git: object) -> str | None:
    """``git.repository_url`` of a ``session_meta`` when it is a repository URL (a trimmed or
    placeholder value is not), without credentials."""
    url = git.get("repository_url") if isinstance(git, dict) else None
    if not isinstance(url, str) or len(url) > 2048 or not _REPOSITORY.match(url.strip()):
        return None
    return strip_credentials(url)


def platform_of_originator(originator: object) -> str:
    """``codex-desktop`` for the Desktop app's originator (``Codex Desktop``,
    ``codex_desktop``), else ``codex-cli`` (``codex_cli_rs``, ``codex_exec``, the IDE
    extension's ``codex_vscode``)."""
    text = originator.lower() if isinstance(originator, str) else ""
    return DESKTOP_PLATFORM if "desktop" in text else PLATFORM


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _Reader:
    """Turns from the records of one read, in file order."""

    def __init__(self, thread: _Thread, fallback_session: str) -> None:
        self.thread = thread
        self.fallback_session = fallback_session
        self.turns: list[Turn] = []
        self.actions = ActionLog()

    def item(self, rec: dict[str, Any], payload: dict[str, Any]) -> None:
        """A ``response_item``: a tool call or a call's output."""
        thread = self.thread
        if thread.internal:
            return
        tools.add_item(
            self.actions,
            payload,
            platform=thread.platform,
            session_id=thread.session_id or self.fallback_session,
            turn_key=thread.last_assistant,
            at=parse_timestamp(rec.get("timestamp")),
            cwd=thread.cwd,
        )

    def event(self, rec: dict[str, Any], payload: dict[str, Any], line: Line) -> None:
        kind = payload.get("type")
        if kind == "item_completed":
            item = payload.get("item")
            if not isinstance(item, dict):
                return
            role: Role
            if item.get("type") == "UserMessage":
                role = "user"
            elif item.get("type") == "AgentMessage":
                role = "assistant"
            else:
                return
            self.thread.items = True
            text = _item_text(item.get("content"))
            self._add(rec, line, role, text, _str(item.get("id")))
        elif kind in ("user_message", "agent_message") and not self.thread.items:
            message = payload.get("message")
            text = message if isinstance(message, str) else None
            if text is not None and kind == "user_message":
                text = "\n".join([text, *_image_markers(payload)])
            self._add(rec, line, "user" if kind == "user_message" else "assistant", text, None)

    def _add(
        self, rec: dict[str, Any], line: Line, role: Role, raw: str | None, native: str | None
    ) -> None:
        thread = self.thread
        if raw is None or thread.internal:
            return
        text = clean_user_text(raw) if role == "user" else raw.strip() or None
        if text is None:
            return
        session = thread.session_id or self.fallback_session
        model = thread.model if role == "assistant" else None
        key = f"{PLATFORM}:{session}:{native or f'@{line.offset}'}"
        thread.last_assistant = key if role == "assistant" else None
        self.turns.append(
            Turn(
                external_uuid=key,
                platform=thread.platform,
                role=role,
                text=text,
                session_id=session,
                message_at=parse_timestamp(rec.get("timestamp")),
                model=model,
                subagent=thread.subagent,
                subagent_model=model if thread.subagent else None,
                subagent_role=thread.subagent_role,
                cwd=thread.cwd,
                raw_text=raw if raw != text else None,
                repository=thread.repository,
            )
        )


def _fallback_session(path: Path) -> str:
    match = _NAME_UUID.search(path.name)
    return match.group(1) if match else path.name.split(".", 1)[0]


class CodexAdapter(Adapter):
    """Codex CLI rollouts (see the module docstring for the rules and keys)."""

    name = PLATFORM
    short_name = "codex"
    display_name = "Codex"
    binaries = ("codex",)
    mcp_client_names = ("codex",)
    extra_platforms = (DESKTOP_PLATFORM,)
    brief_limit = 8000
    prompt_hook_event = "UserPromptSubmit"

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".codex"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """Hooks in ``~/.codex/hooks.json`` (brief at SessionStart, per-prompt recall at
        UserPromptSubmit, flush at Stop; seconds),
        the MCP server in ``~/.codex/config.toml``, and the hooks' trust (a follow-up: Codex
        skips untrusted user hooks silently, and only Codex itself computes the hash)."""
        start = commands.hook("session-start", "--platform", PLATFORM)
        prompt = commands.hook("prompt", "--platform", PLATFORM)
        hooks = FileEdit(
            home / ".codex" / "hooks.json",
            "json",
            (
                HookGroup(
                    "SessionStart",
                    hook_group(start, matcher="startup|resume|clear|compact", timeout=10),
                ),
                HookGroup("UserPromptSubmit", hook_group(prompt, timeout=PROMPT_HOOK_SEC)),
                HookGroup("Stop", hook_group(commands.hook("flush"), timeout=5)),
            ),
            "SessionStart brief, UserPromptSubmit recall, Stop flush hooks",
        )
        mcp = FileEdit(
            home / ".codex" / "config.toml",
            "toml",
            (
                OwnedEntry(
                    ("mcp_servers", MCP_SERVER_NAME),
                    stdio_server(commands, startup_timeout_sec=STARTUP_TIMEOUT_SEC),
                ),
                EnsureSetting(("mcp_optional_startup_grace_ms",), STARTUP_GRACE_MS),
            ),
            "MCP server",
        )
        return InstallPlan(PLATFORM, (hooks, mcp))

    def post_install(self, ctx: InstallContext) -> list[str]:
        """Trust our hooks (Codex skips untrusted user hooks silently): see
        :mod:`agents_memory.adapters.codex_trust`."""
        from agents_memory.adapters import codex_trust

        return codex_trust.trust_hooks(ctx)

    def uninstall_edits(self, home: Path, read_text: Reader) -> list[FileEdit]:
        from agents_memory.adapters import codex_trust

        return codex_trust.trust_removal(home, read_text)

    def installed_extras(self, home: Path, read_text: Reader) -> list[tuple[Path, str]]:
        from agents_memory.adapters import codex_trust

        return codex_trust.trust_entries(home, read_text)

    def roots(self, home: Path) -> list[Path]:
        return [home / ".codex" / "sessions"]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            path.relative_to(self.roots(home)[0])
        except ValueError:
            return False
        return _ROLLOUT_NAME.fullmatch(path.name) is not None

    def read_mode(self, path: Path) -> ReadMode:
        return "whole" if path.name.endswith(".zst") else "append"

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
        issues: list[ParseIssue] = []
        if self.read_mode(path) == "whole":
            resume = len(data)
            try:
                data, offset = _decompress(data), 0
            except zstandard.ZstdError as exc:
                issues.append(ParseIssue(0, f"cannot decompress: {exc}"))
                return ParseResult([], resume, dict(state), issues=issues)
            whole = True
        else:
            resume, whole = complete_end(data, offset=offset), False
        reader = _Reader(_Thread.load(state), _fallback_session(path))
        unknown: Counter[str] = Counter()
        for line in iter_lines(data, offset=offset, complete_tail=whole):
            if _unused(line.raw):
                continue
            rec = decode(line, issues)
            if rec is None:
                continue
            kind = rec.get("type")
            payload = rec.get("payload")
            if not isinstance(payload, dict):
                payload = {}
            if kind == "event_msg":
                reader.event(rec, payload, line)
            elif kind == "response_item":
                reader.item(rec, payload)
            elif kind == "turn_context":
                reader.thread.context(payload)
            elif kind == "session_meta":
                reader.thread.meta(payload)
            elif not isinstance(kind, str) or kind not in _KNOWN_KINDS:
                unknown[kind if isinstance(kind, str) else "<no type>"] += 1
        turns = list({t.external_uuid: t for t in reader.turns}.values())  # one row per key
        actions = reader.actions.actions(reader.thread.platform)
        return ParseResult(turns, resume, asdict(reader.thread), unknown, issues, actions)
