"""Writing a bundle's rows into the pool: idempotent, with the bundle's names (memory keys, tag
names, user names) remapped to this database's ids.

* A memory is found by its key: ``external_uuid``, or for a row of this database without
  one, the key :data:`~agents_memory.store.owner.bundle.KEY_SQL` derives (so a bundle imported back
  into the database it came from finds its rows). :func:`stored_turns` says what holds each key
  (its session, role and text, and the bundle line that brought it in this import); the caller
  decides (:mod:`agents_memory.ops.import_memories`) and :func:`insert_memories` stores the new
  ones, never over a stored row. :func:`remember_keys` records which row each bundle key became,
  so edits, summaries and suggestions that name a memory by its key find that row.
* Every other table is inserted only where an equal row (by its natural key) is missing.
* Memories go through a staging table by ``COPY``, a batch at a time; the rest row by row.

The caller owns the transaction (an import is one transaction; ``--dry-run`` rolls it back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from agents_memory.store.memories import AdmittedText
from agents_memory.store.owner import bundle_extra
from agents_memory.store.owner.bundle import KEY_SQL

T = TypeVar("T")


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
    ("slot", "text"),
    ("expires_at", "timestamptz"),
    ("superseded_at", "timestamptz"),
)
_STAGED: Final = (
    ("external_uuid", "text"),
    ("user_name", "text"),
    ("message", "text"),
    ("raw_message", "text"),
    *_COLUMNS,
    ("embedding_model", "text"),
    ("embedding", "text"),
    ("superseded_by", "text"),
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
_IMPORT_KEYS: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS import_keys (bundle_key text NOT NULL, key text NOT NULL,"
    " line int NOT NULL, imported bool NOT NULL) ON COMMIT DROP"
)
"""Each bundle memory row that is in the pool after this import (imported or present): its
key in the bundle, its key here (another when it was stored under a scoped key), its line."""
_KEY_OF: Final = (
    "coalesce((SELECT b.key FROM import_keys b WHERE b.bundle_key = {k} ORDER BY b.line"
    " LIMIT 1), {k})"
)
"""The key here of the row the bundle names ``{k}`` (its first row with that key)."""
_ID_OF: Final = (
    "(SELECT coalesce((SELECT i.id FROM memory i WHERE i.external_uuid = r.key),"
    " (SELECT l.id FROM import_local_keys l WHERE l.key = r.key)) FROM (SELECT "
    + _KEY_OF
    + " AS key) r)"
)
"""This database's memory id for the bundle key ``{k}`` (NULL when it has no such memory)."""
ID_OF_KEY: Final = _ID_OF
""":data:`_ID_OF` for the other tables' imports (:mod:`.bundle_actions`)."""


def prepare(conn: psycopg.Connection[Any]) -> None:
    """Staging for this transaction: the memory staging table and the derived keys of the
    rows that have no ``external_uuid`` (taken before anything is inserted)."""
    conn.execute(_STAGE_TABLE)
    conn.execute(_LOCAL_KEYS)
    conn.execute("CREATE INDEX IF NOT EXISTS import_local_keys_key ON import_local_keys (key)")
    conn.execute(_IMPORT_KEYS)
    conn.execute("CREATE INDEX IF NOT EXISTS import_keys_bundle ON import_keys (bundle_key, line)")
    conn.execute("CREATE INDEX IF NOT EXISTS import_keys_key ON import_keys (key)")


def _insert_sql(vectors: bool) -> str:
    inserted = ["external_uuid", "message", "raw_message"]
    inserted += [c for c, _t in _COLUMNS if c != "p_tag"]
    columns = ["user_id", "p_tag_id", *inserted]
    values = ["u.user_id", "t.id", *(_SLOT if c == "slot" else f"s.{c}" for c in inserted)]
    columns.append("superseded_by")
    values.append(_ID_OF.format(k="s.superseded_by"))
    if vectors:
        columns += ["embedding_model", "embedding"]
        values += ["s.embedding_model", "s.embedding::halfvec"]
    return (
        f"INSERT INTO memory ({', '.join(columns)}) SELECT {', '.join(values)}"
        " FROM memory_import s JOIN users u ON u.user_name = s.user_name"
        " LEFT JOIN project_tags t ON t.name = s.p_tag"
        " ON CONFLICT (external_uuid) DO NOTHING RETURNING external_uuid"
    )


