"""A team on one PostgreSQL: the roles, who is who, and who shares which project.

The guarantee lives in the database (migration ``0021_team.sql``: row-level security on every
table whose rows carry their person), so it holds for a person with a raw ``psql`` session too.
This module only sets it up and reads it:

* ``init``: a group role for the team (no login), the privileges its members need, and the
  same for tables later migrations add (default privileges of the schema's owner);
* ``add_person`` / ``add_coldpath``: a login role in the group and its ``team_members`` row;
  the password is made by the caller, given to PostgreSQL and never stored here;
* ``remove_member``: the row goes (policies then give the role nothing, even in an open
  session), the role leaves the group, may no longer log in, and is dropped when it can be;
* ``share`` / ``unshare``: a person's turns in a project become readable by the team.

Every statement that names a role quotes it as an identifier; a password is passed as a
literal to ``CREATE ROLE`` only (PostgreSQL stores its SCRAM hash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import psycopg
from psycopg import sql

from agents_memory.errors import TeamError

ROLE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
MemberKind = Literal["person", "coldpath"]

_READ_ONLY = ("team_members", "schema_migrations")
"""Tables the team reads and only the admin (the schema's owner) writes."""


@dataclass(frozen=True, slots=True)
class Member:
    db_role: str
    kind: MemberKind
    user_name: str | None
    shares: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Whoami:
    """The connection's role and what it is to the team."""

    db_role: str
    kind: Literal["owner", "person", "coldpath", "other"]
    user_name: str | None
    team: str | None
    """The team's group role, ``None`` before ``team init``."""
    shares: tuple[str, ...]


def group_role(conn: psycopg.Connection[Any]) -> str:
    """The team's group role: ``am_team_`` and the database's name (roles are cluster-wide)."""
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    name = re.sub(r"[^a-z0-9_]", "_", str(row[0]).lower())
    return f"am_team_{name}"[:63]


def check_role_name(name: str) -> str:
    if not ROLE_NAME.match(name):
        raise TeamError(
            f"{name!r} is not a usable role name: lower-case letters, digits and _ "
            "(starting with a letter, at most 48)"
        )
    return name


def _exists(conn: psycopg.Connection[Any], role: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None


def _owner_check(conn: psycopg.Connection[Any]) -> None:
    row = conn.execute(
        "SELECT pg_has_role(current_user, tableowner, 'USAGE') FROM pg_tables"
        " WHERE tablename = 'memory' AND schemaname = current_schema()"
    ).fetchone()
    if row is None or not row[0]:
        raise TeamError("only the schema's owner (the team's admin) can change the team")


def init(conn: psycopg.Connection[Any]) -> str:
    """Create the team's group role (once) and grant it what members need; returns its name.
    Needs the owner role with CREATEROLE. See :func:`leakproof_search` for the indexes."""
    _owner_check(conn)
    group = group_role(conn)
    ident = sql.Identifier(group)
    try:
        if not _exists(conn, group):
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamError(
            "the owner role may not create roles: ask the server's admin for "
            "`ALTER ROLE <owner> CREATEROLE` (a managed service's main role usually has it)"
        ) from exc
    schema = sql.Identifier(_schema(conn))
    conn.execute(
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(_database(conn)), ident)
    )
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, ident))
    conn.execute(
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}").format(
            schema, ident
        )
    )
    conn.execute(
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(schema, ident)
    )
    conn.execute(
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT, INSERT, UPDATE, DELETE"
            " ON TABLES TO {}"
        ).format(schema, ident)
    )
    conn.execute(
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT USAGE, SELECT ON SEQUENCES TO {}"
        ).format(schema, ident)
    )
    for table in _READ_ONLY:
        conn.execute(
            sql.SQL("REVOKE INSERT, UPDATE, DELETE ON {} FROM {}").format(
                sql.Identifier(table), ident
            )
        )
    return group


