"""The bundle carries every table and column the owner made or the Cold Path derived: each
column of the migrated schema is a field of a bundle member, or deliberately left out (the
commented :data:`NOT_EXPORTED`). A migration that adds a table or a column fails here, naming
it, until the export writes it (:mod:`agents_memory.store.owner.bundle`) and the import reads
it, or it is added below with the reason it is left out."""

from __future__ import annotations

from typing import Any, Final

import psycopg

from agents_memory.ops import bundle_format as fmt
from agents_memory.store.owner.bundle import QUERIES, ExportFilter

MEMBER_OF: Final = {
    "users": "users",
    "profile_history": "profile_history",
    "project_tags": "project_tags",
    "memory": "memory",
    "memory_history": "memory_history",
    "tag_summaries": "tag_summaries",
    "project_tag_alias_suggestions": "alias_suggestions",
    "project_tag_new_suggestions": "new_tag_suggestions",
    "actions": "actions",
    "task_pin_events": "task_pins",
    "tombstones": "tombstones",
    "action_tombstones": "action_tombstones",
}
"""The member that carries each exported table."""

RENAMED: Final = {
    # database ids become the names a bundle carries (a user's name, a tag's name, a memory's key)
    "user_id": "user_name",
    "p_tag_id": "p_tag",
    "alias_of": "alias_of",
    "memory_id": "memory",
    "source_ids": "sources",
    "source_tag_id": "source_tag",
    "target_tag_id": "target_tag",
    "evidence_memory_ids": "evidence",
    "conflict_memory_ids": "conflicts",
    "project_tag_id": "project_tag",
    "pin_id": "pin",
}
RENAMED_IN: Final = {
    ("actions", "memory_id"): "turn",
    ("memory", "embedding"): "vectors.embedding",
    ("memory", "embedding_model"): "vectors.model",
}

NOT_EXPORTED: Final[dict[str, str]] = {
    # machine state: one machine's files, pauses and jobs, not memory
    "meta": "the database's own stamps (schema version, embedding model): the manifest says them",
    "schema_migrations": "which migrations ran here: the manifest's schema_version says it",
    "capture_cursors": "where capture stopped in this machine's transcript files",
    "capture_pauses": "this machine's capture pause",
    "coldpath_runs": "the Cold Path jobs' last runs (bookkeeping)",
    "llm_usage": "today's LLM spend (bookkeeping)",
    "search_lexemes": "word statistics the Cold Path derives again from the rows",
    "session_summaries": "derived from a session's turns: the Cold Path writes them again",
    "prompt_recalls": "what each prompt and brief was given: a 30-day log that status reads",
    # a team's access rules: this server's roles; a bundle is one person's memory
    "team_members": "which of this server's login roles is which person (roles do not travel)",
    "project_shares": "what a person shares with this server's team (set again with team share)",
    "hidden_memories": "a teammate's turns hidden on this server (another person's rows)",
    "task_pin_events.to_user_id": "the teammate a pin is for on this server (a person here)",
    "tombstones.user_id": "whose tombstone on this server: an import's are the importer's",
    # (every table's own serial ``id`` is left out too: a bundle names rows by key and name)
    # memory: the Cold Path's bookkeeping and what is derived again on import
    "memory.cold_error": "the Cold Path's last failure on this database",
    "memory.cold_attempts": "the Cold Path's retries on this database",
    "memory.cold_next_at": "the Cold Path's retry cooldown on this database",
    "memory.fts": "generated from the text",
    # provenance for forget: an imported text's sources are unknown here (NULL), which forget
    # treats as "any turn said before it" (migrations 0011 and 0013 say so)
    "users.core_profile_sources": "imported profiles' sources are unknown (NULL) by design",
    "users.sub_profile_sources": "imported profiles' sources are unknown (NULL) by design",
    "profile_history.source_ids": "imported profile history's sources are unknown by design",
    "project_tag_new_suggestions.source_ids": "imported suggestions' sources are unknown",
}


def _schema(conn: psycopg.Connection[Any]) -> dict[str, list[str]]:
    rows = conn.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c"
        " JOIN information_schema.tables t ON t.table_schema = c.table_schema"
        "  AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'"
        " WHERE c.table_schema = current_schema() ORDER BY 1, c.ordinal_position"
    ).fetchall()
    tables: dict[str, list[str]] = {}
    for table, column in rows:
        tables.setdefault(str(table), []).append(str(column))
    return tables


def _fields(conn: psycopg.Connection[Any], member: str) -> set[str]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM ({QUERIES[member]}) q LIMIT 0", ExportFilter().params())
        return {d.name for d in cur.description or ()}


def test_every_table_and_column_is_in_the_bundle_or_left_out_on_purpose(
    conn: psycopg.Connection[Any],
) -> None:
    assert set(MEMBER_OF.values()) == set(fmt.TABLES)
    fields = {m: _fields(conn, m) for m in (*fmt.TABLES, fmt.VECTORS)}
    missing = []
    for table, columns in _schema(conn).items():
        if table in NOT_EXPORTED:
            continue
        member = MEMBER_OF.get(table)
        if member is None:
            missing.append(
                f"table {table}: no bundle member carries it (add a member to"
                " bundle_format.TABLES, or to NOT_EXPORTED with its reason)"
            )
            continue
        for column in columns:
            if column == "id" or f"{table}.{column}" in NOT_EXPORTED:
                continue
            where = RENAMED_IN.get((table, column), RENAMED.get(column, column))
            owner, _dot, name = where.rpartition(".")
            if name not in fields[owner or member]:
                missing.append(
                    f"column {table}.{column}: not in bundle member"
                    f" {fmt.member(owner or member)} (as {name!r}), nor in NOT_EXPORTED"
                )
    assert not missing, "\n".join(missing)
