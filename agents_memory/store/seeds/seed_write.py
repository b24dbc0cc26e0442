"""Writes of a seed import (``import --from seed-a|seed-b``) that the ordinary memory insert
does not cover: the imported rows' own state (tags, archive, vectors, times), project tags with
their registry fields and aliases, and the two suggestion queues.

Memory rows themselves go in through :func:`agents_memory.store.memories.insert_memories`
(admitted text, idempotent on ``external_uuid``); :func:`apply_imported_state` then gives the
rows just inserted what the source knew about them. The caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.types.json import Jsonb

from agents_memory.store.memories import twin_text
from agents_memory.store.session_summaries import (
    NewSessionSummary,
    SessionState,
    add_session_summary,
)


@dataclass(frozen=True, slots=True)
class ImportedState:
    """What the source knew about a memory beyond its text, keyed by ``external_uuid``."""

    external_uuid: str
    p_tag_id: int | None
    d_tag: list[str]
    is_active: bool
    archived_at: datetime | None
    tag_processed: bool
    created_at: datetime | None
    embedding: str | None = None
    """A vector as pgvector text (``[0.1,…]``), kept only when its model is this pool's."""
    embedding_model: str | None = None


def present_keys(conn: psycopg.Connection[Any], keys: Sequence[str]) -> dict[str, str]:
    """Of ``keys``, those already in the pool, with their stored text."""
    rows = conn.execute(
        "SELECT external_uuid, message FROM memory WHERE external_uuid = ANY(%s)", (list(keys),)
    ).fetchall()
    return {str(k): str(m) for k, m in rows}


def captured_twins(
    conn: psycopg.Connection[Any], user_id: int, turns: Sequence[tuple[str, str, str, str]]
) -> set[int]:
    """Of ``turns`` (platform, session, role, text), the indexes of those ``user_id``'s pool
    already holds as captured rows of the same platform, session and role with the same text
    (runs of whitespace and the ends aside)."""
    if not turns:
        return set()
    platforms, sessions, roles, texts = (list(column) for column in zip(*turns, strict=True))
    rows = conn.execute(
        "WITH t AS MATERIALIZED (SELECT platform, session, role, i,"
        f"  {twin_text('message')} AS text"
        "  FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[])"
        "  WITH ORDINALITY AS u(platform, session, role, message, i)),"
        # each session of the batch read once (its index), its texts normalised once
        " here AS MATERIALIZED (SELECT m.agent_platform, m.session_id, m.role,"
        f"  {twin_text('m.message')} AS text FROM memory m"
        "  WHERE (m.agent_platform, m.session_id) IN (SELECT DISTINCT platform, session FROM t)"
        "  AND m.user_id = %s AND m.source = 'capture')"
        " SELECT DISTINCT t.i - 1 FROM t JOIN here h ON h.agent_platform = t.platform"
        "  AND h.session_id = t.session AND h.role = t.role AND h.text = t.text",
        (platforms, sessions, roles, texts, user_id),
    ).fetchall()
    return {int(r[0]) for r in rows}


def ids_by_key(conn: psycopg.Connection[Any], keys: Sequence[str]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT external_uuid, id FROM memory WHERE external_uuid = ANY(%s)", (list(keys),)
    ).fetchall()
    return {str(k): int(i) for k, i in rows}


def apply_imported_state(
    conn: psycopg.Connection[Any], states: Sequence[ImportedState], *, has_vector: bool
) -> None:
    """Give the rows named by ``states`` their source state in one statement. ``created_at``
    ``None`` keeps the insert's time; a vector is written only when the pool has the column."""
    if not states:
        return
    vector = (
        ", embedding = CASE WHEN s.embedding IS NULL THEN m.embedding"
        " ELSE s.embedding::halfvec END,"
        " embedding_model = coalesce(s.embedding_model, m.embedding_model)"
        if has_vector
        else ""
    )
    conn.execute(
        "UPDATE memory m SET p_tag_id = s.p_tag_id, d_tag = s.d_tag, is_active = s.is_active,"
        " archived_at = s.archived_at, tag_processed = s.tag_processed,"
        " created_at = coalesce(s.created_at, m.created_at)"
        + vector
        + " FROM jsonb_to_recordset(%s)"
        " AS s(external_uuid text, p_tag_id bigint, d_tag text[], is_active boolean,"
        "      archived_at timestamptz, tag_processed boolean, created_at timestamptz,"
        "      embedding text, embedding_model text)"
        " WHERE m.external_uuid = s.external_uuid",
        (Jsonb([_jsonable(asdict(s)) for s in states]),),
    )


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in values.items()}


