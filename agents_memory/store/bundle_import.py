"""Writing a bundle's rows into the pool: idempotent, with the bundle's names (memory keys, tag
names, user names) remapped to this database's ids.

* A memory is matched by its key: ``external_uuid``, or for a row of this database without
  one, the key :data:`~agents_memory.store.bundle.KEY_SQL` derives (so a bundle imported back
  into the database it came from finds its rows). A match with the same text is *present*; a
  match with other text is a *conflict*: reported, never overwritten. Anything else is new.
* Every other table is inserted only where an equal row (by its natural key) is missing.
* Memories go through a staging table by ``COPY``, a batch at a time; the rest row by row.

The caller owns the transaction (an import is one transaction; ``--dry-run`` rolls it back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import psycopg
from psycopg.types.json import Jsonb

from agents_memory.store.bundle import KEY_SQL
from agents_memory.store.memories import AdmittedText


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """A bundle's memory row, its text admitted."""

    external_uuid: str
    user_name: str
    message: AdmittedText
    raw_message: AdmittedText | None
    values: dict[str, Any]
    """The other columns, by name (:data:`_COLUMNS`)."""
    embedding: str | None = None
    embedding_model: str | None = None


@dataclass(slots=True)
class Merged:
    """What one table's rows did: ``new`` inserted, ``present`` already there, ``conflicts``
    there with other content (left as they were; ``conflict_keys`` names them)."""

    new: int = 0
    present: int = 0
    conflicts: int = 0
    conflict_keys: list[str] = field(default_factory=list)

    def add(self, other: Merged) -> None:
        self.new += other.new
        self.present += other.present
        self.conflicts += other.conflicts
        self.conflict_keys.extend(other.conflict_keys)


_COLUMNS: Final = (
    ("agent_platform", "text"),
    ("agent_model", "text"),
    ("subagent", "bool"),
    ("subagent_model", "text"),
    ("subagent_role", "text"),
    ("role", "text"),
    ("p_tag", "text"),
    ("d_tag", "text[]"),
    ("is_active", "bool"),
    ("archived_at", "timestamptz"),
    ("is_pinned", "bool"),
    ("tag_processed", "bool"),
    ("device_name", "text"),
    ("session_id", "text"),
    ("cwd", "text"),
    ("git_root", "text"),
    ("git_remote", "text"),
    ("source", "text"),
    ("message_at", "timestamptz"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
)
_STAGED: Final = (
    ("external_uuid", "text"),
    ("user_name", "text"),
    ("message", "text"),
    ("raw_message", "text"),
    *_COLUMNS,
    ("embedding_model", "text"),
    ("embedding", "text"),
)
_STAGE_TABLE: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS memory_import ("
    + ", ".join(f"{c} {t}" for c, t in _STAGED)
    + ") ON COMMIT DROP"
)
_LOCAL_KEYS: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS import_local_keys ON COMMIT DROP AS"
    f" SELECT {KEY_SQL} AS key, m.id FROM memory m WHERE m.external_uuid IS NULL"
)
_ID_OF: Final = (
    "coalesce((SELECT i.id FROM memory i WHERE i.external_uuid = {k}),"
    " (SELECT l.id FROM import_local_keys l WHERE l.key = {k}))"
)
"""This database's memory id for the key ``{k}`` (NULL when it has no such memory)."""


def prepare(conn: psycopg.Connection[Any]) -> None:
    """Staging for this transaction: the memory staging table and the derived keys of the
    rows that have no ``external_uuid`` (taken before anything is inserted)."""
    conn.execute(_STAGE_TABLE)
    conn.execute(_LOCAL_KEYS)
    conn.execute("CREATE INDEX IF NOT EXISTS import_local_keys_key ON import_local_keys (key)")