SEARCH_OPERATORS = (("@@", "tsvector", "tsquery"), ("<=>", "halfvec", "halfvec"))
"""The operators a search filters and orders by with an index (full-text match, cosine
distance). Under row-level security PostgreSQL uses an index for an operator only when its
function is LEAKPROOF: it raises nothing and returns nothing but its answer."""


def search_not_leakproof(conn: psycopg.Connection[Any]) -> list[str]:
    """The statements that would mark the search operators' functions LEAKPROOF, for those
    not marked yet (an absent operator, e.g. without pgvector, needs none)."""
    found: list[str] = []
    for op, left, right in SEARCH_OPERATORS:
        row = conn.execute(
            "SELECT o.oprcode::regprocedure::text, p.proleakproof FROM pg_operator o"
            " JOIN pg_proc p ON p.oid = o.oprcode WHERE o.oprname = %s"
            " AND o.oprleft = to_regtype(%s) AND o.oprright = to_regtype(%s)",
            (op, left, right),
        ).fetchone()
        if row is not None and not row[1]:
            found.append(f"ALTER FUNCTION {row[0]} LEAKPROOF")
    return found


def leakproof_search(conn: psycopg.Connection[Any]) -> list[str]:
    """Mark the search operators' functions LEAKPROOF (a superuser's right), so a member's
    search uses the same indexes as the owner's; returns the statements still to run by the
    server's admin (empty when done)."""
    missing: list[str] = []
    for statement in search_not_leakproof(conn):
        try:
            with conn.transaction():
                conn.execute(statement.encode())
        except psycopg.errors.InsufficientPrivilege:
            missing.append(statement)
    return missing


def add_member(
    conn: psycopg.Connection[Any],
    db_role: str,
    kind: MemberKind,
    *,
    password: str | None,
    user_name: str | None = None,
) -> None:
    """A login role in the team's group (created with ``password`` unless it exists and
    ``password`` is ``None``) and its ``team_members`` row; a person gets a ``users`` row."""
    check_role_name(db_role)
    _owner_check(conn)
    group = group_role(conn)
    if not _exists(conn, group):
        raise TeamError("no team in this database yet: run `mcp-agents-memory team init` first")
    if conn.execute("SELECT 1 FROM team_members WHERE db_role = %s", (db_role,)).fetchone():
        raise TeamError(f"{db_role} is already on the team")
    ident = sql.Identifier(db_role)
    if _exists(conn, db_role):
        if password is not None:
            raise TeamError(f"the role {db_role} exists already: add it with --existing-role")
    elif password is None:
        raise TeamError(f"no role {db_role} on the server")
    else:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                ident, sql.Literal(password)
            )
        )
    conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), ident))
    user_id = None
    if kind == "person":
        name = user_name or db_role
        row = conn.execute(
            "INSERT INTO users (user_name) VALUES (%s) ON CONFLICT (user_name) DO UPDATE"
            " SET user_name = EXCLUDED.user_name RETURNING user_id",
            (name,),
        ).fetchone()
        assert row is not None
        user_id = int(row[0])
        if conn.execute(
            "SELECT db_role FROM team_members WHERE user_id = %s", (user_id,)
        ).fetchone():
            raise TeamError(f"the memory of {name!r} already belongs to another role")
    conn.execute(
        "INSERT INTO team_members (db_role, kind, user_id) VALUES (%s, %s, %s)",
        (db_role, kind, user_id),
    )


def remove_member(conn: psycopg.Connection[Any], db_role: str) -> bool:
    """Revoke ``db_role`` at once; ``False`` when it was not on the team. Its person's rows
    stay (the admin may purge them); its open sessions see nothing from the next statement."""
    _owner_check(conn)
    gone = conn.execute(
        "DELETE FROM team_members WHERE db_role = %s RETURNING 1", (db_role,)
    ).fetchone()
    if gone is None:
        return False
    if _exists(conn, db_role):
        ident = sql.Identifier(db_role)
        conn.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(group_role(conn)), ident))
        conn.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(ident))
    return True