_SLOT: Final = (
    "CASE WHEN s.superseded_by IS NULL AND s.is_active AND EXISTS (SELECT 1 FROM memory l"
    " WHERE l.user_id = u.user_id AND l.slot = s.slot AND l.superseded_by IS NULL"
    " AND l.is_active) THEN NULL ELSE s.slot END"
)
"""A row's slot, unless it would be a second live value of a slot this pool fills (this pool's
value stays live; the row comes in as a plain pinned fact, :func:`slot_clashes`)."""
_INSERT: Final = {True: _insert_sql(True), False: _insert_sql(False)}


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """What holds a key in the pool: the row's platform, session, role and text, and the line
    of the bundle whose row this import stored under it (``None``: it was here before)."""

    agent_platform: str | None
    session_id: str | None
    role: str | None
    message: str
    line: int | None


def stored_turns(conn: psycopg.Connection[Any], keys: Sequence[str]) -> dict[str, StoredTurn]:
    """The stored row of each of ``keys`` that the pool holds (by ``external_uuid``, or the
    derived key of a row without one)."""
    rows = conn.execute(
        "SELECT k.key, m.agent_platform, m.session_id, m.role, m.message,"
        " (SELECT min(b.line) FROM import_keys b WHERE b.key = k.key AND b.imported)"
        " FROM (SELECT DISTINCT x AS key FROM unnest(%s::text[]) AS x) k"
        " JOIN memory m ON m.id = coalesce("
        "  (SELECT i.id FROM memory i WHERE i.external_uuid = k.key),"
        "  (SELECT l.id FROM import_local_keys l WHERE l.key = k.key))",
        (list(keys),),
    ).fetchall()
    return {str(r[0]): StoredTurn(r[1], r[2], r[3], str(r[4]), r[5]) for r in rows}


def insert_memories(
    conn: psycopg.Connection[Any], rows: Sequence[ImportedMemory], *, vectors: bool
) -> set[str]:
    """Insert ``rows`` (each under its ``external_uuid``, which the caller found free); with
    ``vectors`` their embeddings are kept. The keys inserted: a key stored meanwhile by
    another writer is left to that row."""
    if not rows:
        return set()
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
                    row.values.get("superseded_by"),
                )
            )
    return {str(r[0]) for r in conn.execute(_INSERT[vectors], prepare=False).fetchall()}


