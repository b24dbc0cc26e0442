"""What a platform adapter is.

An adapter knows where one client writes its transcripts and how to turn a region of one
transcript file into normalized :class:`Turn` rows. Adapters are pure: no database, no
watching, no clock. The capture daemon owns files, cursors and storage; it asks the adapter:

* :meth:`Adapter.roots` — the directories to watch under a home directory;
* :meth:`Adapter.owns` — whether a path under a root is a transcript of this client;
* :meth:`Adapter.read_mode` — ``"append"`` (JSONL read incrementally from a byte offset) or
  ``"whole"`` (the file is rewritten or compressed and must be parsed in full each time);
* :meth:`Adapter.parse` — bytes from ``offset`` (``"append"``) or the whole file (``"whole"``)
  into turns, plus where the next read must start and the state to carry to it.

Stable ids: the same turn parsed twice, from any offset, in any later read, yields the same
``external_uuid``; that is what makes capture idempotent across crashes and rescans.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

Role = Literal["user", "assistant"]
ReadMode = Literal["append", "whole"]
JsonState = Mapping[str, Any]
"""Adapter state carried between reads of one file (JSON-serialisable; stored with the cursor)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One user or assistant turn, normalized across platforms."""

    external_uuid: str
    platform: str
    role: Role
    text: str
    session_id: str | None = None
    message_at: datetime | None = None
    model: str | None = None
    subagent: bool = False
    subagent_model: str | None = None
    subagent_role: str | None = None
    cwd: str | None = None
    raw_text: str | None = None
    """The original text when the adapter cleaned an envelope out of it (else ``None``)."""


@dataclass(frozen=True, slots=True)
class ParseIssue:
    """A record that could not be used: where it is and why. Never fatal."""

    offset: int
    reason: str


@dataclass(slots=True)
class ParseResult:
    turns: list[Turn]
    resume_offset: int
    """Absolute byte offset where the next ``append`` read must start. It is at most the end of
    the last complete line; an adapter may hold back a trailing group it may have to re-read
    (for example Claude assistant blocks that share one ``message.id``): turns from that group
    are still returned now and returned again, fuller, under the same ``external_uuid``."""
    state: dict[str, Any] = field(default_factory=dict)
    unknown_kinds: Counter[str] = field(default_factory=Counter)
    issues: list[ParseIssue] = field(default_factory=list)


class Adapter(ABC):
    """One client. Subclasses live in ``adapters/<platform>.py`` and register in the registry."""

    name: str
    """Platform name stored in ``memory.agent_platform`` (e.g. ``claude-code``)."""

    @abstractmethod
    def roots(self, home: Path) -> list[Path]:
        """Directories under ``home`` that may contain this client's transcripts (may not exist)."""

    @abstractmethod
    def owns(self, path: Path, home: Path) -> bool:
        """Whether ``path`` (a file under one of :meth:`roots`) is a transcript of this client."""

    def read_mode(self, path: Path) -> ReadMode:
        """How the daemon must read ``path``. Default: incremental JSONL."""
        return "append"

    @abstractmethod
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
        """Parse ``data`` read from ``path`` starting at absolute byte ``offset``.

        ``append`` mode: ``data`` holds complete lines only (it ends with ``\\n`` or is empty).
        ``whole`` mode: ``data`` is the whole file as stored (``offset`` is 0). ``state`` is what
        the previous call returned for this file (empty on a first read or a rescan from 0).
        ``final`` asks the adapter to hold nothing back (the file is idle or being flushed).
        ``home`` is the home directory the file was found under, for adapters that read a
        sidecar there (e.g. Gemini's ``projects.json``); ``None`` when unknown.
        """
