"""Reading the pool for an export bundle: one streaming query per table, in a stable order,
with database ids replaced by the stable names a bundle carries.

A bundle holds no database ids. A memory is named by its **key**: its ``external_uuid``, or
for a row without one (a pinned fact, a saved message) a key derived from its id and creation
time in the database that made it (:data:`KEY_SQL`), which an import stores as the row's
``external_uuid``. A tag is named by its (unique) name, a user by its user name. An action is
named by its identity (user, platform, session, key) and its turn by that turn's key
(``turn``); it goes with the turns the filter takes (its own turn, or for an action without
one, a turn of its session). So the same pool exported from two databases gives the same
bytes, and an import remaps names to the ids of its own database
(:mod:`agents_memory.store.owner.bundle_import`).

Every reader takes :class:`ExportFilter` and yields plain dicts (column -> Python value) from a
server-side cursor, so a pool of any size is read with bounded memory. The caller owns the
transaction (one ``REPEATABLE READ`` snapshot keeps the members consistent with each other).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

KEY_PREFIX: Final = "local:"


def key_sql(alias: str) -> str:
    """A memory's key in a bundle (``alias`` names the memory row)."""
    return (
        f"coalesce({alias}.external_uuid, 'local:' || md5({alias}.id::text || '/'"
        f" || extract(epoch FROM {alias}.created_at)::text))"
    )


KEY_SQL: Final = key_sql("m")
"""A memory's key in a bundle (``m`` is the memory row)."""
PIN_KEY_SQL: Final = (
    "'pin:' || md5(extract(epoch FROM c.created_at)::text || '/' || c.to_agent || '/' || c.title)"
)
"""A task pin's key in a bundle (``c`` is its ``create`` event): the same in every database
that holds the pin, so an import finds a pin it brought in before."""

_FETCH: Final = 2000


@dataclass(frozen=True, slots=True)
class ExportFilter:
    """Which memories an export takes (``None`` = no limit on that side)."""

    project_id: int | None = None
    """A project tag's canonical id: its memories, and those of every alias of it."""
    since: datetime | None = None
    until: datetime | None = None
    """Exclusive."""
    platform: str | None = None
    include_archived: bool = False
    person: int | None = None
    """A team member's own rows only (their user id): a teammate's shared project is that
    teammate's to export. ``None``: every row the connection reads (the owner's pool)."""

    def params(self) -> dict[str, Any]:
        return {
            "person": self.person,
            "project": self.project_id,
            "since": self.since,
            "until": self.until,
            "platform": self.platform,
            "archived": self.include_archived,
        }


_MEMORY_WHERE: Final = (
    " (%(archived)s OR m.is_active)"
    " AND (%(project)s::bigint IS NULL OR canonical_project_tag_id(m.p_tag_id) = %(project)s)"
    " AND (%(since)s::timestamptz IS NULL OR m.message_at >= %(since)s)"
    " AND (%(until)s::timestamptz IS NULL OR m.message_at < %(until)s)"
    " AND (%(platform)s::text IS NULL OR m.agent_platform = %(platform)s)"
    " AND (%(person)s::bigint IS NULL OR m.user_id = %(person)s)"
)
_TAG_WHERE: Final = "(%(project)s::bigint IS NULL OR canonical_project_tag_id({col}) = %(project)s)"

_MEMORY_SELECT: Final = (
    f"SELECT {KEY_SQL} AS external_uuid, u.user_name, m.agent_platform, m.agent_model,"
    " m.subagent, m.subagent_model, m.subagent_role, m.role, m.message, m.raw_message,"
    " t.name AS p_tag, m.d_tag, m.is_active, m.archived_at, m.is_pinned, m.tag_processed,"
    " m.device_name, m.session_id, m.cwd, m.git_root, m.git_remote, m.source, m.message_at,"
    " m.created_at, m.updated_at, m.slot, m.expires_at, m.superseded_at,"
    f" (SELECT {key_sql('n')} FROM memory n WHERE n.id = m.superseded_by) AS superseded_by"
    " FROM memory m JOIN users u ON u.user_id = m.user_id"
    " LEFT JOIN project_tags t ON t.id = m.p_tag_id WHERE"
)