def _merge_sql(vectors: bool) -> str:
    inserted = ["external_uuid", "message", "raw_message"]
    inserted += [c for c, _t in _COLUMNS if c != "p_tag"]
    columns = ["user_id", "p_tag_id", *inserted]
    values = ["u.user_id", "t.id", *(f"s.{c}" for c in inserted)]
    if vectors:
        columns += ["embedding_model", "embedding"]
        values += ["s.embedding_model", "s.embedding::halfvec"]
    return (
        "WITH matched AS ("
        "  SELECT s.external_uuid, m.message = s.message AS same FROM memory_import s"
        "  JOIN memory m ON m.external_uuid = s.external_uuid"
        "  UNION ALL SELECT s.external_uuid, m.message = s.message FROM memory_import s"
        "  JOIN import_local_keys l ON l.key = s.external_uuid JOIN memory m ON m.id = l.id),"
        f" ins AS (INSERT INTO memory ({', '.join(columns)})"
        f"  SELECT {', '.join(values)} FROM memory_import s"
        "  JOIN users u ON u.user_name = s.user_name"
        "  LEFT JOIN project_tags t ON t.name = s.p_tag"
        "  WHERE NOT EXISTS (SELECT 1 FROM matched x WHERE x.external_uuid = s.external_uuid)"
        "  ON CONFLICT (external_uuid) DO NOTHING RETURNING 1)"
        " SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM matched WHERE same),"
        " ARRAY(SELECT external_uuid FROM matched WHERE NOT same ORDER BY 1)"
    )


_MERGE: Final = {True: _merge_sql(True), False: _merge_sql(False)}


def merge_memories(
    conn: psycopg.Connection[Any], rows: Sequence[ImportedMemory], *, vectors: bool
) -> Merged:
    """Insert the new ones of ``rows``; count the present ones and the conflicts. With
    ``vectors`` their embeddings are kept (else left NULL for the Cold Path's embedder)."""
    if not rows:
        return Merged()
    conn.execute("DELETE FROM memory_import")
    names = [c for c, _t in _STAGED]
    with conn.cursor().copy(f"COPY memory_import ({', '.join(names)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(
                (
                    row.external_uuid,
                    row.user_name,
                    row.message,
                    row.raw_message,
                    *(row.values.get(c) for c, _t in _COLUMNS),
                    row.embedding_model,
                    row.embedding,
                )
            )
    result = conn.execute(_MERGE[vectors], prepare=False).fetchone()
    assert result is not None
    conflicts = list(result[2])
    return Merged(int(result[0]), int(result[1]), len(conflicts), conflicts)


# --- users and profiles ----------------------------------------------------------------------
def merge_user(conn: psycopg.Connection[Any], row: dict[str, Any]) -> Merged:
    """A user: new, or present with its empty profile fields filled from the bundle; a profile
    field set to other text here is a conflict (this database's text stays)."""
    created = conn.execute(
        "INSERT INTO users (user_name, core_profile, sub_profile, librarian_last_run_at,"
        " librarian_msg_count_at_run) VALUES (%(user_name)s, %(core_profile)s,"
        " %(sub_profile)s, %(librarian_last_run_at)s, %(librarian_msg_count_at_run)s)"
        " ON CONFLICT (user_name) DO NOTHING RETURNING user_id",
        row,
    ).fetchone()
    if created is not None:
        return Merged(new=1)
    here = conn.execute(
        "SELECT core_profile, sub_profile FROM users WHERE user_name = %s", (row["user_name"],)
    ).fetchone()
    assert here is not None
    differs = [
        f
        for f, mine in zip(("core_profile", "sub_profile"), here, strict=True)
        if mine is not None and row[f] is not None and mine != row[f]
    ]
    conn.execute(
        "UPDATE users SET core_profile = coalesce(core_profile, %(core_profile)s::text),"
        " sub_profile = coalesce(sub_profile, %(sub_profile)s::text),"
        # text from another pool: which of our turns it was built from is unknown
        " core_profile_sources = CASE WHEN core_profile IS NULL"
        "  AND %(core_profile)s::text IS NOT NULL THEN NULL ELSE core_profile_sources END,"
        " sub_profile_sources = CASE WHEN sub_profile IS NULL"
        "  AND %(sub_profile)s::text IS NOT NULL THEN NULL ELSE sub_profile_sources END"
        " WHERE user_name = %(user_name)s"
        " AND ((core_profile IS NULL AND %(core_profile)s::text IS NOT NULL)"
        "   OR (sub_profile IS NULL AND %(sub_profile)s::text IS NOT NULL))",
        row,
    )
    if differs:
        return Merged(conflicts=1, conflict_keys=[f"user {row['user_name']}: {', '.join(differs)}"])
    return Merged(present=1)


