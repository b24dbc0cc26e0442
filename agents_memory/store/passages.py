"""What a row's vector is made of: its text after the end of the turn it follows.

A turn alone often means little to an embedding model ("Yes, last Tuesday!", "That one, go
ahead"): the question or remark it answers says what it is about. So a row that belongs to a
session is embedded with the end of the previous turn of that session (same user, platform
and session, by ``message_at`` then ``id``) before its own text; a row without a session
(knowledge added through ``manage_knowledge``) or the first turn of a session is embedded
alone. The Cold Path embedder and ``reembed`` both use :data:`PREVIOUS_SQL` and
:func:`passage_text`, so every vector follows one rule; queries are embedded as they are.
"""

from __future__ import annotations

from typing import Any

import psycopg

CONTEXT_CHARS = 500
"""How much of the previous turn (its end: where a question usually is) goes before a row's
text."""

PREVIOUS_SQL = (
    "(SELECT p.message FROM memory p WHERE m.session_id IS NOT NULL"
    " AND p.agent_platform = m.agent_platform AND p.session_id = m.session_id"
    " AND p.user_id = m.user_id AND (p.message_at, p.id) < (m.message_at, m.id)"
    " ORDER BY p.message_at DESC, p.id DESC LIMIT 1)"
)
"""Scalar subquery on alias ``m``: the text of the turn before ``m`` in its session, or NULL
(index ``memory_session``)."""


def passage_text(message: str, previous: str | None) -> str:
    """The text embedded for a row: the end of ``previous`` (when there is one), a newline,
    then ``message``."""
    if not previous or not previous.strip():
        return message
    return f"{previous[-CONTEXT_CHARS:]}\n{message}"


def passage_of(conn: psycopg.Connection[Any], memory_id: int) -> str | None:
    """The text to embed for row ``memory_id`` (``None`` when there is no such row)."""
    row = conn.execute(
        "SELECT m.message, " + PREVIOUS_SQL + " FROM memory m WHERE m.id = %s", (memory_id,)
    ).fetchone()
    return None if row is None else passage_text(str(row[0]), row[1])
