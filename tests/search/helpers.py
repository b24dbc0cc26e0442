"""Synthetic rows and synthetic unit vectors for the search tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from agents_memory.store.search import (
    SearchFilters,
    SearchResult,
    SearchTuning,
    search_memories,
)
from agents_memory.store.search.memories import VectorSource

DIM = 384
NOW = datetime.now(UTC)


def unit(*components: tuple[int, float]) -> np.ndarray[Any, Any]:
    """A unit vector with the given (axis, weight) components."""
    vec = np.zeros(DIM, dtype=np.float32)
    for axis, weight in components:
        vec[axis] = weight
    return vec / np.linalg.norm(vec)


def near(axis: int, closeness: float, noise_axis: int) -> np.ndarray[Any, Any]:
    """A unit vector whose cosine with ``unit((axis, 1))`` is ``closeness``."""
    return unit((axis, closeness), (noise_axis, float(np.sqrt(1 - closeness**2))))


def add(
    conn: psycopg.Connection[Any],
    rows: Sequence[NewMemory],
    vectors: Sequence[np.ndarray[Any, Any] | None] | None = None,
    *,
    user: str = "tester",
) -> list[int]:
    """Insert ``rows`` (in order) and their vectors; returns their ids."""
    uid = ensure_user(conn, user)
    counts = insert_memories(conn, uid, rows, has_vector=vectors is not None)
    by_uuid = dict(
        conn.execute(
            "SELECT external_uuid, id FROM memory WHERE external_uuid = ANY(%s)",
            ([r.external_uuid for r in rows],),
        ).fetchall()
    )
    ids = [int(by_uuid[r.external_uuid]) for r in rows]
    assert len(counts.ids) == len(rows)
    if vectors is not None:
        pairs = [(i, v) for i, v in zip(ids, vectors, strict=True) if v is not None]
        conn.execute(
            "UPDATE memory m SET embedding = v.e::halfvec FROM unnest(%s::bigint[], %s::text[])"
            " AS v(id, e) WHERE m.id = v.id",
            ([i for i, _ in pairs], [_literal(v) for _, v in pairs]),
        )
    conn.commit()
    return ids


def _literal(vec: np.ndarray[Any, Any]) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vec.tolist()) + "]"


_seq = iter(range(1, 10**9))


def mem(
    message: str,
    *,
    platform: str = "claude-code",
    role: str = "user",
    age_days: float = 1.0,
    device: str | None = "test-device",
    pinned: bool = False,
    session: str | None = None,
    at: datetime | None = None,
) -> NewMemory:
    return NewMemory(
        agent_platform=platform,
        role="user" if role == "user" else "assistant",
        message=message,
        external_uuid=f"u{next(_seq)}",
        message_at=at or NOW - timedelta(days=age_days),
        session_id=session,
        device_name=device,
        is_pinned=pinned,
    )


def run(
    conn: psycopg.Connection[Any],
    query: str | None,
    vector: VectorSource = None,
    *,
    user: str = "tester",
    tuning: SearchTuning | None = None,
    **filters: Any,
) -> SearchResult:
    uid = ensure_user(conn, user)
    return search_memories(
        conn,
        uid,
        query=query,
        query_vector=vector,
        filters=SearchFilters(**filters),
        tuning=tuning or SearchTuning(),
    )


def messages(result: SearchResult) -> list[str]:
    return [h.message for h in result.hits]
