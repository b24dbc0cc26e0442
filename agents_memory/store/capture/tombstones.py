"""Tombstones: the turns that must never be stored again (forgotten by the owner, or written
while capture was paused). A tombstone holds the turn's stable key (``external_uuid``) and the
SHA-256 of its stored text, never the text itself.

Capture asks :func:`forgotten_among` once per batch (one indexed query for all the batch's
keys) and admission refuses the turns it returns. A key is a turn's only within its session
(:mod:`agents_memory.store.identity`), so a tombstone also keeps the session and role it
buried, and refuses an incoming turn only when they match (or under the turn's scoped key).
Tombstones written before migration 0014 have neither and match by key alone. In a team a
tombstone is one person's (migration 0023): it refuses that person's capture only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import psycopg

from agents_memory.store.capture import MINE
from agents_memory.store.identity import scoped_key

TombstoneReason = Literal["forgotten", "paused"]

_CONTENT_SHA256_SQL = "encode(sha256(convert_to({column}, 'UTF8')), 'hex')"
"""The SQL expression of a stored text's hash (the same as :func:`content_sha256`)."""


def content_sha256(text: str) -> str:
    """The hash a tombstone keeps of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


TurnKey = tuple[str, str, str | None, str]
"""A turn as a tombstone matches it: ``(key, platform, session_id, role)``."""


def forgotten_among(conn: psycopg.Connection[Any], turns: Iterable[TurnKey]) -> frozenset[TurnKey]:
    """Which of ``turns`` have a tombstone: under their key with their session and role (or
    none recorded), or under their scoped key (one query for the whole batch)."""
    wanted = sorted({turn for turn in turns if turn[0]}, key=repr)
    if not wanted:
        return frozenset()
    keys = [turn[0] for turn in wanted]
    sessions = [turn[2] for turn in wanted]
    roles = [turn[3] for turn in wanted]
    scoped = [scoped_key(*turn) for turn in wanted]
    rows = conn.execute(
        "SELECT i.n FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[])"
        "   WITH ORDINALITY AS i(k, sk, s, r, n)"
        " WHERE EXISTS (SELECT 1 FROM tombstones t WHERE t.external_uuid = i.sk"
        f"      AND t.user_id {MINE})"
        "    OR EXISTS (SELECT 1 FROM tombstones t WHERE t.external_uuid = i.k"
        f"      AND t.user_id {MINE} AND (t.role IS NULL"
        "       OR (t.role = i.r AND t.session_id IS NOT DISTINCT FROM i.s)))",
        (keys, scoped, sessions, roles),
    ).fetchall()
    return frozenset(wanted[int(row[0]) - 1] for row in rows)


def bury_memories(conn: psycopg.Connection[Any], ids: Sequence[int]) -> int:
    """A ``forgotten`` tombstone for each memory row of ``ids`` (their key and text hash),
    before the rows go; returns how many were recorded (a key buried before counts once).
    The tombstone is the row's person's when that person is a team member (it stops their
    capture only), else the schema owner's (a single person's set-up)."""
    if not ids:
        return 0
    digest = _CONTENT_SHA256_SQL.format(column="message")
    cur = conn.execute(
        "INSERT INTO tombstones"
        " (external_uuid, content_sha256, agent_platform, reason, session_id, role, user_id)"
        f" SELECT external_uuid, {digest}, agent_platform, 'forgotten', session_id, role,"
        "  (SELECT p.user_id FROM team_members p WHERE p.user_id = m.user_id)"
        " FROM memory m WHERE id = ANY(%s)"
        " ON CONFLICT (external_uuid, user_id) WHERE external_uuid IS NOT NULL DO NOTHING",
        (list(ids),),
    )
    return cur.rowcount


def bury_paused(conn: psycopg.Connection[Any], turns: Iterable[tuple[TurnKey, str]]) -> int:
    """A ``paused`` tombstone for each ``(turn, text)`` not stored already: a turn written
    while capture was paused is never captured later, even by a rescan. Where another turn's
    tombstone holds the key, the turn is buried under its scoped key."""
    values = [
        (turn[0], scoped_key(*turn), content_sha256(text), turn[1], turn[2], turn[3])
        for turn, text in turns
        if turn[0]
    ]
    if not values:
        return 0
    columns = [list(column) for column in zip(*values, strict=True)]
    cur = conn.execute(
        "INSERT INTO tombstones"
        " (external_uuid, content_sha256, agent_platform, reason, session_id, role)"
        " SELECT CASE WHEN EXISTS (SELECT 1 FROM tombstones o WHERE o.external_uuid = t.k"
        f"     AND o.user_id {MINE} AND o.role IS NOT NULL"
        "     AND (o.role <> t.r OR o.session_id IS DISTINCT FROM t.s))"
        "   THEN t.sk ELSE t.k END, t.d, t.p, 'paused', t.s, t.r"
        " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])"
        "   AS t(k, sk, d, p, s, r)"
        " WHERE NOT EXISTS (SELECT 1 FROM memory m WHERE m.external_uuid IN (t.k, t.sk)"
        "   AND m.role = t.r AND m.session_id IS NOT DISTINCT FROM t.s"
        "   AND m.user_id = coalesce((SELECT am_me()), m.user_id))"
        " ON CONFLICT (external_uuid, user_id) WHERE external_uuid IS NOT NULL DO NOTHING",
        columns,
    )
    return cur.rowcount
