"""Reading a claude-mem database (``~/.claude-mem/claude-mem.db``, the Claude Code memory
plugin's SQLite file), read-only.

Its schema is built by ``src/services/sqlite/SessionStore.ts`` (thedotmack/claude-mem): the
tables ``sdk_sessions``, ``user_prompts`` (since its migration 10), ``observations`` and
``session_summaries``. Files written before its migration 17 name the session columns
``claude_session_id`` / ``sdk_session_id`` (now ``content_session_id`` / ``memory_session_id``);
columns added later (an observation's title, facts, narrative…; a session's platform) read as
their defaults when missing. Epochs are milliseconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from agents_memory.errors import DatabaseError
from agents_memory.store.seeds.sqlite_source import SQLiteSource


@dataclass(frozen=True, slots=True)
class CmSession:
    id: int
    content_session_id: str
    memory_session_id: str | None
    project: str
    platform_source: str
    user_prompt: str | None
    started_at_epoch: int
    custom_title: str | None


@dataclass(frozen=True, slots=True)
class CmPrompt:
    id: int
    session_db_id: int | None
    content_session_id: str
    prompt_number: int
    prompt_text: str
    created_at_epoch: int


@dataclass(frozen=True, slots=True)
class CmObservation:
    id: int
    memory_session_id: str
    project: str
    text: str | None
    type: str
    title: str | None
    subtitle: str | None
    facts: str | None
    narrative: str | None
    concepts: str | None
    files_read: str | None
    files_modified: str | None
    prompt_number: int | None
    created_at_epoch: int
    generated_by_model: str | None
    agent_type: str | None
    merged_into_project: str | None


@dataclass(frozen=True, slots=True)
class CmSummary:
    id: int
    memory_session_id: str
    project: str
    request: str | None
    investigated: str | None
    learned: str | None
    completed: str | None
    next_steps: str | None
    files_read: str | None
    files_edited: str | None
    notes: str | None
    prompt_number: int | None
    created_at_epoch: int


_OLD_NAMES: Final = {
    "content_session_id": "claude_session_id",
    "memory_session_id": "sdk_session_id",
}
"""Column names before claude-mem's migration 17 (``renameSessionIdColumns``)."""

_SESSION: Final[dict[str, str | None]] = {
    "id": None,
    "content_session_id": None,
    "memory_session_id": "NULL",
    "project": None,
    "platform_source": "'claude'",
    "user_prompt": "NULL",
    "started_at_epoch": None,
    "custom_title": "NULL",
}
_PROMPT: Final[dict[str, str | None]] = {
    "id": None,
    "session_db_id": "NULL",
    "content_session_id": None,
    "prompt_number": None,
    "prompt_text": None,
    "created_at_epoch": None,
}
_OBSERVATION: Final[dict[str, str | None]] = {
    "id": None,
    "memory_session_id": None,
    "project": None,
    "text": "NULL",
    "type": None,
    "title": "NULL",
    "subtitle": "NULL",
    "facts": "NULL",
    "narrative": "NULL",
    "concepts": "NULL",
    "files_read": "NULL",
    "files_modified": "NULL",
    "prompt_number": "NULL",
    "created_at_epoch": None,
    "generated_by_model": "NULL",
    "agent_type": "NULL",
    "merged_into_project": "NULL",
}
_SUMMARY: Final[dict[str, str | None]] = {
    "id": None,
    "memory_session_id": None,
    "project": None,
    "request": "NULL",
    "investigated": "NULL",
    "learned": "NULL",
    "completed": "NULL",
    "next_steps": "NULL",
    "files_read": "NULL",
    "files_edited": "NULL",
    "notes": "NULL",
    "prompt_number": "NULL",
    "created_at_epoch": None,
}
COUNTED_TABLES: Final = ("pending_messages",)
"""claude-mem tables with no counterpart here: counted for the report, not read."""


class ClaudeMemSource(SQLiteSource):
    """An open, read-only connection to a claude-mem SQLite file and its readers."""

    LABEL = "claude-mem"
    REQUIRED = "sdk_sessions"

    def count(self, table: str) -> int:
        if not self.has_table(table):
            return 0
        row = self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    def identity(self) -> str:
        """A short, stable name for this file's content (its first session), the same for a
        copy of the file elsewhere."""
        row = self._conn.execute(
            self._select("sdk_sessions", {"id": None, "content_session_id": None})
            + " ORDER BY id LIMIT 1"
        ).fetchone()
        return hashlib.sha256(f"claude-mem|{row}".encode()).hexdigest()[:12]

    def _select(
        self, table: str, wanted: dict[str, str | None], *, unread: set[str] | None = None
    ) -> str:
        """A ``SELECT`` of ``wanted`` columns from ``table``: old names read as the new, a
        missing column (or one in ``unread``) as its default."""
        present = {str(r[1]) for r in self._conn.execute(f"PRAGMA table_info({table})")}
        present -= unread or set()
        parts = []
        for name, default in wanted.items():
            old = _OLD_NAMES.get(name)
            if name in present:
                parts.append(name)
            elif old is not None and old in present:
                parts.append(f"{old} AS {name}")
            elif default is None:
                raise DatabaseError(f"the claude-mem table {table} has no column {name}")
            else:
                parts.append(f"{default} AS {name}")
        return f"SELECT {', '.join(parts)} FROM {table}"

    def sessions(self) -> list[CmSession]:
        """Every session; its first prompt (``user_prompt``) only from a file without the
        ``user_prompts`` table, where it is the one prompt kept (else it repeats prompt 1)."""
        unread = {"user_prompt"} if self.has_table("user_prompts") else set()
        rows = self._conn.execute(
            self._select("sdk_sessions", _SESSION, unread=unread) + " ORDER BY id"
        )
        return [CmSession(*row) for row in rows.fetchall()]

    def prompts(self, *, batch: int = 1000) -> Iterator[list[CmPrompt]]:
        """User prompts (``None`` from a file older than its ``user_prompts`` table)."""
        if not self.has_table("user_prompts"):
            return
        cur = self._conn.execute(self._select("user_prompts", _PROMPT) + " ORDER BY id")
        while rows := cur.fetchmany(batch):
            yield [CmPrompt(*row) for row in rows]

    def observations(self, *, batch: int = 500) -> Iterator[list[CmObservation]]:
        if not self.has_table("observations"):
            return
        cur = self._conn.execute(self._select("observations", _OBSERVATION) + " ORDER BY id")
        while rows := cur.fetchmany(batch):
            yield [CmObservation(*row) for row in rows]

    def summaries(self, *, batch: int = 500) -> Iterator[list[CmSummary]]:
        """Session summaries, a session's together (oldest first)."""
        if not self.has_table("session_summaries"):
            return
        cur = self._conn.execute(
            self._select("session_summaries", _SUMMARY)
            + " ORDER BY memory_session_id, created_at_epoch, id"
        )
        while rows := cur.fetchmany(batch):
            yield [CmSummary(*row) for row in rows]
