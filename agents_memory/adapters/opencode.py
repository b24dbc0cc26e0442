"""OpenCode sessions (``~/.local/share/opencode/opencode.db``, SQLite in WAL mode).

Seen in ``opencode-ai`` 1.18.33 (run headless against the fake model server): one database,
tables ``session`` (``id``, ``parent_id``, ``directory``, ``agent``), ``message`` (``id``,
``session_id``, ``time_updated`` in ms, ``data`` JSON: ``role``, ``time.created``,
``time.completed`` for a finished assistant message, ``modelID`` or ``model.modelID``,
``agent``, ``path.cwd``) and ``part`` (``message_id``, ``time_updated``, ``data`` JSON with a
``type``). Writes land in ``opencode.db-wal`` until a checkpoint, so the WAL is a
:meth:`~OpenCodeAdapter.companions` of the database. The table ``session_message`` (the next
storage generation) exists but stays empty in 1.18; rows appearing there are counted as the
unknown kind ``session_message`` so an upgrade that moves messages shows in ``status``.

Read mode ``database``: the adapter queries the file itself, read-only (``mode=ro``, busy
timeout, retries; see :mod:`agents_memory.adapters._sqlite`). ``state`` holds ``since`` (the
newest ``time_updated`` seen, ms), ``sent`` (message id → digest of the text returned and the
newest ``time_updated`` of the message and its parts when last read, for messages within
:data:`OVERLAP_MS` of ``since``) and ``later_since`` (the newest ``session_message`` row
counted): each read looks again at rows updated since ``since - OVERLAP_MS`` (a writer's clock
may lag by a few ms), returns a message only when its text is new or changed, and counts an
unknown or bad record only when it changed since the last read. Keys are
``opencode:<message id>`` (seed A's).

Turns: the ``text`` parts of a message (``synthetic`` or ``ignored`` ones are OpenCode's own
additions and skipped), joined. A user message counts once it has text; an assistant message
only once ``time.completed`` is set. Other part types (tools, reasoning, steps, files,
patches, snapshots…) are known and skipped; unknown ones are counted. Sessions with a
``parent_id`` are subagent (task) sessions: flagged ``subagent``, their agent as role.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents_memory.adapters import _sqlite, opencode_plugin
from agents_memory.adapters import opencode_actions as tools
from agents_memory.adapters._actions import ActionLog
from agents_memory.adapters.base import (
    MCP_SERVER_NAME,
    Commands,
    FileEdit,
    InstallPlan,
    JsonState,
    OwnedEntry,
    ParseIssue,
    ParseResult,
    TextBlock,
    Turn,
    WholeFile,
)
from agents_memory.errors import StoreUnreadable

PLATFORM = "opencode"
RECALL_HEADER = (
    "Memories (mcp-agents-memory) that may bear on the user's latest message; "
    "read_memory with an id gives the whole turn:"
)
DATABASE = "opencode.db"
OVERLAP_MS = 60_000
"""How far before ``since`` each read looks again (clock skew between writers)."""

_KNOWN_PARTS = frozenset(
    {
        "text",
        "reasoning",
        "tool",
        "file",
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
        "agent",
        "subtask",
        "retry",
        "compaction",
    }
)


class OpenCodeAdapter(_sqlite.SQLiteStoreAdapter):
    name = PLATFORM
    display_name = "OpenCode"
    binaries = ("opencode",)
    mcp_client_names = ("opencode",)
    prompt_hook_event = "chat.message"
    """Not a command hook: our plugin's hook (:mod:`~agents_memory.adapters.opencode_plugin`)
    runs the per-prompt hook command and adds its output to the system prompt."""

    def prompt_hook_output(self, text: str) -> str:
        """Plain text with a first line that says what it is (the plugin appends it to the
        system prompt as is)."""
        if not text:
            return ""
        return f"{RECALL_HEADER}\n{text}"

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".config" / "opencode", home / ".local" / "share" / "opencode"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """The MCP server in ``~/.config/opencode/opencode.json`` (``mcp`` entry, type
        ``local``, command as an array) and a managed block in the global rules file
        ``~/.config/opencode/AGENTS.md``, which OpenCode puts into the system prompt of every
        session: the capture daemon keeps the brief there fresh, so the server runs with
        ``serve --no-brief`` (its MCP instructions would carry the brief a second time). And the
        per-prompt recall plugin in ``~/.config/opencode/plugins/`` (:mod:`.opencode_plugin`)
        when OpenCode has plugins already (see :func:`.opencode_plugin.wanted`); else a note."""
        config = home / ".config" / "opencode"
        # The brief reaches OpenCode through AGENTS.md: the server's instructions leave it out.
        command = [str(commands.mcp_server), "serve", "--no-brief"]
        server = {"type": "local", "command": command, "enabled": True}
        mcp = FileEdit(
            config / "opencode.json",
            "json",
            (OwnedEntry(("mcp", MCP_SERVER_NAME), server, preserve=("environment",)),),
            "MCP server",
        )
        rules = FileEdit(
            config / "AGENTS.md",
            "text-block",
            (TextBlock(),),
            "memory brief in the global rules file (kept fresh by the daemon)",
        )
        if not opencode_plugin.wanted(config):
            return InstallPlan(PLATFORM, (mcp, rules), (opencode_plugin.SKIPPED,))
        plugin = FileEdit(
            config / "plugins" / opencode_plugin.PLUGIN_FILE,
            "file",
            (WholeFile(opencode_plugin.plugin_source(commands)),),
            "per-prompt recall plugin",
        )
        return InstallPlan(PLATFORM, (mcp, rules, plugin))

    def roots(self, home: Path) -> list[Path]:
        return [home / ".local" / "share" / "opencode"]

    def owns(self, path: Path, home: Path) -> bool:
        return path == home / ".local" / "share" / "opencode" / DATABASE

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
        """The messages changed since ``state`` (``data`` is unused: the database is read)."""
        since = state.get("since")
        since = since if isinstance(since, int) else 0
        sent = state.get("sent")
        later = state.get("later_since")
        read = _Read(
            since,
            dict(sent) if isinstance(sent, Mapping) else {},
            later if isinstance(later, int) else 0,
        )
        try:
            _sqlite.query(path, read.run, read.issues)
        except StoreUnreadable as exc:
            return ParseResult([], 0, dict(state), issues=[exc.issue])
        return ParseResult(
            read.turns,
            0,
            read.state(),
            unknown_kinds=read.unknown,
            issues=read.issues,
            actions=read.actions.actions(PLATFORM),
        )


@dataclass(slots=True)
class _Read:
    """One read of the database: the changed messages into turns."""

    since: int
    sent: dict[str, list[Any]]
    """message id -> ``[digest of the text returned ("" for none yet), newest time_updated of
    the message and its parts when last read]``."""
    later_since: int = 0
    """The newest ``session_message.time_updated`` counted (each row is counted once)."""
    turns: list[Turn] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)
    newest: int = 0
    actions: ActionLog = field(default_factory=ActionLog)
    tool_parts: list[Mapping[str, Any]] = field(default_factory=list)
    """The ``tool`` parts of the message being read (its actions)."""

    def run(self, conn: sqlite3.Connection) -> None:
        floor = self.since - OVERLAP_MS
        self.newest = self.since
        sessions = _sessions(conn)
        rows = conn.execute(
            "SELECT rowid, id, session_id, time_updated, data FROM message"
            " WHERE time_updated > ? OR id IN (SELECT message_id FROM part WHERE time_updated > ?)"
            " ORDER BY time_created, id",
            (floor, floor),
        ).fetchall()
        for row in rows:
            message_id = row[1]
            if not isinstance(message_id, str) or not isinstance(row[2], str | None):
                reason = f"message row {row[0]}: its id or session id is not text"
                self.issues.append(ParseIssue(_sqlite.whole_number(row[0]), reason))
                continue
            self.newest = max(self.newest, _sqlite.whole_number(row[3]))
            before = self.sent.get(message_id)
            read = list(before) if isinstance(before, list) and len(before) == 2 else ["", None]
            session = sessions.get(row[2]) if isinstance(row[2], str) else None
            self._message(conn, row, read, session)
            self.sent[message_id] = read
        later, newest = conn.execute(
            "SELECT count(*), max(time_updated) FROM session_message WHERE time_updated > ?",
            (self.later_since,),
        ).fetchone()
        if later:
            self.unknown["session_message"] += int(later)
            self.later_since = _sqlite.whole_number(newest)

    def _message(
        self,
        conn: sqlite3.Connection,
        row: tuple[Any, ...],
        read: list[Any],
        session: _Session | None,
    ) -> None:
        """The message ``row`` as a turn when its text is new; ``read`` (its ``sent`` entry)
        takes the newest ``time_updated`` seen. A record is counted (unknown kind, bad JSON)
        only when it changed since the last read, not at each read of the overlap."""
        rowid, message_id, session_id, updated, raw = row
        updated = _sqlite.whole_number(updated)
        seen = read[1] if isinstance(read[1], int) else None
        self.tool_parts = []
        text, parts_updated = self._text(conn, message_id, seen)
        read[1] = max(updated, parts_updated)
        fresh = seen is None or updated > seen
        info = self._json(raw, rowid, "message", count=fresh)
        if info is None:
            return
        cwd = _str(_mapping(info.get("path")).get("cwd")) or (
            session.directory if session else None
        )
        for part in self.tool_parts:
            tools.add_part(
                self.actions,
                part,
                platform=PLATFORM,
                session_id=session_id,
                turn_key=f"{PLATFORM}:{message_id}",
                cwd=cwd,
            )
        role = info.get("role")
        if role not in ("user", "assistant"):
            if fresh:
                self.unknown[f"role:{role}"] += 1
            return
        time_info = _mapping(info.get("time"))
        if role == "assistant" and not time_info.get("completed"):
            return  # still streaming: read again once completed
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        if not text or read[0] == digest:
            return
        read[0] = digest
        model = info.get("modelID") if role == "assistant" else _model_of(info.get("model"))
        path_info = _mapping(info.get("path"))
        subagent = session is not None and session.parent is not None
        agent = info.get("agent") if isinstance(info.get("agent"), str) else None
        self.turns.append(
            Turn(
                external_uuid=f"{PLATFORM}:{message_id}",
                platform=PLATFORM,
                role=role,
                text=text,
                session_id=session_id,
                message_at=_sqlite.from_millis(time_info.get("created")),
                model=model if isinstance(model, str) and model else None,
                subagent=subagent,
                subagent_model=model if subagent and isinstance(model, str) else None,
                subagent_role=agent if subagent else None,
                cwd=_str(path_info.get("cwd")) or (session.directory if session else None),
            )
        )

    def _actions(
        self, info: Mapping[str, Any], message_id: str, session_id: str, session: _Session | None
    ) -> None:
        """The message's ``tool`` parts (read by :meth:`_text`) as actions."""
        cwd = _str(_mapping(info.get("path")).get("cwd"))
        for part in self.tool_parts:
            tools.add_part(
                self.actions,
                part,
                platform=PLATFORM,
                session_id=session_id,
                turn_key=f"{PLATFORM}:{message_id}",
                cwd=cwd or (session.directory if session else None),
            )

    def _text(self, conn: sqlite3.Connection, message_id: str, seen: int | None) -> tuple[str, int]:
        """The message's own text and the newest ``time_updated`` of its parts; parts changed
        since ``seen`` are counted when unknown or bad."""
        texts: list[str] = []
        newest = 0
        for rowid, updated, raw in conn.execute(
            "SELECT rowid, time_updated, data FROM part WHERE message_id = ? ORDER BY id",
            (message_id,),
        ):
            newest = max(newest, _sqlite.whole_number(updated))
            fresh = seen is None or _sqlite.whole_number(updated) > seen
            part = self._json(raw, rowid, "part", count=fresh)
            if part is None:
                continue
            kind = part.get("type")
            if not isinstance(kind, str) or kind not in _KNOWN_PARTS:
                if fresh:
                    self.unknown[f"part:{kind if isinstance(kind, str) else '(no type)'}"] += 1
            elif kind == "tool":
                self.tool_parts.append(part)
            elif kind == "text" and not part.get("synthetic") and not part.get("ignored"):
                text = part.get("text")
                if isinstance(text, str) and text.strip():
                    texts.append(text.strip())
        self.newest = max(self.newest, newest)
        return "\n\n".join(texts), newest

    def _json(
        self, raw: object, rowid: int, table: str, *, count: bool
    ) -> Mapping[str, Any] | None:
        """``raw`` as a JSON object, else ``None`` (noted as an issue when ``count``)."""
        try:
            value = json.loads(raw) if isinstance(raw, str | bytes) else None
        except ValueError as exc:
            if count:
                self.issues.append(ParseIssue(int(rowid), f"{table} row {rowid}: bad JSON: {exc}"))
            return None
        if not isinstance(value, dict):
            if count:
                self.issues.append(ParseIssue(int(rowid), f"{table} row {rowid}: not an object"))
            return None
        return value

    def state(self) -> dict[str, Any]:
        """``since`` and the digests still inside the overlap window (older ones are never
        read again unless updated, and then their text is compared afresh)."""
        floor = self.newest - OVERLAP_MS
        sent = {
            key: value
            for key, value in self.sent.items()
            if isinstance(value, list) and len(value) == 2 and value[1] >= floor
        }
        return {"since": self.newest, "sent": sent, "later_since": self.later_since}


@dataclass(frozen=True, slots=True)
class _Session:
    parent: str | None
    directory: str | None


def _sessions(conn: sqlite3.Connection) -> dict[str, _Session]:
    return {
        sid: _Session(_str(parent), _str(directory))
        for sid, parent, directory in conn.execute("SELECT id, parent_id, directory FROM session")
    }


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _model_of(value: object) -> object:
    return value.get("modelID") if isinstance(value, Mapping) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
