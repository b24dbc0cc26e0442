"""Hermes Agent sessions (``~/.hermes/state.db``, SQLite in WAL mode; one per profile under
``~/.hermes/profiles/<name>/state.db``).

Seen in ``hermes-agent`` 0.19.0 (run headless with ``hermes -z`` against the fake model
server): table ``sessions`` (``id``, ``source`` — the venue: ``cli``, ``telegram``, … —,
``model``, ``model_config`` JSON whose ``_delegate_from`` marks a delegated subagent,
``parent_session_id``, ``cwd``) and ``messages`` (``id`` INTEGER AUTOINCREMENT, ``session_id``,
``role``, ``content``, ``timestamp`` in seconds, ``finish_reason``). Hermes inserts a message
once it is complete and never rewrites its ``content`` (later updates only flip ``active``,
``compacted`` or ``api_content``), so the cursor is the last message ``id`` returned
(``state["last_id"]``) and keys are ``hermes:<session id>:<message id>``. A store whose
``AUTOINCREMENT`` sequence is below the cursor is a new one (the old removed): read from its
start.

Read mode ``database`` (see :mod:`agents_memory.adapters._sqlite`: read-only, busy timeout,
retries, never an exception). Turns: ``user`` and ``assistant`` rows with text ``content``
(assistant rows that only call tools carry none); ``tool`` and ``system`` rows are known and
skipped; other roles are counted as unknown kinds. Model: the session's. A session whose
``model_config`` has ``_delegate_from`` is a subagent. The venue (``sessions.source``) has no
field in :class:`Turn` and is not kept.

The brief: Hermes puts ``$HERMES_HOME/SOUL.md`` into the system prompt once per session, so
install adds a managed block there (only when Hermes has already seeded the file: a SOUL.md
made by us alone would stop Hermes writing its default persona) that the daemon keeps fresh.
The MCP server goes into ``~/.hermes/config.yaml``, which the installer does not edit (YAML):
install's post-install step runs ``hermes mcp add``, uninstall's ``hermes mcp remove``
(:mod:`agents_memory.adapters.hermes_mcp`).

Per-prompt recall: a user plugin whose ``pre_llm_call`` hook runs our per-prompt hook command;
install writes it and enables it with ``hermes plugins enable``, uninstall disables and deletes
it (:mod:`agents_memory.adapters.hermes_plugin`).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents_memory.adapters import _sqlite, hermes_mcp, hermes_plugin
from agents_memory.adapters import hermes_actions as tools
from agents_memory.adapters._actions import ActionLog
from agents_memory.adapters.base import (
    Commands,
    FileEdit,
    InstallContext,
    InstallPlan,
    JsonState,
    ParseIssue,
    ParseResult,
    Reader,
    TextBlock,
    Turn,
)
from agents_memory.errors import StoreUnreadable

PLATFORM = "hermes"
DATABASE = "state.db"

_SKIPPED_ROLES = frozenset({"tool", "system"})


class HermesAdapter(_sqlite.SQLiteStoreAdapter):
    name = PLATFORM
    display_name = "Hermes Agent"
    binaries = ("hermes",)
    mcp_client_names = ("hermes",)
    mcp_client_exact_names = ("mcp",)
    """Hermes 0.19.0 opens its MCP sessions without a ``clientInfo`` of its own, so it sends
    the Python SDK's default ``{"name": "mcp", "version": "0.1.0"}`` (seen by the e2e suite);
    ``hermes`` is kept for a later version that names itself."""

    prompt_hook_event = "pre_llm_call"
    """Not a command hook: our plugin's hook (:mod:`~agents_memory.adapters.hermes_plugin`)
    runs the per-prompt hook command and hands Hermes its output as the turn's context."""

    def prompt_hook_output(self, text: str) -> str:
        """Plain text (the plugin returns it as ``{"context": …}``, which Hermes adds to the
        turn's user message)."""
        return text

    def config_markers(self, home: Path) -> list[Path]:
        return [home / ".hermes"]

    def install_plan(self, home: Path, commands: Commands) -> InstallPlan:
        """The memory brief as a managed block in ``~/.hermes/SOUL.md`` (when Hermes has
        created it); the MCP server is :meth:`post_install`'s."""
        soul = home / ".hermes" / "SOUL.md"
        edits: tuple[FileEdit, ...] = ()
        notes = [
            "Hermes keeps MCP servers in ~/.hermes/config.yaml: install registers ours with "
            f"`hermes mcp add`, uninstall takes it out with `{hermes_mcp.REMOVAL}`"
        ]
        if soul.is_file():
            edits = (
                FileEdit(
                    soul,
                    "text-block",
                    (TextBlock(),),
                    "memory brief in SOUL.md (kept fresh by the daemon)",
                ),
            )
        else:
            notes.append("Run hermes once (it creates ~/.hermes/SOUL.md), then install again.")
        return InstallPlan(PLATFORM, edits, tuple(notes))

    def post_install(self, ctx: InstallContext) -> list[str]:
        """Register our MCP server through ``hermes mcp add`` (:mod:`.hermes_mcp`), then write
        and enable the per-prompt recall plugin (:mod:`.hermes_plugin`)."""
        return hermes_mcp.register(ctx) + hermes_plugin.register(ctx)

    def post_uninstall(self, ctx: InstallContext) -> list[str]:
        """Take our MCP server out through ``hermes mcp remove``, disable and delete the
        plugin."""
        return hermes_mcp.unregister(ctx) + hermes_plugin.unregister(ctx)

    def installed_extras(self, home: Path, read_text: Reader) -> list[tuple[Path, str]]:
        config = hermes_mcp.config_yaml(home)
        found: list[tuple[Path, str]] = []
        text = read_text(config)
        if hermes_mcp.is_registered(text):
            found.append((config, "MCP server (hermes mcp add)"))
        if hermes_plugin.is_ours(home):
            enabled = "enabled" if hermes_plugin.is_enabled(text) else "not enabled"
            found.append((hermes_plugin.plugin_dir(home), f"per-prompt recall plugin ({enabled})"))
        return found

    def roots(self, home: Path) -> list[Path]:
        return [home / ".hermes"]

    def owns(self, path: Path, home: Path) -> bool:
        try:
            parts = path.relative_to(home / ".hermes").parts
        except ValueError:
            return False
        return parts == (DATABASE,) or (
            len(parts) == 3 and parts[0] == "profiles" and parts[2] == DATABASE
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
        """The messages after ``state["last_id"]`` (``data`` is unused: the database is read)."""
        last = state.get("last_id")
        read = _Read(last if isinstance(last, int) else 0)
        try:
            _sqlite.query(path, read.run, read.issues)
        except StoreUnreadable as exc:
            return ParseResult([], 0, dict(state), issues=[exc.issue])
        return ParseResult(
            read.turns,
            0,
            {"last_id": read.last_id},
            read.unknown,
            read.issues,
            read.actions.actions(PLATFORM),
        )


@dataclass(slots=True)
class _Read:
    last_id: int
    turns: list[Turn] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)
    actions: ActionLog = field(default_factory=ActionLog)

    def run(self, conn: sqlite3.Connection) -> None:
        if _highest_id(conn) < self.last_id:
            self.last_id = 0  # a new store (the old one removed): its ids start again
        sessions: dict[str, _Session] = {}
        rows = conn.execute(
            f"SELECT id, session_id, role, content, timestamp, {tools.tool_columns(conn)}"
            " FROM messages WHERE id > ? ORDER BY id",
            (self.last_id,),
        ).fetchall()
        for message_id, session_id, role, content, timestamp, calls, answers in rows:
            self.last_id = max(self.last_id, _sqlite.whole_number(message_id))
            if (calls or answers) and isinstance(session_id, str):
                session = sessions.get(session_id)
                if session is None:
                    session = sessions[session_id] = _session(conn, session_id, self.issues)
                where = (_sqlite.whole_number(message_id), session_id, content, timestamp)
                self._action(session, where, calls, answers)
            if role in _SKIPPED_ROLES:
                continue
            if role not in ("user", "assistant"):
                self.unknown[f"role:{role}"] += 1
                continue
            text = content.strip() if isinstance(content, str) else ""
            if not text:
                continue
            if not isinstance(session_id, str):
                reason = f"message {message_id}: its session id is not text"
                self.issues.append(ParseIssue(_sqlite.whole_number(message_id), reason))
                continue
            session = sessions.get(session_id)
            if session is None:
                session = sessions[session_id] = _session(conn, session_id, self.issues)
            self.turns.append(
                session.turn(_sqlite.whole_number(message_id), session_id, role, text, timestamp)
            )

    def _action(
        self,
        session: _Session,
        where: tuple[int, str, object, object],
        calls: object,
        answers: object,
    ) -> None:
        """An assistant row's tool calls, or a tool row's answer (``where``: its id, session,
        content and timestamp), into :attr:`actions`."""
        message_id, session_id, content, timestamp = where
        at = _sqlite.from_seconds(timestamp)
        if calls:
            tools.add_calls(
                self.actions,
                calls,
                platform=PLATFORM,
                session_id=session_id,
                turn_key=f"{PLATFORM}:{session_id}:{message_id}",
                at=at,
                cwd=session.cwd,
            )
        if answers:
            tools.add_result(self.actions, answers, content, session_id=session_id, at=at)


