"""Whose rows and which of them a search looks at: the user, the project tag through its
aliases, and the WHERE conditions every part of a search shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from agents_memory.store import team
from agents_memory.store.search.types import SearchFilters


def find_user_id(conn: psycopg.Connection[Any], user_name: str) -> int | None:
    """The id of ``user_name`` without creating it (a search must not write); a team
    member's role is its person, whatever name its settings carry."""
    row = conn.execute(
        f"SELECT coalesce(({team.MEMBER_USER_ID}),"
        " (SELECT user_id FROM users WHERE user_name = %s))",
        (user_name,),
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


@dataclass(frozen=True, slots=True)
class TagFilter:
    """A project tag resolved through its aliases: the canonical tag and every tag that is it."""

    canonical_id: int
    name: str
    member_ids: list[int]


def resolve_p_tag(conn: psycopg.Connection[Any], name: str) -> TagFilter | None:
    """The project tag ``name`` (any case; an alias resolves to its canonical tag), or ``None``
    when nothing is tagged with it or with an alias of it."""
    row = conn.execute(
        "WITH target AS (SELECT canonical_project_tag_id(id) AS cid FROM project_tags"
        "  WHERE lower(name) = lower(%(n)s) ORDER BY (name = %(n)s) DESC, id LIMIT 1)"
        " SELECT t.cid, c.name, (SELECT array_agg(p.id) FROM project_tags p"
        "  WHERE canonical_project_tag_id(p.id) = t.cid)"
        " FROM target t JOIN project_tags c ON c.id = t.cid",
        {"n": name},
    ).fetchone()
    if row is None:
        return None
    return TagFilter(int(row[0]), str(row[1]), [int(i) for i in row[2]])


def filter_sql(filters: SearchFilters, tag: TagFilter | None, user_id: int) -> sql.Composable:
    """The WHERE conditions every arm shares, on alias ``m``, their values written in: a plan
    made once for the statement is then made for this user's and these filters' row counts."""
    own = sql.SQL("m.user_id = {}").format(sql_literal(user_id))
    if filters.shared:
        teammates = [
            sql.SQL("(m.user_id = {} AND m.p_tag_id = ANY({}::bigint[]))").format(
                sql_literal(owner), sql_literal(list(tags))
            )
            for owner, tags in filters.shared
        ]
        own = sql.SQL("({})").format(sql.SQL(" OR ").join([own, *teammates]))
    parts: list[sql.Composable] = [own]
    if filters.as_of is not None:  # the rows of that moment, slot values live then
        at = sql_literal(filters.as_of)
        parts.append(sql.SQL("m.message_at < {}").format(at))
        parts.append(sql.SQL("(m.superseded_at IS NULL OR m.superseded_at >= {})").format(at))
        parts.append(sql.SQL("(m.expires_at IS NULL OR m.expires_at >= {})").format(at))
        if not filters.include_archived:
            parts.append(sql.SQL("(m.is_active OR m.archived_at >= {})").format(at))
    elif not filters.include_archived:
        parts.append(sql.SQL("m.is_active"))
    if filters.role is not None:
        parts.append(sql.SQL("m.role = {}").format(sql_literal(filters.role)))
    if filters.agent_platform not in (None, "", "*"):
        parts.append(sql.SQL("m.agent_platform = {}").format(sql_literal(filters.agent_platform)))
    if filters.device_scope == "local":
        parts.append(
            sql.SQL("(m.device_name = {} OR m.is_pinned)").format(sql_literal(filters.device_name))
        )
    if filters.git_root is not None:
        parts.append(sql.SQL("m.git_root = {}").format(sql_literal(filters.git_root)))
    if tag is not None:
        parts.append(sql.SQL("m.p_tag_id = ANY({}::bigint[])").format(sql_literal(tag.member_ids)))
    if filters.date_range is not None and filters.date_range.start is not None:
        parts.append(sql.SQL("m.message_at >= {}").format(sql_literal(filters.date_range.start)))
    if filters.date_range is not None and filters.date_range.end is not None:
        parts.append(sql.SQL("m.message_at < {}").format(sql_literal(filters.date_range.end)))
    if filters.only_ids is not None:
        parts.append(
            sql.SQL("m.id = ANY({}::bigint[])").format(sql_literal(list(filters.only_ids)))
        )
    return sql.SQL(" AND ").join(parts)


def sql_literal(value: Any) -> sql.Composable:
    """``value`` quoted as an SQL literal, its ``%`` doubled: the statements carrying it are
    executed with parameters (``params`` may be empty), so psycopg reads ``%`` as a
    placeholder's start and ``%%`` as one ``%``."""
    return sql.SQL(sql.Literal(value).as_string(None).replace("%", "%%"))
