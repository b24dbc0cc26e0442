"""Project tags: canonical resolution, git identity, the tagger's claims and writes, and the
two suggestion queues (new tags, aliases) that a person decides.

Nothing here creates a project tag on a model's say-so: :func:`create_project_tag` is called
for a git repository no tag owns (a deterministic identity, by the tagger), when a person
confirms a suggestion, or edits tags by hand. Read paths group by
``canonical_project_tag_id`` (un-aliasing never rewrites history).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row

from agents_memory.errors import TagEditError

TAGGER_ERROR_PREFIX = "tagger: "
TAG_RETRY_MINUTES = 5
TAG_MAX_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class ProjectTag:
    id: int
    name: str
    alias_of: int | None
    canonical_id: int
    kind: str | None
    paused: bool
    git_root: str | None
    git_remote: str | None
    created_at: datetime
    description: str | None = None


_TAG_COLUMNS = (
    "id, name, alias_of, canonical_project_tag_id(id) AS canonical_id, kind, paused,"
    " git_root, git_remote, created_at, description"
)


def remote_key(url: str | None) -> str | None:
    """A comparable form of a git remote: ``git@github.com:a/b.git`` and
    ``https://github.com/a/b`` give the same ``github.com/a/b``."""
    if not url:
        return None
    text = url.strip()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.IGNORECASE)
    text = re.sub(r"^[^/@]*@", "", text)
    if ":" in text.split("/", 1)[0]:
        host, _, rest = text.partition(":")
        text = host + "/" + rest.lstrip("/") if not rest.isdigit() else host
    text = re.sub(r"\.git/?$", "", text).rstrip("/")
    host, _, path = text.partition("/")
    return f"{host.lower()}/{path}" if path else host.lower()


# --- project tags ---------------------------------------------------------------------------


def list_project_tags(conn: psycopg.Connection[Any]) -> list[ProjectTag]:
    with conn.cursor(row_factory=class_row(ProjectTag)) as cur:
        cur.execute(f"SELECT {_TAG_COLUMNS} FROM project_tags ORDER BY id")
        return cur.fetchall()


def tag_by_name(conn: psycopg.Connection[Any], name: str) -> ProjectTag | None:
    with conn.cursor(row_factory=class_row(ProjectTag)) as cur:
        cur.execute(
            f"SELECT {_TAG_COLUMNS} FROM project_tags WHERE name = %s", (name.strip().lower(),)
        )
        return cur.fetchone()


def set_registry(
    conn: psycopg.Connection[Any],
    tag_id: int,
    *,
    kind: str | None,
    paused: bool,
    description: str | None,
) -> None:
    """Write a tag's registry fields (the caller passes every field, changed or not)."""
    conn.execute(
        "UPDATE project_tags SET kind = %s, paused = %s, description = %s WHERE id = %s",
        (kind, paused, description, tag_id),
    )


def paused_project_tags(conn: psycopg.Connection[Any]) -> list[ProjectTag]:
    """The tags whose project (their canonical tag) is paused: the project and its aliases."""
    with conn.cursor(row_factory=class_row(ProjectTag)) as cur:
        cur.execute(
            f"SELECT {_TAG_COLUMNS} FROM project_tags t WHERE EXISTS (SELECT 1 FROM"
            " project_tags c WHERE c.id = canonical_project_tag_id(t.id) AND c.paused)"
            " ORDER BY id"
        )
        return cur.fetchall()


def tag_row_counts(conn: psycopg.Connection[Any]) -> dict[int, int]:
    """Active rows filed directly under each tag."""
    rows = conn.execute(
        "SELECT p_tag_id, count(*) FROM memory WHERE p_tag_id IS NOT NULL AND is_active"
        " GROUP BY p_tag_id"
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}


def find_tag_for_git(
    tags: Sequence[ProjectTag], git_root: str | None, git_remote: str | None
) -> int | None:
    """The canonical id of the tag that owns this repository: a remote match wins over a root
    match (a clone elsewhere is the same project); the oldest tag wins ties."""
    key = remote_key(git_remote)
    if key:
        for tag in tags:
            if remote_key(tag.git_remote) == key:
                return tag.canonical_id
    if git_root:
        for tag in tags:
            if tag.git_root == git_root:
                return tag.canonical_id
    return None