@dataclass(frozen=True, slots=True)
class _Session:
    model: str | None
    cwd: str | None
    subagent: bool

    def turn(self, message_id: int, session_id: str, role: Any, text: str, at: object) -> Turn:
        return Turn(
            external_uuid=f"{PLATFORM}:{session_id}:{message_id}",
            platform=PLATFORM,
            role=role,
            text=text,
            session_id=session_id,
            message_at=_sqlite.from_seconds(at),
            model=self.model,
            subagent=self.subagent,
            subagent_model=self.model if self.subagent else None,
            cwd=self.cwd,
        )


def _highest_id(conn: sqlite3.Connection) -> int:
    """The highest message id this store ever gave (``AUTOINCREMENT`` never gives one twice,
    even after a delete), or the highest there is without the sequence table."""
    sequence = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'")
    sql = (
        "SELECT seq FROM sqlite_sequence WHERE name = 'messages'"
        if sequence.fetchone()
        else "SELECT max(id) FROM messages"
    )
    row = conn.execute(sql).fetchone()
    return _sqlite.whole_number(row[0]) if row is not None else 0


def _session(conn: sqlite3.Connection, session_id: str, issues: list[ParseIssue]) -> _Session:
    row = conn.execute(
        "SELECT model, cwd, model_config FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return _Session(None, None, False)
    model, cwd, config = row
    delegated = False
    if isinstance(config, str) and config:
        try:
            parsed = json.loads(config)
            delegated = isinstance(parsed, dict) and bool(parsed.get("_delegate_from"))
        except ValueError:
            issues.append(ParseIssue(0, f"session {session_id}: bad model_config JSON"))
    return _Session(_str(model), _str(cwd), delegated)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