def slot_clashes(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """``(key, slot)`` of the last batch's rows that came in without their slot (this pool's
    live value of that slot stays; see :data:`_SLOT`)."""
    rows = conn.execute(
        "SELECT s.external_uuid, s.slot FROM memory_import s"
        " JOIN memory m ON m.external_uuid = s.external_uuid"
        " WHERE s.slot IS NOT NULL AND m.slot IS NULL ORDER BY 1"
    ).fetchall()
    return [(str(k), str(v)) for k, v in rows]


def lost_successors(conn: psycopg.Connection[Any], keys: Sequence[str]) -> list[tuple[str, str]]:
    """``(key, successor)`` of the last batch's rows among ``keys`` (inserted) whose
    successor (the value that superseded them) is in neither pool nor bundle."""
    rows = conn.execute(
        "SELECT s.external_uuid, s.superseded_by FROM memory_import s"
        " JOIN memory m ON m.external_uuid = s.external_uuid"
        " WHERE s.superseded_by IS NOT NULL AND m.superseded_by IS NULL"
        " AND s.external_uuid = ANY(%s) ORDER BY 1",
        (list(keys),),
    ).fetchall()
    return [(str(k), str(v)) for k, v in rows]


def remember_keys(
    conn: psycopg.Connection[Any], rows: Sequence[tuple[str, str, int, bool]]
) -> None:
    """Record ``(bundle key, key here, line, imported)`` for rows now in the pool."""
    if not rows:
        return
    with conn.cursor().copy("COPY import_keys (bundle_key, key, line, imported) FROM STDIN") as cp:
        for row in rows:
            cp.write_row(row)


def memory_known(conn: psycopg.Connection[Any], key: str) -> bool:
    """Whether the pool holds the memory the bundle names ``key``."""
    row = conn.execute("SELECT " + _ID_OF.format(k="%(k)s::text"), {"k": key}).fetchone()
    return row is not None and row[0] is not None


def user_names(conn: psycopg.Connection[Any]) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT user_name FROM users")}


def tag_names(conn: psycopg.Connection[Any]) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM project_tags")}


def device_names(conn: psycopg.Connection[Any]) -> set[str]:
    """The device names the pool's memories carry."""
    rows = conn.execute("SELECT DISTINCT device_name FROM memory WHERE device_name IS NOT NULL")
    return {str(r[0]) for r in rows}


# --- users and profiles ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UserMerge:
    """What one bundle user did: ``created``, or the profile fields it ``filled`` (empty here)
    and those that ``differ`` (set to other text here, which stays)."""

    created: bool
    filled: tuple[str, ...] = ()
    differ: tuple[str, ...] = ()


_PROFILE: Final = ("core_profile", "sub_profile")


def merge_user(conn: psycopg.Connection[Any], row: dict[str, Any]) -> UserMerge:
    """A user: new, or present with its empty profile fields filled from the bundle; a profile
    field set to other text here is a conflict (this database's text stays)."""
    row = {"created_at": None, "updated_at": None, **row}  # older bundles carry no times
    created = conn.execute(
        "INSERT INTO users (user_name, core_profile, sub_profile, librarian_last_run_at,"
        " librarian_msg_count_at_run, created_at, updated_at) VALUES (%(user_name)s,"
        " %(core_profile)s, %(sub_profile)s, %(librarian_last_run_at)s,"
        " %(librarian_msg_count_at_run)s, coalesce(%(created_at)s::timestamptz, now()),"
        " coalesce(%(updated_at)s::timestamptz, now()))"
        " ON CONFLICT (user_name) DO NOTHING RETURNING user_id",
        row,
    ).fetchone()
    if created is not None:
        return UserMerge(created=True, filled=tuple(f for f in _PROFILE if row[f] is not None))
    here = conn.execute(
        "SELECT core_profile, sub_profile FROM users WHERE user_name = %s", (row["user_name"],)
    ).fetchone()
    assert here is not None
    pairs = list(zip(_PROFILE, here, strict=True))
    differ = tuple(f for f, mine in pairs if mine is not None and row[f] not in (None, mine))
    filled = tuple(f for f, mine in pairs if mine is None and row[f] is not None)
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
    return UserMerge(created=False, filled=filled, differ=differ)


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
        + _ID_OF.format(k="%(memory)s::text")
        + " AS id) k WHERE k.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory_history h"
        "   WHERE h.memory_id = k.id AND h.created_at = %(created_at)s::timestamptz"
        "   AND h.old_message = %(old_message)s::text) RETURNING id"
    ),
    "tag_summaries": (
        "INSERT INTO tag_summaries (user_id, p_tag_id, d_tag, period_start, period_end,"
        " summary, source_ids, model, stale, created_at, updated_at)"
        " SELECT u.user_id, t.id, %(d_tag)s::text, %(period_start)s::timestamptz,"
        " %(period_end)s::timestamptz, %(summary)s::text,"
        " ARRAY(SELECT y.id FROM (SELECT x.n, "
        + _ID_OF.format(k="x.k")
        + " AS id FROM unnest(%(sources)s::text[]) WITH ORDINALITY AS x(k, n)) y"
        "   WHERE y.id IS NOT NULL ORDER BY y.n), %(model)s::text,"
        " coalesce(%(stale)s::bool, false), %(created_at)s::timestamptz,"
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


class RowRefused(Exception):
    """The database refused one bundle row (a wrong type, a NUL byte, a broken check)."""


def guarded(conn: psycopg.Connection[Any], work: Callable[[], T]) -> T:
    """``work()`` in a savepoint: a row the database refuses raises :class:`RowRefused` with
    its reason, and the import's transaction goes on without it."""
    try:
        with conn.transaction():
            return work()
    except KeyError as exc:
        raise RowRefused(f"it has no {exc.args[0]!r} field") from None
    except (psycopg.DataError, psycopg.IntegrityError, psycopg.ProgrammingError) as exc:
        raise RowRefused(str(exc).split("\n", 1)[0]) from None
    except (ValueError, TypeError) as exc:
        raise RowRefused(str(exc).split("\n", 1)[0]) from None


def insert_row(conn: psycopg.Connection[Any], table: str, row: dict[str, Any]) -> bool:
    """Insert one bundle row of ``table`` unless an equal one is there; True when inserted."""
    if table in bundle_extra.INSERTS:
        return bundle_extra.insert_row(conn, table, row)
    if "signals" in row:
        row = {**row, "signals": Jsonb(row["signals"])}
    if table == "tag_summaries":
        row = {"stale": False, **row}  # a bundle written before summaries said so
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
