"""An action as a search gives it back (:class:`FoundAction`) and the one line every reader
shows for an action (:func:`action_line`: ``read_memory``, the search's hits, the Markdown
export, the console, ``mcp-agents-memory actions``).

Pure (no SQL, no database driver): the search's types carry it to the daemon's socket and
to the command line's table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal, Protocol, get_args

ActionKind = Literal["edit", "write", "read", "shell", "search", "web", "mcp", "agent", "other"]
"""An action's normalised kinds (the ``actions.kind`` check of migration 0015)."""
ACTION_KINDS: Final[tuple[str, ...]] = get_args(ActionKind)

OUTCOME_WORDS: Final = {"error": "error failed failure", "interrupted": "interrupted"}
"""The words an outcome other than ``ok`` stands for when a hit's coverage is counted."""

LINE_SUBJECT_CHARS: Final = 120
"""The most of a command line (its first line) or an error line one action's line shows."""


class ActionLike(Protocol):
    """What :func:`action_line` reads of an action (a stored row or a found one)."""

    @property
    def tool(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def command(self) -> str | None: ...
    @property
    def outcome(self) -> str: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def excerpt(self) -> str | None: ...
    @property
    def lines_added(self) -> int | None: ...
    @property
    def lines_removed(self) -> int | None: ...
    @property
    def targets(self) -> list[str] | tuple[str, ...] | None: ...


def first_line(text: str, limit: int = LINE_SUBJECT_CHARS) -> str:
    """The first line of ``text`` (``…`` when more follows), cut to ``limit`` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = len(line) > limit or "\n" in text.strip()
    return (line[: limit - 1] + "…") if len(line) > limit else line + ("…" if more else "")


def action_line(row: ActionLike) -> str:
    """One action on one line: kind, what it acted on, its diffstat, how it ended (with the
    first error line of a failure)."""
    targets = list(row.targets or ())
    if row.command:
        subject = f"`{first_line(row.command)}`"
    elif targets:
        subject = ", ".join(targets[:3]) + (" …" if len(targets) > 3 else "")
    else:
        subject = row.tool
    if row.kind == "other" and subject != row.tool:
        subject = f"{row.tool} {subject}"
    if row.command and targets:
        subject += f" ({', '.join(targets[:2])})"
    stat = ""
    if row.lines_added is not None or row.lines_removed is not None:
        stat = f" +{row.lines_added or 0}/-{row.lines_removed or 0}"
    outcome = row.outcome
    if row.exit_code:
        outcome += f" (exit {row.exit_code})"
    if row.outcome in ("error", "interrupted") and row.excerpt:
        outcome += f": {first_line(row.excerpt)}"
    return f"{row.kind} {subject}{stat} → {outcome}"


@dataclass(frozen=True, slots=True)
class FoundAction:
    """An action a search found for a hit (the hit is the turn that issued it, or the turn
    of its exchange for a tool-only response)."""

    id: int
    tool: str
    kind: str
    targets: tuple[str, ...]
    command: str | None
    outcome: str
    exit_code: int | None
    excerpt: str | None
    lines_added: int | None
    lines_removed: int | None
    started_at: datetime | None
    score: float
    """Its full-text score for the query (0 when only a ``kind`` / ``file`` filter found it)."""

    def text(self) -> str:
        """What the search's confidence reads of it: tool, targets, command, excerpt and, for
        one that did not succeed, the words that say so (a prompt about a failure names it
        so, not by the error's text alone)."""
        said = OUTCOME_WORDS.get(self.outcome)
        return " ".join(
            part for part in (self.tool, *self.targets, self.command, self.excerpt, said) if part
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: its fields, its one line, its time in ISO 8601."""
        return {
            "id": self.id,
            "kind": self.kind,
            "tool": self.tool,
            "targets": list(self.targets),
            "command": self.command,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "excerpt": self.excerpt,
            "lines_added": self.lines_added,
            "lines_removed": self.lines_removed,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "line": action_line(self),
        }
