"""The brief's "recent work" section: what the agents *did* lately, from their actions (tool
calls), beside what they said: the files most touched (edited or written) in the project's
last sessions and the last failing command with its first error line, the project's first
(a failure elsewhere is shown, marked, only when the project has none). Outside a project,
the last sessions of any project. A few short lines (the brief's :func:`fit` drops them when
its budget is spent); the SQL is :mod:`agents_memory.store.recall.work`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

import psycopg

from agents_memory.store.recall import work
from agents_memory.store.recall.work import FailedCommand

SESSIONS: Final = 5
"""The last sessions whose actions count."""
FILES: Final = {"full": 8, "compact": 3}
"""Files listed, by brief mode."""
SUBJECT_CHARS: Final = 120


def work_lines(
    conn: psycopg.Connection[Any],
    user_id: int,
    *,
    git_root: str | None,
    since: datetime,
    compact: bool,
) -> list[str]:
    """The section's lines (none when the last sessions did nothing worth a line)."""
    files = work.touched_files(
        conn,
        user_id,
        git_root=git_root,
        since=since,
        sessions=SESSIONS,
        limit=FILES["compact" if compact else "full"],
    )
    lines = []
    if files:
        listed = ", ".join(f"{f.path} ({f.touches}x)" if f.touches > 1 else f.path for f in files)
        lines.append(f"- files most touched: {listed}")
    failed = work.last_failed_command(
        conn, user_id, git_root=git_root, since=since, sessions=SESSIONS
    )
    if failed is not None:
        lines.append(_failure_line(failed, git_root))
    return lines


def _failure_line(failed: FailedCommand, git_root: str | None) -> str:
    where = ""
    if git_root is not None and failed.git_root != git_root:
        where = f", elsewhere: {failed.git_root.rsplit('/', 1)[-1]}" if failed.git_root else ""
        where = where or ", elsewhere"
    when = failed.at.astimezone(UTC)
    head = f"- last failing command ({when:%m-%d %H:%M} {failed.agent_platform}{where}):"
    outcome = f" exit {failed.exit_code}" if failed.exit_code else " failed"
    error = _first_line(failed.excerpt or "")
    return f"{head} `{_first_line(failed.command)}` →{outcome}" + (f": {error}" if error else "")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    more = len(lines) > 1
    if len(line) > SUBJECT_CHARS:
        return line[: SUBJECT_CHARS - 1] + "…"
    return line + (" …" if more else "")
