"""Tag suggestion queues: new project tags and alias merges waiting for a person's decision."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from agents_memory.store.tags import Recommendation, remote_key


@dataclass(frozen=True, slots=True)
class NewTagSuggestion:
    id: int
    name: str
    members: list[str]
    uses: int
    status: str
    recommendation: str | None
    rationale: str | None
    git_root: str | None
    git_remote: str | None
    project_tag_id: int | None
    created_at: datetime


_NEW_COLUMNS = (
    "id, name, members, uses, status, recommendation, rationale, git_root, git_remote,"
    " project_tag_id, created_at"
)


def new_suggestions(
    conn: psycopg.Connection[Any], user_id: int, *, statuses: Iterable[str] = ("pending",)
) -> list[NewTagSuggestion]:
    with conn.cursor(row_factory=class_row(NewTagSuggestion)) as cur:
        cur.execute(
            f"SELECT {_NEW_COLUMNS} FROM project_tag_new_suggestions"
            " WHERE user_id = %s AND status = ANY(%s) ORDER BY id",
            (user_id, list(statuses)),
        )
        return cur.fetchall()


def get_new_suggestion(
    conn: psycopg.Connection[Any], user_id: int, suggestion_id: int, *, lock: bool = False
) -> NewTagSuggestion | None:
    with conn.cursor(row_factory=class_row(NewTagSuggestion)) as cur:
        cur.execute(
            f"SELECT {_NEW_COLUMNS} FROM project_tag_new_suggestions"
            " WHERE user_id = %s AND id = %s" + (" FOR UPDATE" if lock else ""),
            (user_id, suggestion_id),
        )
        return cur.fetchone()


def suggest_new_tag(
    conn: psycopg.Connection[Any],
    user_id: int,
    name: str,
    *,
    members: Sequence[str] = (),
    uses: int | None = None,
    git_root: str | None = None,
    git_remote: str | None = None,
    recommendation: Recommendation | None = None,
    rationale: str | None = None,
    model_name: str | None = None,
    source_id: int | None = None,
) -> int | None:
    """Open (or refresh) the pending suggestion for ``name``. ``uses`` given: set it (the
    promoter's count); omitted: one more use (the tagger saw another row). ``source_id``: the
    turn the name was proposed for, added to ``source_ids`` (a suggestion opened or touched
    without one has unknown sources: NULL). A name decided before stays decided (one row per
    name forever: a rejection is permanent). Returns the suggestion id while pending, else
    ``None``."""
    row = conn.execute(
        "INSERT INTO project_tag_new_suggestions (user_id, name, members, uses, git_root,"
        "  git_remote, recommendation, rationale, model_name, source_ids)"
        " VALUES (%s, %s, %s, coalesce(%s, 1), %s, %s, %s, %s, %s,"
        "  CASE WHEN %s::bigint IS NULL THEN NULL ELSE ARRAY[%s::bigint] END)"
        " ON CONFLICT (user_id, name) DO UPDATE SET"
        "   source_ids = CASE WHEN EXCLUDED.source_ids IS NULL"
        "     OR project_tag_new_suggestions.source_ids IS NULL THEN NULL"
        "     ELSE project_tag_new_suggestions.source_ids || EXCLUDED.source_ids END,"
        "   uses = coalesce(%s, project_tag_new_suggestions.uses + 1),"
        "   members = CASE WHEN cardinality(EXCLUDED.members) > 0 THEN EXCLUDED.members"
        "             ELSE project_tag_new_suggestions.members END,"
        "   git_root = coalesce(project_tag_new_suggestions.git_root, EXCLUDED.git_root),"
        "   git_remote = coalesce(project_tag_new_suggestions.git_remote, EXCLUDED.git_remote),"
        "   recommendation = coalesce(EXCLUDED.recommendation,"
        "                             project_tag_new_suggestions.recommendation),"
        "   rationale = coalesce(EXCLUDED.rationale, project_tag_new_suggestions.rationale),"
        "   model_name = coalesce(EXCLUDED.model_name, project_tag_new_suggestions.model_name),"
        "   last_seen_at = now()"
        " WHERE project_tag_new_suggestions.status = 'pending'"
        " RETURNING id",
        (
            user_id,
            name,
            list(members),
            uses,
            git_root,
            git_remote,
            recommendation,
            rationale,
            model_name,
            source_id,
            source_id,
            uses,
        ),
    ).fetchone()
    return int(row[0]) if row else None


def new_suggestion_names(conn: psycopg.Connection[Any], user_id: int) -> dict[str, str]:
    """Every suggested name and its status (pending, confirmed, rejected, superseded)."""
    rows = conn.execute(
        "SELECT name, status FROM project_tag_new_suggestions WHERE user_id = %s", (user_id,)
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def git_suggestion_for(
    conn: psycopg.Connection[Any], user_id: int, git_root: str | None, git_remote: str | None
) -> NewTagSuggestion | None:
    """The suggestion (any status) already made for this repository, if any."""
    key = remote_key(git_remote)
    for suggestion in new_suggestions(
        conn, user_id, statuses=("pending", "confirmed", "rejected", "superseded")
    ):
        if key and remote_key(suggestion.git_remote) == key:
            return suggestion
        if git_root and suggestion.git_root == git_root:
            return suggestion
    return None


def decide_new_suggestion(
    conn: psycopg.Connection[Any],
    suggestion_id: int,
    status: Literal["confirmed", "rejected", "superseded"],
    *,
    decided_by: Literal["user", "system"] = "user",
    reason: str | None = None,
    project_tag_id: int | None = None,
    retrotagged: int = 0,
) -> None:
    conn.execute(
        "UPDATE project_tag_new_suggestions SET status = %s, decided_by = %s,"
        " decision_reason = %s, decided_at = now(), project_tag_id = %s, retrotagged = %s"
        " WHERE id = %s",
        (status, decided_by, reason, project_tag_id, retrotagged, suggestion_id),
    )


# --- alias suggestions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AliasSuggestion:
    id: int
    source_tag_id: int
    source_name: str
    target_tag_id: int
    target_name: str
    relation: str
    status: str
    confidence: float | None
    rationale: str | None
    created_at: datetime


_ALIAS_SELECT = (
    "SELECT a.id, a.source_tag_id, s.name AS source_name, a.target_tag_id,"
    " t.name AS target_name, a.relation, a.status, a.confidence::float8 AS confidence,"
    " a.rationale, a.created_at FROM project_tag_alias_suggestions a"
    " JOIN project_tags s ON s.id = a.source_tag_id JOIN project_tags t ON t.id = a.target_tag_id"
)


def alias_suggestions(
    conn: psycopg.Connection[Any], user_id: int, *, statuses: Iterable[str] = ("pending",)
) -> list[AliasSuggestion]:
    with conn.cursor(row_factory=class_row(AliasSuggestion)) as cur:
        cur.execute(
            _ALIAS_SELECT + " WHERE a.user_id = %s AND a.status = ANY(%s) ORDER BY a.id",
            (user_id, list(statuses)),
        )
        return cur.fetchall()


def get_alias_suggestion(
    conn: psycopg.Connection[Any], user_id: int, suggestion_id: int, *, lock: bool = False
) -> AliasSuggestion | None:
    with conn.cursor(row_factory=class_row(AliasSuggestion)) as cur:
        cur.execute(
            _ALIAS_SELECT
            + " WHERE a.user_id = %s AND a.id = %s"
            + (" FOR UPDATE OF a" if lock else ""),
            (user_id, suggestion_id),
        )
        return cur.fetchone()


def blocked_alias_pairs(
    conn: psycopg.Connection[Any], user_id: int, *, rejudge_days: int
) -> set[frozenset[int]]:
    """Unordered pairs (of canonical ids) not to suggest now: pending, decided by a person
    or applied (forever), or judged below the bar within ``rejudge_days``."""
    rows = conn.execute(
        "SELECT canonical_project_tag_id(source_tag_id), canonical_project_tag_id(target_tag_id)"
        " FROM project_tag_alias_suggestions WHERE user_id = %s AND ("
        "   status IN ('pending', 'confirmed', 'rejected', 'auto_applied')"
        "   OR (status = 'expired' AND created_at > now() - make_interval(days => %s)))",
        (user_id, rejudge_days),
    ).fetchall()
    return {frozenset((int(a), int(b))) for a, b in rows}


@dataclass(frozen=True, slots=True)
class AliasVerdict:
    source_tag_id: int
    target_tag_id: int
    relation: str
    confidence: float
    candidate_sources: list[str]
    evidence_memory_ids: list[int]
    conflict_memory_ids: list[int]
    signals: dict[str, Any]
    rationale: str | None
    model_name: str | None
    auto_apply_eligible: bool


def record_alias_verdict(
    conn: psycopg.Connection[Any],
    user_id: int,
    verdict: AliasVerdict,
    status: Literal["pending", "expired", "auto_applied"],
) -> int | None:
    """Store a judged pair: ``pending`` asks a person, ``expired`` remembers a verdict below
    the bar (so the pair is not judged again too soon). ``None`` if the pair is already
    pending (the unique index)."""
    decided = status != "pending"
    row = conn.execute(
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        "  relation, status, confidence, candidate_sources, evidence_memory_ids,"
        "  conflict_memory_ids, signals, model_name, rationale, auto_apply_eligible,"
        "  decided_by, decision_reason, decided_at, applied_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        "  CASE WHEN %s THEN 'system' END, %s, CASE WHEN %s THEN now() END,"
        "  CASE WHEN %s = 'auto_applied' THEN now() END)"
        " ON CONFLICT DO NOTHING RETURNING id",
        (
            user_id,
            verdict.source_tag_id,
            verdict.target_tag_id,
            verdict.relation,
            status,
            round(verdict.confidence, 4),
            verdict.candidate_sources,
            verdict.evidence_memory_ids,
            verdict.conflict_memory_ids,
            Jsonb(verdict.signals),
            verdict.model_name,
            verdict.rationale,
            verdict.auto_apply_eligible,
            decided,
            "below the bar" if status == "expired" else ("auto-applied" if decided else None),
            decided,
            status,
        ),
    ).fetchone()
    return int(row[0]) if row else None


def decide_alias_suggestion(
    conn: psycopg.Connection[Any],
    suggestion_id: int,
    status: Literal["confirmed", "rejected", "superseded"],
    *,
    decided_by: Literal["user", "system"] = "user",
    reason: str | None = None,
) -> None:
    conn.execute(
        "UPDATE project_tag_alias_suggestions SET status = %s, decided_by = %s,"
        " decision_reason = %s, decided_at = now(),"
        " applied_at = CASE WHEN %s = 'confirmed' THEN now() END WHERE id = %s",
        (status, decided_by, reason, status, suggestion_id),
    )


def supersede_alias_suggestions(
    conn: psycopg.Connection[Any], user_id: int, tag_id: int, *, keep: int | None = None
) -> int:
    """Close other pending questions about a tag that just stopped being a root."""
    cur = conn.execute(
        "UPDATE project_tag_alias_suggestions SET status = 'superseded', decided_by = 'system',"
        " decided_at = now(), decision_reason = 'tag aliased'"
        " WHERE user_id = %s AND status = 'pending' AND source_tag_id = %s"
        " AND id IS DISTINCT FROM %s",
        (user_id, tag_id, keep),
    )
    return cur.rowcount