QUERIES: Final[dict[str, str]] = {
    "users": (
        "SELECT user_name, core_profile, sub_profile, librarian_last_run_at,"
        " librarian_msg_count_at_run, created_at, updated_at FROM users ORDER BY user_name"
    ),
    "profile_history": (
        "SELECT u.user_name, h.field, h.old_value, h.new_value, h.changed_by, h.created_at"
        " FROM profile_history h JOIN users u ON u.user_id = h.user_id"
        " ORDER BY u.user_name, h.created_at, h.field, h.new_value NULLS FIRST"
    ),
    "project_tags": (
        "SELECT t.name, t.description, a.name AS alias_of, t.kind, t.paused, t.git_root,"
        " t.git_remote, t.created_at, t.updated_at FROM project_tags t"
        " LEFT JOIN project_tags a ON a.id = t.alias_of"
        " WHERE " + _TAG_WHERE.format(col="t.id") + " ORDER BY t.name"
    ),
    "memory": _MEMORY_SELECT + _MEMORY_WHERE + " ORDER BY m.message_at, 1",
    "memory_history": (
        f"SELECT {KEY_SQL} AS memory, h.old_message, h.changed_by, h.created_at"
        " FROM memory_history h JOIN memory m ON m.id = h.memory_id WHERE"
        + _MEMORY_WHERE
        + " ORDER BY 1, h.created_at, h.old_message"
    ),
    "tag_summaries": (
        "SELECT u.user_name, t.name AS p_tag, s.d_tag, s.period_start, s.period_end,"
        " s.summary, s.model, s.stale, s.created_at, s.updated_at,"
        f" ARRAY(SELECT {KEY_SQL} FROM unnest(s.source_ids) WITH ORDINALITY AS x(id, n)"
        "   JOIN memory m ON m.id = x.id ORDER BY x.n) AS sources"
        " FROM tag_summaries s JOIN users u ON u.user_id = s.user_id"
        " LEFT JOIN project_tags t ON t.id = s.p_tag_id"
        " WHERE " + _TAG_WHERE.format(col="s.p_tag_id") + ""
        " AND (%(until)s::timestamptz IS NULL OR s.period_start < %(until)s)"
        " AND (%(since)s::timestamptz IS NULL OR s.period_end >= %(since)s)"
        " ORDER BY u.user_name, t.name NULLS FIRST, s.d_tag NULLS FIRST, s.period_start"
    ),
    "alias_suggestions": (
        "SELECT u.user_name, a.name AS source_tag, b.name AS target_tag, s.relation, s.status,"
        " s.confidence::text AS confidence, s.candidate_sources, s.signals, s.model_provider,"
        " s.model_name, s.rationale, s.auto_apply_eligible, s.decided_by, s.decision_reason,"
        " s.decided_at, s.applied_at, s.created_at, s.updated_at,"
        f" ARRAY(SELECT {KEY_SQL} FROM unnest(s.evidence_memory_ids) WITH ORDINALITY"
        "   AS x(id, n) JOIN memory m ON m.id = x.id ORDER BY x.n) AS evidence,"
        f" ARRAY(SELECT {KEY_SQL} FROM unnest(s.conflict_memory_ids) WITH ORDINALITY"
        "   AS x(id, n) JOIN memory m ON m.id = x.id ORDER BY x.n) AS conflicts"
        " FROM project_tag_alias_suggestions s JOIN users u ON u.user_id = s.user_id"
        " JOIN project_tags a ON a.id = s.source_tag_id"
        " JOIN project_tags b ON b.id = s.target_tag_id"
        " WHERE " + _TAG_WHERE.format(col="a.id") + " AND " + _TAG_WHERE.format(col="b.id") + ""
        " ORDER BY u.user_name, a.name, b.name, s.created_at, s.relation"
    ),
    "new_tag_suggestions": (
        "SELECT u.user_name, s.name, s.members, s.uses, s.status, s.recommendation,"
        " s.rationale, s.git_root, s.git_remote, s.model_provider, s.model_name,"
        " t.name AS project_tag, s.retrotagged, s.decided_by, s.decision_reason, s.decided_at,"
        " s.last_seen_at, s.created_at, s.updated_at"
        " FROM project_tag_new_suggestions s JOIN users u ON u.user_id = s.user_id"
        " LEFT JOIN project_tags t ON t.id = s.project_tag_id"
        " WHERE (%(project)s::bigint IS NULL OR canonical_project_tag_id(s.project_tag_id)"
        " = %(project)s) ORDER BY u.user_name, s.name"
    ),
    "actions": (
        "SELECT u.user_name, a.agent_platform, a.session_id, a.external_key,"
        f" (SELECT {KEY_SQL} FROM memory m WHERE m.id = a.memory_id) AS turn, a.turn_key,"
        " a.tool, a.kind, a.targets, a.command, a.outcome, a.exit_code, a.excerpt,"
        " a.lines_added, a.lines_removed, a.started_at, a.duration_ms, a.device_name,"
        " a.created_at FROM actions a JOIN users u ON u.user_id = a.user_id"
        " WHERE (a.memory_id IS NOT NULL AND EXISTS (SELECT 1 FROM memory m"
        "   WHERE m.id = a.memory_id AND" + _MEMORY_WHERE + "))"
        " OR (a.memory_id IS NULL AND EXISTS (SELECT 1 FROM memory m"
        "   WHERE m.user_id = a.user_id AND m.agent_platform = a.agent_platform"
        "   AND m.session_id = a.session_id AND" + _MEMORY_WHERE + "))"
        " ORDER BY u.user_name, a.agent_platform, a.session_id NULLS FIRST, a.external_key"
    ),
    "task_pins": (
        f"SELECT u.user_name, (SELECT {PIN_KEY_SQL} FROM task_pin_events c WHERE c.id = p.pin_id)"
        " AS pin, p.event, p.status, p.title, p.note, p.from_agent, p.to_agent, p.project,"
        " p.payload, p.device_name, p.created_at FROM task_pin_events p"
        " JOIN users u ON u.user_id = p.user_id"
        " WHERE %(project)s::bigint IS NULL OR EXISTS (SELECT 1 FROM project_tags t"
        "   WHERE t.name = p.project AND canonical_project_tag_id(t.id) = %(project)s)"
        " ORDER BY u.user_name, 2, p.created_at, p.id"
    ),
    "tombstones": (
        "SELECT external_uuid, content_sha256, agent_platform, session_id, role, reason,"
        " created_at FROM tombstones WHERE user_id IS NOT DISTINCT FROM (SELECT am_me())"
        " AND (%(platform)s::text IS NULL OR agent_platform = %(platform)s)"
        " ORDER BY external_uuid NULLS LAST, content_sha256, created_at"
    ),
    "action_tombstones": (
        "SELECT u.user_name, t.agent_platform, t.session_id, t.external_key, t.reason,"
        " t.created_at FROM action_tombstones t JOIN users u ON u.user_id = t.user_id"
        " WHERE %(platform)s::text IS NULL OR t.agent_platform = %(platform)s"
        " ORDER BY u.user_name, t.agent_platform, t.session_id NULLS FIRST, t.external_key"
    ),
    "vectors": (
        f"SELECT {KEY_SQL} AS external_uuid, m.embedding_model AS model,"
        " m.embedding::text AS embedding FROM memory m WHERE m.embedding IS NOT NULL AND"
        + _MEMORY_WHERE
        + " ORDER BY m.message_at, 1"
    ),
}
"""Each member's query; the memory-bound ones take :meth:`ExportFilter.params`."""

