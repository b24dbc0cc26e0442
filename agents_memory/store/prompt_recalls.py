"""What memory gave each session unasked (migration 0016): the session-start brief's turns and
each prompt's recalled memories, all their SQL.

A row never holds a prompt's text, only :func:`prompt_hash` of it. Rows older than
:data:`KEEP_DAYS` are deleted as new ones are written, so the table stays small.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row

KEEP_DAYS = 30
GIVEN_ROWS = 500
"""A session's given memories are read from at most its newest this many rows."""
SHOWN_MAX = 20

Kind = Literal["brief", "prompt"]


def prompt_hash(prompt: str) -> str:
    """A short hash of a prompt: tells two prompts apart, never shows one."""
    return hashlib.sha256(prompt.encode("utf-8", "replace")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Given:
    """One recorded recall: a brief, or a prompt that got memories (or why not)."""

    kind: Kind
    agent_platform: str
    session_id: str | None
    outcome: str
    memory_ids: Sequence[int]
    best: float | None
    git_root: str | None
    created_at: datetime


def record_given(
    conn: psycopg.Connection[Any],
    user_id: int,
    platform: str,
    session_id: str | None,
    *,
    kind: Kind,
    outcome: str,
    memory_ids: Sequence[int],
    best: float | None = None,
    prompt: str | None = None,
    git_root: str | None = None,
) -> None:
    """Record what ``kind`` gave the session (no commit)."""
    conn.execute(
        "DELETE FROM prompt_recalls WHERE user_id = %s AND created_at < now() - make_interval("
        "days => %s)",
        (user_id, KEEP_DAYS),
    )
    conn.execute(
        "INSERT INTO prompt_recalls (user_id, agent_platform, session_id, kind, outcome,"
        " memory_ids, best, prompt_hash, git_root) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            user_id,
            platform,
            session_id,
            kind,
            outcome,
            list(memory_ids),
            best,
            prompt_hash(prompt) if prompt is not None else None,
            git_root,
        ),
    )


def given_ids(
    conn: psycopg.Connection[Any], user_id: int, platform: str, session_id: str
) -> set[int]:
    """Every memory the brief or an earlier prompt gave this session."""
    rows = conn.execute(
        "SELECT DISTINCT unnest(memory_ids) FROM (SELECT memory_ids FROM prompt_recalls"
        " WHERE user_id = %s AND agent_platform = %s AND session_id = %s"
        " ORDER BY created_at DESC LIMIT %s) r",
        (user_id, platform, session_id, GIVEN_ROWS),
    ).fetchall()
    return {int(r[0]) for r in rows}


@dataclass(frozen=True, slots=True)
class PromptDay:
    """Prompts recalled for since a time: how many, how many got memories, the newest of
    those (at most :data:`SHOWN_MAX`)."""

    prompts: int
    added: int
    recent: list[Given]


def prompts_since(
    conn: psycopg.Connection[Any], user_id: int, since: datetime, *, shown: int = 5
) -> PromptDay:
    """The prompts recalled for since ``since`` and the newest ``shown`` that got memories."""
    row = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE outcome = 'added') FROM prompt_recalls"
        " WHERE user_id = %s AND kind = 'prompt' AND created_at >= %s",
        (user_id, since),
    ).fetchone()
    with conn.cursor(row_factory=class_row(Given)) as cur:
        cur.execute(
            "SELECT kind, agent_platform, session_id, outcome, memory_ids, best, git_root,"
            " created_at FROM prompt_recalls WHERE user_id = %s AND kind = 'prompt'"
            " AND outcome = 'added' AND created_at >= %s ORDER BY created_at DESC LIMIT %s",
            (user_id, since, max(0, min(shown, SHOWN_MAX))),
        )
        recent = cur.fetchall()
    prompts, added = (int(row[0]), int(row[1])) if row else (0, 0)
    return PromptDay(prompts, added, recent)


def memory_previews(
    conn: psycopg.Connection[Any], user_id: int, ids: Sequence[int], chars: int
) -> dict[int, str]:
    """The first ``chars`` characters (whitespace folded) of each live memory of ``ids``; a
    forgotten or archived one is left out."""
    rows = conn.execute(
        "SELECT id, left(regexp_replace(message, '\\s+', ' ', 'g'), %s) FROM memory"
        " WHERE user_id = %s AND id = ANY(%s) AND is_active",
        (chars, user_id, list(ids)),
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}
