"""Sessions as a unit: a session rendered with its summary, a project's sessions, and the
brief's "recent sessions" lines.

One implementation for every caller: the console's session page and project lists, the
Markdown export, the brief and the ``memory://session/…`` MCP resource. The summaries are the
Cold Path's (:mod:`agents_memory.coldpath.session_summarizer`); the SQL is
:mod:`agents_memory.store.session_summaries`.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any, Final

import psycopg

from agents_memory.coldpath.session_text import clip_line
from agents_memory.store import session_summaries as store
from agents_memory.store.session_summaries import SessionSummaryRow

BRIEF_SESSIONS: Final = {"full": 5, "compact": 3}
BRIEF_TITLE_CHARS: Final = {"full": 120, "compact": 80}
BRIEF_OUTCOME_CHARS: Final = {"full": 160, "compact": 0}


def session_summary(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> SessionSummaryRow | None:
    """The session's stored summary (``None``: none written yet)."""
    return store.session_summary(conn, user_id, platform, session_id)


def project_sessions(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    project: str | None = None,
    git_root: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[SessionSummaryRow]:
    """The newest sessions with a summary: of one project (its tag name or git root) when
    one is given, else of every project."""
    scoped = project is not None or git_root is not None
    return store.recent_session_summaries(
        conn,
        user_id,
        git_root=git_root,
        project=project,
        same_project_only=scoped,
        limit=limit,
        offset=offset,
    )


def brief_session_lines(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    git_root: str | None,
    project: str | None,
    compact: bool,
) -> list[str]:
    """The brief's "recent sessions" lines: this project's newest sessions first (then
    others', marked with their project), each its title and, in a full brief, its outcome.
    Files and commands are left to the brief's "recent work" (no repeats)."""
    mode = "compact" if compact else "full"
    rows = store.recent_session_summaries(
        conn, user_id, git_root=git_root, project=project, limit=BRIEF_SESSIONS[mode]
    )
    lines = []
    for row in rows:
        when = row.last_at.astimezone(UTC)
        elsewhere = git_root is not None and row.git_root != git_root
        where = f", {_project_label(row)}" if elsewhere or git_root is None else ""
        line = f"- [{when:%m-%d} {row.agent_platform}{where}] " + clip_line(
            row.title, BRIEF_TITLE_CHARS[mode]
        )
        outcome = _part(row.summary, "Outcome: ")
        if outcome and BRIEF_OUTCOME_CHARS[mode]:
            line += " → " + clip_line(outcome, BRIEF_OUTCOME_CHARS[mode])
        lines.append(line)
    return lines


def _part(summary: str, prefix: str) -> str | None:
    for line in summary.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def _project_label(row: SessionSummaryRow) -> str:
    if row.project:
        return row.project
    return row.git_root.rstrip("/").rsplit("/", 1)[-1] if row.git_root else "no project"