# --- project tags ---------------------------------------------------------------------------


def import_tag(
    conn: psycopg.Connection[Any],
    name: str,
    *,
    description: str | None,
    kind: str | None,
    paused: bool,
) -> tuple[int, bool]:
    """The id of tag ``name`` and whether it was created now. A tag already here keeps its
    own fields; only an empty description or kind is filled from the source."""
    row = conn.execute(
        "INSERT INTO project_tags (name, description, kind, paused) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (name) DO UPDATE SET"
        "   description = coalesce(project_tags.description, EXCLUDED.description),"
        "   kind = coalesce(project_tags.kind, EXCLUDED.kind)"
        " RETURNING id, (xmax = 0)",
        (name, description, kind, paused),
    ).fetchone()
    assert row is not None
    return int(row[0]), bool(row[1])


def tag_alias(conn: psycopg.Connection[Any], tag_id: int) -> int | None:
    row = conn.execute("SELECT alias_of FROM project_tags WHERE id = %s", (tag_id,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


@dataclass(frozen=True, slots=True)
class AliasSuggestionRow:
    """An alias suggestion with its tag and memory ids already in this pool's numbering."""

    source_tag_id: int
    target_tag_id: int
    relation: str
    status: str
    confidence: float | None
    candidate_sources: list[str]
    evidence_memory_ids: list[int]
    conflict_memory_ids: list[int]
    signals: Any
    model_provider: str | None
    model_name: str | None
    rationale: str | None
    auto_apply_eligible: bool
    decided_by: str | None
    decision_reason: str | None
    decided_at: datetime | None
    applied_at: datetime | None
    created_at: datetime


def import_alias_suggestion(
    conn: psycopg.Connection[Any], user_id: int, row: AliasSuggestionRow
) -> bool:
    """Insert the suggestion unless the same one (pair, status, time) is here, or another is
    pending for the pair. True when inserted."""
    cur = conn.execute(
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        "  relation, status, confidence, candidate_sources, evidence_memory_ids,"
        "  conflict_memory_ids, signals, model_provider, model_name, rationale,"
        "  auto_apply_eligible, decided_by, decision_reason, decided_at, applied_at, created_at)"
        " SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
        " WHERE NOT EXISTS (SELECT 1 FROM project_tag_alias_suggestions WHERE user_id = %s"
        "   AND source_tag_id = %s AND target_tag_id = %s AND status = %s AND created_at = %s)"
        " ON CONFLICT DO NOTHING",
        (
            user_id,
            row.source_tag_id,
            row.target_tag_id,
            row.relation,
            row.status,
            row.confidence,
            row.candidate_sources,
            row.evidence_memory_ids,
            row.conflict_memory_ids,
            Jsonb(row.signals if row.signals is not None else {}),
            row.model_provider,
            row.model_name,
            row.rationale,
            row.auto_apply_eligible,
            row.decided_by,
            row.decision_reason,
            row.decided_at,
            row.applied_at,
            row.created_at,
            user_id,
            row.source_tag_id,
            row.target_tag_id,
            row.status,
            row.created_at,
        ),
    )
    return cur.rowcount == 1


@dataclass(frozen=True, slots=True)
class NewSuggestionRow:
    name: str
    members: list[str]
    uses: int
    status: str
    recommendation: str | None
    rationale: str | None
    model_provider: str | None
    model_name: str | None
    project_tag_id: int | None
    retrotagged: int
    decided_by: str | None
    decision_reason: str | None
    decided_at: datetime | None
    last_seen_at: datetime | None
    created_at: datetime


def import_new_suggestion(
    conn: psycopg.Connection[Any], user_id: int, row: NewSuggestionRow
) -> bool:
    """Insert the new-tag suggestion unless one for its name is here (one per name forever).
    True when inserted."""
    cur = conn.execute(
        "INSERT INTO project_tag_new_suggestions (user_id, name, members, uses, status,"
        "  recommendation, rationale, model_provider, model_name, project_tag_id, retrotagged,"
        "  decided_by, decision_reason, decided_at, last_seen_at, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        "  coalesce(%s, now()), %s)"
        " ON CONFLICT (user_id, name) DO NOTHING",
        (
            user_id,
            row.name,
            row.members,
            row.uses,
            row.status,
            row.recommendation,
            row.rationale,
            row.model_provider,
            row.model_name,
            row.project_tag_id,
            row.retrotagged,
            row.decided_by,
            row.decision_reason,
            row.decided_at,
            row.last_seen_at,
            row.created_at,
        ),
    )
    return cur.rowcount == 1


@dataclass(frozen=True, slots=True)
class FactSlotRow:
    """An imported fact's place in its slot: ``successor`` the row that superseded it
    (``None``: it is the slot's value, live or expired)."""

    memory_id: int
    slot: str
    expires_at: datetime | None
    successor: int | None
    superseded_at: datetime | None


def fill_fact_slots(conn: psycopg.Connection[Any], rows: Sequence[FactSlotRow]) -> list[int]:
    """Put imported facts in their slots (only rows in no slot yet, so a second import changes
    nothing): superseded and expired values as history, a live one as the slot's value unless
    this pool fills the slot with another live value (which stays). Returns the ids of the
    live values left out of their slot for that reason."""
    if not rows:
        return []
    data = Jsonb(
        [
            {
                "id": r.memory_id,
                "slot": r.slot,
                "expires_at": r.expires_at.isoformat() if r.expires_at else None,
                "successor": r.successor,
                "at": r.superseded_at.isoformat() if r.superseded_at else None,
            }
            for r in rows
        ]
    )
    recordset = (
        " FROM jsonb_to_recordset(%s::jsonb) AS x(id bigint, slot text, expires_at timestamptz,"
        " successor bigint, at timestamptz)"
    )
    conn.execute(
        "UPDATE memory m SET slot = x.slot, expires_at = x.expires_at,"
        " superseded_by = x.successor, superseded_at = x.at"
        + recordset
        + " WHERE m.id = x.id AND m.slot IS NULL AND NOT m.is_active",
        (data,),
    )
    placed = conn.execute(
        "UPDATE memory m SET slot = x.slot, expires_at = x.expires_at"
        + recordset
        + " WHERE m.id = x.id AND m.slot IS NULL AND m.is_active AND x.successor IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM memory l WHERE l.user_id = m.user_id"
        "   AND l.slot = x.slot AND l.superseded_by IS NULL AND l.is_active AND l.id <> m.id)"
        " RETURNING m.id",
        (data,),
    ).fetchall()
    done = {int(r[0]) for r in placed}
    return [
        r.memory_id
        for r in rows
        if r.successor is None and r.memory_id not in done and _unslotted(conn, r.memory_id)
    ]


def _unslotted(conn: psycopg.Connection[Any], memory_id: int) -> bool:
    row = conn.execute(
        "SELECT slot IS NULL AND is_active FROM memory WHERE id = %s", (memory_id,)
    ).fetchone()
    return bool(row and row[0])


# --- session summaries ---------------------------------------------------------------------


def import_session_summary(
    conn: psycopg.Connection[Any], user_id: int, state: SessionState, written: NewSessionSummary
) -> Literal["new", "present", "conflict"]:
    """Store an imported session summary unless the session has one: ``present`` when it is
    the same text, ``conflict`` when this pool's own differs (it stays). The summary covers
    the session's turns as they are (``state``), so the Cold Path leaves it alone until the
    session changes."""
    if add_session_summary(conn, user_id, state, written) is not None:
        return "new"
    here = conn.execute(
        "SELECT summary FROM session_summaries WHERE user_id = %s AND agent_platform = %s"
        " AND session_id = %s",
        (user_id, state.agent_platform, state.session_id),
    ).fetchone()
    return "present" if here is not None and here[0] == written.summary else "conflict"
