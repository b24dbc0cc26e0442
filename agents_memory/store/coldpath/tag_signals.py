"""What the alias and d_tag promoters read: root-tag statistics, their d_tags, vector
centroids, representative rows, explicit rename statements and frequent d_tags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import class_row

from agents_memory.store import meta, vectors


@dataclass(frozen=True, slots=True)
class RootTagStats:
    id: int
    name: str
    created_at: datetime
    rows: int
    """Active rows filed under the tag or any of its aliases."""
    last_at: datetime | None


@dataclass(frozen=True, slots=True)
class SampleRow:
    id: int
    tag_id: int
    role: str
    message: str


def root_tags(conn: psycopg.Connection[Any], limit: int) -> list[RootTagStats]:
    """Canonical root tags, most used first."""
    with conn.cursor(row_factory=class_row(RootTagStats)) as cur:
        cur.execute(
            "SELECT t.id, t.name, t.created_at, coalesce(u.n, 0)::int AS rows, u.last_at"
            " FROM project_tags t LEFT JOIN ("
            "  SELECT canonical_project_tag_id(p_tag_id) AS root, count(*) AS n,"
            "   max(message_at) AS last_at FROM memory"
            "  WHERE p_tag_id IS NOT NULL AND is_active GROUP BY 1) u ON u.root = t.id"
            " WHERE t.alias_of IS NULL ORDER BY coalesce(u.n, 0) DESC, t.id LIMIT %s",
            (limit,),
        )
        return cur.fetchall()


def tag_dtags(
    conn: psycopg.Connection[Any], tag_ids: Sequence[int], per_tag: int = 30
) -> dict[int, set[str]]:
    """The most frequent d_tags of each canonical tag's rows."""
    rows = conn.execute(
        "SELECT root, tag FROM ("
        " SELECT root, tag, row_number() OVER (PARTITION BY root ORDER BY count(*) DESC, tag)"
        "  AS rank FROM (SELECT canonical_project_tag_id(p_tag_id) AS root, unnest(d_tag) AS tag"
        "   FROM memory WHERE p_tag_id IS NOT NULL AND is_active) x"
        " WHERE root = ANY(%s) GROUP BY root, tag) ranked WHERE rank <= %s",
        (list(tag_ids), per_tag),
    ).fetchall()
    found: dict[int, set[str]] = {}
    for root, tag in rows:
        found.setdefault(int(root), set()).add(str(tag))
    return found


def tag_centroids(
    conn: psycopg.Connection[Any], tag_ids: Sequence[int], per_tag: int = 50
) -> dict[int, np.ndarray[Any, Any]]:
    """Unit-length mean embedding of each tag's newest embedded rows (empty without vectors)."""
    if not vectors.vector_status(conn).column_dim or not tag_ids:
        return {}
    rows = conn.execute(
        "SELECT root, avg(embedding::vector)::text FROM ("
        " SELECT canonical_project_tag_id(p_tag_id) AS root, embedding, row_number() OVER ("
        "  PARTITION BY canonical_project_tag_id(p_tag_id) ORDER BY message_at DESC) AS rank"
        " FROM memory WHERE p_tag_id IS NOT NULL AND embedding IS NOT NULL AND is_active) x"
        " WHERE rank <= %s AND root = ANY(%s) GROUP BY root",
        (per_tag, list(tag_ids)),
    ).fetchall()
    found: dict[int, np.ndarray[Any, Any]] = {}
    for root, text in rows:
        vec = np.array([float(x) for x in str(text).strip("[]").split(",")], dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        if norm > 0:
            found[int(root)] = vec / norm
    return found


def sample_rows(
    conn: psycopg.Connection[Any], tag_ids: Sequence[int], per_tag: int = 3, max_chars: int = 300
) -> dict[int, list[SampleRow]]:
    """A few recent rows of each tag, user turns first (what the alias judge reads)."""
    with conn.cursor(row_factory=class_row(SampleRow)) as cur:
        cur.execute(
            "SELECT id, tag_id, role, message FROM ("
            " SELECT id, canonical_project_tag_id(p_tag_id) AS tag_id, role,"
            "  left(message, %s) AS message, row_number() OVER ("
            "   PARTITION BY canonical_project_tag_id(p_tag_id)"
            "   ORDER BY (role = 'user') DESC, message_at DESC) AS rank"
            " FROM memory WHERE p_tag_id IS NOT NULL AND is_active) x"
            " WHERE rank <= %s AND tag_id = ANY(%s) ORDER BY tag_id, rank",
            (max_chars, per_tag, list(tag_ids)),
        )
        found: dict[int, list[SampleRow]] = {}
        for row in cur.fetchall():
            found.setdefault(row.tag_id, []).append(row)
        return found


def rename_statements(
    conn: psycopg.Connection[Any], user_id: int, patterns: Sequence[str], limit: int = 200
) -> list[tuple[int, str]]:
    """The newest user turns that read like a rename or alias statement."""
    rows = conn.execute(
        "SELECT id, left(message, 2000) FROM memory WHERE user_id = %s AND role = 'user'"
        " AND is_active AND message ILIKE ANY(%s) ORDER BY message_at DESC LIMIT %s",
        (user_id, list(patterns), limit),
    ).fetchall()
    return [(int(r[0]), str(r[1])) for r in rows]


def frequent_dtags(
    conn: psycopg.Connection[Any], user_id: int, *, since: datetime, limit: int = 50
) -> list[tuple[str, int]]:
    """d_tags used at least twice on tagged, active rows since ``since``, most used first."""
    rows = conn.execute(
        "SELECT tag, count(*) AS n FROM (SELECT unnest(d_tag) AS tag FROM memory"
        "  WHERE user_id = %s AND tag_processed AND is_active AND message_at >= %s) x"
        " GROUP BY tag HAVING count(*) >= 2 ORDER BY n DESC, tag LIMIT %s",
        (user_id, since, limit),
    ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def stamp(conn: psycopg.Connection[Any], key: str) -> datetime | None:
    """A moment kept in ``meta`` (a job's last run)."""
    value = meta.get(conn, key)
    return datetime.fromisoformat(value) if value is not None else None


def set_stamp(conn: psycopg.Connection[Any], key: str, at: datetime) -> None:
    meta.put(conn, key, at.isoformat())