_COUNTS: Final = {
    "memory": "SELECT count(*) FROM memory m WHERE" + _MEMORY_WHERE,
}


def begin_snapshot(conn: psycopg.Connection[Any]) -> None:
    """One consistent, read-only view of the pool for the whole export (the caller's
    transaction must not have run a statement yet)."""
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


def count_memories(conn: psycopg.Connection[Any], flt: ExportFilter) -> int:
    row = conn.execute(_COUNTS["memory"], flt.params()).fetchone()
    return int(row[0]) if row else 0


def read_member(
    conn: psycopg.Connection[Any], member: str, flt: ExportFilter
) -> Iterator[dict[str, Any]]:
    """The rows of ``member`` (a key of :data:`QUERIES`), streamed in the bundle's order."""
    with conn.cursor(name=f"export_{member}", row_factory=dict_row) as cur:
        cur.itersize = _FETCH
        cur.execute(QUERIES[member], flt.params())
        yield from cur


def read_markdown_turns(
    conn: psycopg.Connection[Any], flt: ExportFilter
) -> Iterator[dict[str, Any]]:
    """Memory rows for the Markdown tree: by project (canonical tag name), session, time;
    each with its actions (``actions``: a list of their fields, ``None`` without any)."""
    query = (
        "SELECT coalesce(c.name, '') AS project, m.session_id, m.agent_platform,"
        " m.agent_model, m.role, m.message, m.message_at, m.is_pinned, m.subagent,"
        " m.subagent_role, (SELECT jsonb_agg(jsonb_build_object('id', a.id, 'tool', a.tool,"
        "   'kind', a.kind, 'targets', a.targets, 'command', a.command, 'outcome', a.outcome,"
        "   'exit_code', a.exit_code, 'excerpt', a.excerpt, 'lines_added', a.lines_added,"
        "   'lines_removed', a.lines_removed) ORDER BY a.started_at NULLS LAST, a.id)"
        "   FROM actions a WHERE a.memory_id = m.id) AS actions FROM memory m"
        " LEFT JOIN project_tags c ON c.id = canonical_project_tag_id(m.p_tag_id)"
        " WHERE" + _MEMORY_WHERE + " ORDER BY 1, coalesce(m.session_id, ''), m.agent_platform,"
        f" m.message_at, {KEY_SQL}"
    )
    with conn.cursor(name="export_markdown", row_factory=dict_row) as cur:
        cur.itersize = _FETCH
        cur.execute(query, flt.params())
        yield from cur


def pinned_facts(conn: psycopg.Connection[Any], flt: ExportFilter) -> list[dict[str, Any]]:
    """The pinned memories an export with ``flt`` takes, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT u.user_name, m.message, m.message_at FROM memory m"
            " JOIN users u ON u.user_id = m.user_id WHERE m.is_pinned AND"
            + _MEMORY_WHERE
            + f" ORDER BY m.message_at, {KEY_SQL}",
            flt.params(),
        )
        return cur.fetchall()