def drop_role(conn: psycopg.Connection[Any], db_role: str) -> bool:
    """Drop a removed member's role when nothing holds it (after :func:`remove_member` was
    committed); ``False`` when it stays (it owns objects or still has sessions: those see
    nothing and may not log in again)."""
    busy = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (db_role,)
    ).fetchone()
    conn.commit()
    if busy and busy[0]:
        return False
    try:
        with conn.transaction():
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(db_role)))
    except psycopg.Error:
        return False
    return True


def share(conn: psycopg.Connection[Any], user_id: int, tag_id: int) -> bool:
    """The person's turns in the project ``tag_id`` become the team's; ``False`` if already."""
    row = conn.execute(
        "INSERT INTO project_shares (user_id, p_tag_id)"
        " VALUES (%s, canonical_project_tag_id(%s)) ON CONFLICT DO NOTHING RETURNING 1",
        (user_id, tag_id),
    ).fetchone()
    return row is not None


def unshare(conn: psycopg.Connection[Any], user_id: int, tag_id: int) -> bool:
    row = conn.execute(
        "DELETE FROM project_shares WHERE user_id = %s"
        " AND p_tag_id = canonical_project_tag_id(%s) RETURNING 1",
        (user_id, tag_id),
    ).fetchone()
    return row is not None