def create_project_tag(
    conn: psycopg.Connection[Any],
    name: str,
    *,
    git_root: str | None = None,
    git_remote: str | None = None,
    description: str | None = None,
) -> int:
    """Create the tag, or attach the git identity to an existing tag of that name."""
    row = conn.execute(
        "INSERT INTO project_tags (name, git_root, git_remote, description)"
        " VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (name) DO UPDATE SET"
        "   git_root = coalesce(project_tags.git_root, EXCLUDED.git_root),"
        "   git_remote = coalesce(project_tags.git_remote, EXCLUDED.git_remote),"
        "   description = coalesce(project_tags.description, EXCLUDED.description)"
        " RETURNING id",
        (name.strip().lower(), git_root, git_remote, description),
    ).fetchone()
    assert row is not None
    return int(row[0])


def set_alias(conn: psycopg.Connection[Any], source_id: int, target_id: int) -> None:
    """``source`` becomes an alias of ``target``; refuses a cycle."""
    if source_id == target_id:
        raise TagEditError("that alias would make a cycle (a tag cannot be its own alias)")
    locked = conn.execute(
        "SELECT id FROM project_tags WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
        ([source_id, target_id],),
    ).fetchall()
    if len(locked) != 2:
        raise TagEditError("unknown project tag")
    row = conn.execute("SELECT canonical_project_tag_id(%s)", (target_id,)).fetchone()
    assert row is not None
    if int(row[0]) == source_id or source_id == target_id:
        raise TagEditError("that alias would make a cycle")
    conn.execute("UPDATE project_tags SET alias_of = %s WHERE id = %s", (target_id, source_id))


def clear_alias(conn: psycopg.Connection[Any], tag_id: int) -> None:
    conn.execute("UPDATE project_tags SET alias_of = NULL WHERE id = %s", (tag_id,))


def tagger_candidates(
    conn: psycopg.Connection[Any], *, limit: int, strategy: str
) -> tuple[list[ProjectTag], bool]:
    """Root tags the tagger offers the model, and whether registry mode is on (some tag has
    a ``kind``: then the whole registry, up to 60, is the candidate list)."""
    registry = conn.execute("SELECT EXISTS (SELECT 1 FROM project_tags WHERE kind IS NOT NULL)")
    is_registry = bool(registry.fetchone()[0])  # type: ignore[index]
    with conn.cursor(row_factory=class_row(ProjectTag)) as cur:
        if is_registry:
            cur.execute(
                f"SELECT {_TAG_COLUMNS} FROM project_tags WHERE kind IS NOT NULL"
                " AND alias_of IS NULL ORDER BY id LIMIT 60"
            )
        elif strategy == "frequent":
            cur.execute(
                f"SELECT {_TAG_COLUMNS} FROM project_tags t LEFT JOIN ("
                "  SELECT canonical_project_tag_id(p_tag_id) AS root, count(*) AS n FROM memory"
                "  WHERE p_tag_id IS NOT NULL AND message_at > now() - interval '90 days'"
                "  GROUP BY 1) u ON u.root = t.id"
                " WHERE t.alias_of IS NULL ORDER BY coalesce(u.n, 0) DESC, t.id LIMIT %s",
                (limit,),
            )
        else:
            cur.execute(
                f"SELECT {_TAG_COLUMNS} FROM project_tags WHERE alias_of IS NULL"
                " ORDER BY id LIMIT %s",
                (limit,),
            )
        return cur.fetchall(), is_registry


# --- the tagger's rows ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TagRow:
    id: int
    role: str
    message: str
    git_root: str | None
    git_remote: str | None
    cwd: str | None = None


