"""Tombstones: the turns that must never be stored again (forgotten by the owner, or written
while capture was paused). A tombstone holds the turn's stable key (``external_uuid``) and the
SHA-256 of its stored text, never the text itself.

Capture asks :func:`forgotten_among` once per batch (one indexed query for all the batch's
keys) and admission refuses the keys it returns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

TombstoneReason = Literal["forgotten", "paused"]

CONTENT_SHA256_SQL = "encode(sha256(convert_to({column}, 'UTF8')), 'hex')"
"""The SQL expression of a stored text's hash (the same as :func:`content_sha256`)."""


def content_sha256(text: str) -> str:
    """The hash a tombstone keeps of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class TombstoneCounts:
    forgotten: int
    paused: int


def forgotten_among(conn: psycopg.Connection[Any], keys: Sequence[str | None]) -> frozenset[str]:
    """Which of ``keys`` have a tombstone (one query for the whole batch)."""
    wanted = sorted({key for key in keys if key})
    if not wanted:
        return frozenset()
    rows = conn.execute(
        "SELECT external_uuid FROM tombstones WHERE external_uuid = ANY(%s)", (wanted,)
    ).fetchall()
    return frozenset(str(row[0]) for row in rows)


def bury_memories(conn: psycopg.Connection[Any], ids: Sequence[int]) -> int:
    """A ``forgotten`` tombstone for each memory row of ``ids`` (their key and text hash),
    before the rows go; returns how many were recorded (a key buried before counts once)."""
    if not ids:
        return 0
    digest = CONTENT_SHA256_SQL.format(column="message")
    cur = conn.execute(
        "INSERT INTO tombstones (external_uuid, content_sha256, agent_platform, reason)"
        f" SELECT external_uuid, {digest}, agent_platform, 'forgotten'"
        " FROM memory WHERE id = ANY(%s)"
        " ON CONFLICT (external_uuid) WHERE external_uuid IS NOT NULL DO NOTHING",
        (list(ids),),
    )
    return cur.rowcount


def bury_paused(conn: psycopg.Connection[Any], turns: Iterable[tuple[str, str, str]]) -> int:
    """A ``paused`` tombstone for each ``(key, platform, text)`` not stored already: a turn
    written while capture was paused is never captured later, even by a rescan."""
    values = [(key, content_sha256(text), platform) for key, platform, text in turns if key]
    if not values:
        return 0
    keys, digests, platforms = (list(column) for column in zip(*values, strict=True))
    cur = conn.execute(
        "INSERT INTO tombstones (external_uuid, content_sha256, agent_platform, reason)"
        " SELECT k, d, p, 'paused' FROM unnest(%s::text[], %s::text[], %s::text[]) AS t(k, d, p)"
        " WHERE NOT EXISTS (SELECT 1 FROM memory m WHERE m.external_uuid = t.k)"
        " ON CONFLICT (external_uuid) WHERE external_uuid IS NOT NULL DO NOTHING",
        (keys, digests, platforms),
    )
    return cur.rowcount


def count_tombstones(conn: psycopg.Connection[Any]) -> TombstoneCounts:
    row = conn.execute(
        "SELECT count(*) FILTER (WHERE reason = 'forgotten'),"
        " count(*) FILTER (WHERE reason = 'paused') FROM tombstones"
    ).fetchone()
    assert row is not None
    return TombstoneCounts(int(row[0]), int(row[1]))