_INSERTS: Final[dict[str, str]] = {
    "profile_history": (
        "INSERT INTO profile_history (user_id, field, old_value, new_value, changed_by,"
        " created_at) SELECT u.user_id, %(field)s, %(old_value)s, %(new_value)s,"
        " %(changed_by)s, %(created_at)s FROM users u WHERE u.user_name = %(user_name)s"
        " AND NOT EXISTS (SELECT 1 FROM profile_history h WHERE h.user_id = u.user_id"
        "   AND h.field = %(field)s AND h.created_at = %(created_at)s::timestamptz"
        "   AND h.new_value IS NOT DISTINCT FROM %(new_value)s::text) RETURNING id"
    ),
    "project_tags": (
        "INSERT INTO project_tags (name, description, alias_of, kind, paused, git_root,"
        " git_remote, created_at, updated_at) VALUES (%(name)s, %(description)s,"
        " (SELECT a.id FROM project_tags a WHERE a.name = %(alias_of)s), %(kind)s, %(paused)s,"
        " %(git_root)s, %(git_remote)s, %(created_at)s, %(updated_at)s)"
        " ON CONFLICT (name) DO NOTHING RETURNING id"
    ),
    "memory_history": (
        "INSERT INTO memory_history (memory_id, old_message, changed_by, created_at)"
        " SELECT k.id, %(old_message)s::text, %(changed_by)s, %(created_at)s::timestamptz"
        " FROM (SELECT "
        + _ID_OF.format(k="%(memory)s")
        + " AS id) k WHERE k.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory_history h"
        "   WHERE h.memory_id = k.id AND h.created_at = %(created_at)s::timestamptz"
        "   AND h.old_message = %(old_message)s::text) RETURNING id"
    ),
    "tag_summaries": (
        "INSERT INTO tag_summaries (user_id, p_tag_id, d_tag, period_start, period_end,"
        " summary, source_ids, model, created_at, updated_at)"
        " SELECT u.user_id, t.id, %(d_tag)s::text, %(period_start)s::timestamptz,"
        " %(period_end)s::timestamptz, %(summary)s::text,"
        " ARRAY(SELECT y.id FROM (SELECT x.n, "
        + _ID_OF.format(k="x.k")
        + " AS id FROM unnest(%(sources)s::text[]) WITH ORDINALITY AS x(k, n)) y"
        "   WHERE y.id IS NOT NULL ORDER BY y.n), %(model)s::text, %(created_at)s::timestamptz,"
        " %(updated_at)s::timestamptz"
        " FROM users u LEFT JOIN project_tags t ON t.name = %(p_tag)s"
        " WHERE u.user_name = %(user_name)s AND (t.id IS NOT NULL OR %(d_tag)s::text IS NOT NULL)"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
    "alias_suggestions": (
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        " relation, status, confidence, candidate_sources, evidence_memory_ids,"
        " conflict_memory_ids, signals, model_provider, model_name, rationale,"
        " auto_apply_eligible, decided_by, decision_reason, decided_at, applied_at, created_at,"
        " updated_at) SELECT u.user_id, a.id, b.id, %(relation)s::text, %(status)s::text,"
        " %(confidence)s::numeric, %(candidate_sources)s::text[],"
        " ARRAY(SELECT y.id FROM (SELECT x.n, "
        + _ID_OF.format(k="x.k")
        + " AS id FROM unnest(%(evidence)s::text[]) WITH ORDINALITY AS x(k, n)) y"
        "   WHERE y.id IS NOT NULL ORDER BY y.n),"
        " ARRAY(SELECT y.id FROM (SELECT x.n, "
        + _ID_OF.format(k="x.k")
        + " AS id FROM unnest(%(conflicts)s::text[]) WITH ORDINALITY AS x(k, n)) y"
        "   WHERE y.id IS NOT NULL ORDER BY y.n),"
        " %(signals)s::jsonb, %(model_provider)s::text, %(model_name)s::text,"
        " %(rationale)s::text, %(auto_apply_eligible)s::bool, %(decided_by)s::text,"
        " %(decision_reason)s::text, %(decided_at)s::timestamptz, %(applied_at)s::timestamptz,"
        " %(created_at)s::timestamptz, %(updated_at)s::timestamptz"
        " FROM users u JOIN project_tags a ON a.name = %(source_tag)s"
        " JOIN project_tags b ON b.name = %(target_tag)s WHERE u.user_name = %(user_name)s"
        " AND NOT EXISTS (SELECT 1 FROM project_tag_alias_suggestions s"
        "   WHERE s.user_id = u.user_id AND s.source_tag_id = a.id AND s.target_tag_id = b.id"
        "   AND s.relation = %(relation)s::text AND s.created_at = %(created_at)s::timestamptz)"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
    "new_tag_suggestions": (
        "INSERT INTO project_tag_new_suggestions (user_id, name, members, uses, status,"
        " recommendation, rationale, git_root, git_remote, model_provider, model_name,"
        " project_tag_id, retrotagged, decided_by, decision_reason, decided_at, last_seen_at,"
        " created_at, updated_at) SELECT u.user_id, %(name)s::text, %(members)s::text[],"
        " %(uses)s::int, %(status)s::text, %(recommendation)s::text, %(rationale)s::text,"
        " %(git_root)s::text, %(git_remote)s::text, %(model_provider)s::text,"
        " %(model_name)s::text,"
        " (SELECT t.id FROM project_tags t WHERE t.name = %(project_tag)s), %(retrotagged)s::int,"
        " %(decided_by)s::text, %(decision_reason)s::text, %(decided_at)s::timestamptz,"
        " %(last_seen_at)s::timestamptz, %(created_at)s::timestamptz,"
        " %(updated_at)s::timestamptz FROM users u WHERE u.user_name = %(user_name)s"
        " ON CONFLICT DO NOTHING RETURNING id"
    ),
}
"""Each small table's insert of one bundle row (by name); it returns a row when it inserted."""


def insert_row(conn: psycopg.Connection[Any], table: str, row: dict[str, Any]) -> bool:
    """Insert one bundle row of ``table`` unless an equal one is there; True when inserted."""
    if "signals" in row:
        row = {**row, "signals": Jsonb(row["signals"])}
    return conn.execute(_INSERTS[table], row, prepare=True).fetchone() is not None


def existing_tags(conn: psycopg.Connection[Any], names: Sequence[str]) -> set[str]:
    rows = conn.execute(
        "SELECT name FROM project_tags WHERE name = ANY(%s)", (list(names),)
    ).fetchall()
    return {str(r[0]) for r in rows}


def link_alias(conn: psycopg.Connection[Any], name: str, alias_of: str) -> None:
    """Point the tag ``name`` at ``alias_of`` (for aliases inserted before their target)."""
    conn.execute(
        "UPDATE project_tags SET alias_of = (SELECT a.id FROM project_tags a WHERE a.name = %s)"
        " WHERE name = %s AND alias_of IS NULL AND name <> %s",
        (alias_of, name, alias_of),
    )