def hide(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> bool:
    """A teammate's shared turn hidden for ``user_id`` only (forgetting it is its owner's)."""
    row = conn.execute(
        "INSERT INTO hidden_memories (user_id, memory_id) SELECT %s, id FROM memory"
        " WHERE id = %s AND user_id <> %s ON CONFLICT DO NOTHING RETURNING 1",
        (user_id, memory_id, user_id),
    ).fetchone()
    return row is not None


def members(conn: psycopg.Connection[Any]) -> list[Member]:
    """Who is on the team and what each person shares."""
    rows = conn.execute(
        "SELECT t.db_role, t.kind, u.user_name,"
        "  coalesce(array_agg(p.name ORDER BY p.name) FILTER (WHERE p.name IS NOT NULL), '{}')"
        " FROM team_members t LEFT JOIN am_person_names() u ON u.user_id = t.user_id"
        " LEFT JOIN project_shares s ON s.user_id = t.user_id"
        " LEFT JOIN project_tags p ON p.id = s.p_tag_id"
        " GROUP BY t.db_role, t.kind, u.user_name ORDER BY t.kind DESC, t.db_role"
    ).fetchall()
    return [Member(str(r[0]), r[1], r[2], tuple(r[3])) for r in rows]


def whoami(conn: psycopg.Connection[Any]) -> Whoami:
    """What the connection's role is to the team (the owner, a person, the Cold Path)."""
    role_row = conn.execute("SELECT current_user").fetchone()
    assert role_row is not None
    role = str(role_row[0])
    group = group_role(conn)
    team = group if _exists(conn, group) else None
    row = conn.execute(
        "SELECT t.kind, u.user_name FROM team_members t"
        " LEFT JOIN am_person_names() u USING (user_id)"
        " WHERE t.db_role = %s",
        (role,),
    ).fetchone()
    if row is not None:
        shares = conn.execute(
            "SELECT p.name FROM project_shares s JOIN project_tags p ON p.id = s.p_tag_id"
            " WHERE s.user_id = am_me() ORDER BY 1"
        ).fetchall()
        return Whoami(role, row[0], row[1], team, tuple(str(s[0]) for s in shares))
    owner = conn.execute(
        "SELECT pg_has_role(current_user, tableowner, 'USAGE') FROM pg_tables"
        " WHERE tablename = 'memory' AND schemaname = current_schema()"
    ).fetchone()
    kind: Literal["owner", "other"] = "owner" if owner and owner[0] else "other"
    return Whoami(role, kind, None, team, ())


MEMBER_USER_ID = "SELECT user_id FROM team_members WHERE db_role = current_user AND kind = 'person'"
"""The person the connection's role is (no row for the owner and the Cold Path)."""


def member_user_id(conn: psycopg.Connection[Any]) -> int | None:
    """The person the connection's role is (``None`` for the owner and the Cold Path)."""
    row = conn.execute(MEMBER_USER_ID).fetchone()
    return int(row[0]) if row else None


def own_projects(conn: psycopg.Connection[Any], user_id: int) -> list[str]:
    """The canonical projects ``user_id`` has turns in (what they may share), by name."""
    rows = conn.execute(
        "SELECT DISTINCT t.name FROM (SELECT DISTINCT p_tag_id FROM memory"
        "  WHERE user_id = %s AND p_tag_id IS NOT NULL) m"
        " JOIN project_tags t ON t.id = canonical_project_tag_id(m.p_tag_id) ORDER BY 1",
        (user_id,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def person_names(conn: psycopg.Connection[Any]) -> dict[int, str]:
    """The team's people by user id (names only: profiles stay private)."""
    return {int(r[0]): str(r[1]) for r in conn.execute("SELECT * FROM am_person_names()")}


def person_named(conn: psycopg.Connection[Any], name: str) -> int | None:
    """The user id of the team's person ``name`` (their role or their name; any case)."""
    row = conn.execute(
        "SELECT n.user_id FROM am_person_names() n JOIN team_members t USING (user_id)"
        " WHERE lower(n.user_name) = lower(%(n)s) OR t.db_role = lower(%(n)s)"
        " ORDER BY (n.user_name = %(n)s) DESC LIMIT 1",
        {"n": name},
    ).fetchone()
    return int(row[0]) if row else None


def project_shared(conn: psycopg.Connection[Any], project: str, *people: int) -> bool:
    """Whether any of ``people`` shares ``project`` (a tag's name, an alias too)."""
    row = conn.execute(
        "SELECT bool_or(am_project_shared(%s, p, p)) FROM unnest(%s::bigint[]) p",
        (project, list(people)),
    ).fetchone()
    return bool(row and row[0])


def people_for_coldpath(conn: psycopg.Connection[Any]) -> list[int] | None:
    """As the team's Cold Path: every person's user id (the worker runs each job for each);
    ``None`` for any other role (the worker serves its settings' user)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM team_members WHERE db_role = current_user"
        " AND kind = 'coldpath')"
    ).fetchone()
    if not row or not row[0]:
        return None
    found = conn.execute(
        "SELECT user_id FROM team_members WHERE kind = 'person' ORDER BY user_id"
    ).fetchall()
    return [int(r[0]) for r in found]


def shared_view(
    conn: psycopg.Connection[Any], user_id: int
) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """What a search of ``user_id`` adds to their own rows: each teammate sharing a project,
    with its tags (every alias included). Empty without a team (one small query)."""
    rows = conn.execute(
        "SELECT owner_id, array_agg(tag_id ORDER BY tag_id) FROM am_shared_pairs()"
        " WHERE owner_id <> %s GROUP BY owner_id ORDER BY owner_id",
        (user_id,),
    ).fetchall()
    return tuple((int(r[0]), tuple(int(t) for t in r[1])) for r in rows)


def teammates_of(conn: psycopg.Connection[Any], ids: list[int], user_id: int) -> dict[int, str]:
    """For rows among ``ids`` that are not ``user_id``'s: their owner's name."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT m.id, u.user_name FROM memory m JOIN am_person_names() u"
        " ON u.user_id = m.user_id"
        " WHERE m.id = ANY(%s) AND m.user_id <> %s",
        (ids, user_id),
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def _schema(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_schema()").fetchone()
    assert row is not None
    return str(row[0])


def _database(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    return str(row[0])