def claim_untagged(conn: psycopg.Connection[Any], user_id: int, limit: int) -> list[TagRow]:
    """Lock up to ``limit`` rows the tagger has not processed (active first, oldest first);
    rows another worker holds are skipped, rows that failed recently wait their turn."""
    with conn.cursor(row_factory=class_row(TagRow)) as cur:
        cur.execute(
            "SELECT id, role, left(message, 6000) AS message, git_root, git_remote, cwd FROM memory"
            " WHERE user_id = %s AND NOT tag_processed"
            "   AND (cold_next_at IS NULL OR cold_next_at <= now())"
            " ORDER BY is_active DESC, id LIMIT %s FOR UPDATE SKIP LOCKED",
            (user_id, limit),
        )
        return cur.fetchall()


def tag_row(conn: psycopg.Connection[Any], memory_id: int) -> TagRow | None:
    """What the tagger reads of one row."""
    with conn.cursor(row_factory=class_row(TagRow)) as cur:
        cur.execute(
            "SELECT id, role, left(message, 6000) AS message, git_root, git_remote FROM memory"
            " WHERE id = %s",
            (memory_id,),
        )
        return cur.fetchone()


def write_tags(
    conn: psycopg.Connection[Any],
    memory_id: int,
    p_tag_id: int | None,
    d_tags: Sequence[str],
    *,
    processed: bool = True,
) -> None:
    """Write a row's tags; ``processed`` false leaves it for the tagger to refine."""
    conn.execute(
        "UPDATE memory SET p_tag_id = %s, d_tag = %s, tag_processed = %s,"
        " cold_error = CASE WHEN starts_with(cold_error, %s) THEN NULL ELSE cold_error END,"
        " cold_next_at = CASE WHEN starts_with(cold_error, %s) THEN NULL ELSE cold_next_at END"
        " WHERE id = %s",
        (p_tag_id, list(d_tags), processed, TAGGER_ERROR_PREFIX, TAGGER_ERROR_PREFIX, memory_id),
    )


def record_tag_error(conn: psycopg.Connection[Any], memory_id: int, error: str) -> None:
    """Keep the error and wait out the cooldown (5 minutes, an hour for archived rows); after
    :data:`TAG_MAX_ATTEMPTS` the row is left untagged for good."""
    conn.execute(
        "UPDATE memory SET cold_error = %s, cold_attempts = cold_attempts + 1,"
        " cold_next_at = now() + CASE WHEN is_active THEN make_interval(mins => %s)"
        "   ELSE interval '1 hour' END,"
        " tag_processed = (cold_attempts + 1 >= %s) WHERE id = %s",
        ((TAGGER_ERROR_PREFIX + error)[:1000], TAG_RETRY_MINUTES, TAG_MAX_ATTEMPTS, memory_id),
    )


def retro_tag_git(
    conn: psycopg.Connection[Any], tag_id: int, git_root: str | None, git_remote: str | None
) -> int:
    """File untagged rows of this repository (by root or an equivalent remote) under the tag."""
    remotes: list[str] = []
    key = remote_key(git_remote)
    if key:
        remotes = [
            str(r[0])
            for r in conn.execute(
                "SELECT DISTINCT git_remote FROM memory WHERE git_remote IS NOT NULL"
            ).fetchall()
            if remote_key(str(r[0])) == key
        ]
    cur = conn.execute(
        "UPDATE memory SET p_tag_id = %s WHERE p_tag_id IS NULL"
        " AND (git_root = %s OR git_remote = ANY(%s))",
        (tag_id, git_root, remotes),
    )
    return cur.rowcount


def retro_tag_dtag(
    conn: psycopg.Connection[Any], tag_id: int, name: str, *, user_id: int | None = None
) -> int:
    """File tagged-but-unfiled rows without a git identity that carry exactly ``name`` as a
    d_tag (the JS original: exact name only; cluster members were wrong too often)."""
    cur = conn.execute(
        "UPDATE memory SET p_tag_id = %s WHERE p_tag_id IS NULL AND tag_processed"
        " AND git_root IS NULL AND git_remote IS NULL AND d_tag @> ARRAY[%s]::text[]"
        " AND (%s::bigint IS NULL OR user_id = %s)",
        (tag_id, name, user_id, user_id),
    )
    return cur.rowcount


# --- new-tag suggestions --------------------------------------------------------------------

Recommendation = Literal["project", "generic", "unsure"]
