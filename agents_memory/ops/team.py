"""A team on one PostgreSQL, for the owner and for each person: ``mcp-agents-memory team``.

The admin (the role that owns the schema and runs migrations) sets the team up, adds and
removes people and the Cold Path's role; each person shares and unshares their projects and
hides a teammate's turn for themselves. What anyone may read or change is enforced by the
database (:mod:`agents_memory.store.team`, migration ``0021_team.sql``); this service turns
requests into those statements and answers with what a person needs to know — for a new
member, the ``DATABASE_URL`` to put in their settings. The password in it is made here,
handed to PostgreSQL (which keeps only its SCRAM hash) and printed once; it is never stored.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agents_memory.errors import TeamError
from agents_memory.store import team as team_store
from agents_memory.store.database import Database
from agents_memory.store.projects import resolve_project
from agents_memory.store.search.scope import resolve_p_tag
from agents_memory.store.team import Member, MemberKind, Whoami

PASSWORD_BYTES = 24
_URL_KEYS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "options")


@dataclass(frozen=True, slots=True)
class NewMember:
    """A member just added: their role and, when a password was made, the URL to use."""

    db_role: str
    kind: MemberKind
    database_url: str | None


@dataclass(frozen=True, slots=True)
class TeamReady:
    group: str
    admin_statements: list[str]
    """What the server's admin (a superuser) still runs so members' searches use the
    indexes (empty when done)."""


def init(conn: psycopg.Connection[Any]) -> TeamReady:
    """Set the team up (idempotent)."""
    with _committed(conn):
        group = team_store.init(conn)
    with _committed(conn):
        missing = team_store.leakproof_search(conn)
    return TeamReady(group, missing)


def index_advice(conn: psycopg.Connection[Any]) -> list[str]:
    """The statements a superuser still has to run for members' searches to use indexes
    (read only: the check of :func:`init` without trying)."""
    return team_store.search_not_leakproof(conn)


def add(
    conn: psycopg.Connection[Any],
    conninfo: str,
    db_role: str,
    *,
    kind: MemberKind = "person",
    user_name: str | None = None,
    existing_role: bool = False,
) -> NewMember:
    """Add a person (or the Cold Path's role). Unless ``existing_role``, a login role is
    created with a fresh password and the returned URL carries it (shown once)."""
    password = None if existing_role else secrets.token_urlsafe(PASSWORD_BYTES)
    try:
        with _committed(conn):
            team_store.add_member(conn, db_role, kind, password=password, user_name=user_name)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamError(
            "the owner role may not create or grant roles: ask the server's admin for "
            "`ALTER ROLE <owner> CREATEROLE`"
        ) from exc
    url = None if password is None else member_url(conninfo, db_role, password)
    return NewMember(db_role, kind, url)


def remove(conn: psycopg.Connection[Any], db_role: str) -> bool:
    """Revoke a member at once (their rows stay); ``False`` when not on the team."""
    with _committed(conn):
        removed = team_store.remove_member(conn, db_role)
    if removed:
        team_store.drop_role(conn, db_role)
    return removed


def share(conn: psycopg.Connection[Any], user_id: int, project: str) -> tuple[str, bool]:
    """Share the person's turns in ``project`` with the team: (canonical name, changed)."""
    name, tag_id = _project(conn, project)
    with _committed(conn):
        return name, team_store.share(conn, user_id, tag_id)


def unshare(conn: psycopg.Connection[Any], user_id: int, project: str) -> tuple[str, bool]:
    name, tag_id = _project(conn, project)
    with _committed(conn):
        return name, team_store.unshare(conn, user_id, tag_id)


@contextmanager
def _committed(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Commit what the block did (and what the caller's reads began), or roll it all back."""
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _project(conn: psycopg.Connection[Any], project: str) -> tuple[str, int]:
    """The canonical name and tag id ``project`` names (the one project resolver: an unknown
    name is refused naming the close ones)."""
    name = resolve_project(conn, project)
    tag = resolve_p_tag(conn, name)
    if tag is None:  # resolve_project found it a moment ago in this transaction
        raise TeamError(f"no project {project!r}")
    return tag.name, tag.canonical_id


def hide(conn: psycopg.Connection[Any], user_id: int, memory_id: int) -> bool:
    """Hide a teammate's shared turn for this person only."""
    with _committed(conn):
        return team_store.hide(conn, user_id, memory_id)


def members(conn: psycopg.Connection[Any]) -> list[Member]:
    return team_store.members(conn)


def own_projects(conn: psycopg.Connection[Any], user_id: int) -> list[str]:
    """The projects a person has turns in: what they may share."""
    return team_store.own_projects(conn, user_id)


def whoami(conn: psycopg.Connection[Any]) -> Whoami:
    return team_store.whoami(conn)


def describe(who: Whoami) -> str:
    """One line for ``doctor`` and ``team whoami``: the role and what it is to the team."""
    if who.kind == "person":
        shared = ", ".join(who.shares) if who.shares else "nothing yet"
        return f"{who.db_role}: a person of the team ({who.user_name}); shares {shared}"
    if who.kind == "coldpath":
        return f"{who.db_role}: the team's Cold Path (processes every person's rows)"
    if who.kind == "owner":
        team = f"admin of team {who.team}" if who.team else "no team set up"
        return f"{who.db_role}: owner of the schema ({team})"
    return f"{who.db_role}: not on the team (no access to the memory's tables)"


_WILDCARDS = ("*", "0.0.0.0", "::", "")  # noqa: S104 (addresses read, not bound)

SOCKET_ONLY = (
    "the embedded server listens on its own socket only, which no teammate can reach: set "
    "EMBEDDED_LISTEN (0.0.0.0, or this machine's address) and EMBEDDED_PORT (a free port), "
    "restart it (`mcp-agents-memory db stop`, then `db start`)"
)


def member_server(db: Database, listen: str | None) -> str:
    """The server members' URLs name: the admin's own, or the embedded server's TCP address
    (``listen``, or this machine's name when it listens on every address); refused while the
    embedded server listens on its socket only (that socket is this OS user's alone)."""
    if db.embedded is None:
        return db.conninfo
    info = db.embedded.running()
    if info is None or info.listen_host is None:
        raise TeamError(SOCKET_ONLY + ", and add the person again")
    named = [a.strip() for a in (listen or "").split(",") if a.strip() not in _WILDCARDS]
    host = named[0] if named else socket.getfqdn()
    dbname = str(conninfo_to_dict(db.conninfo).get("dbname") or "")
    return make_conninfo(host=host, port=info.port, dbname=dbname)


def socket_only(db: Database) -> bool:
    """Whether this is the embedded server reachable through its socket alone (``team init``
    says how to open it to teammates)."""
    if db.embedded is None:
        return False
    info = db.embedded.running()
    return info is None or info.listen_host is None


def member_url(conninfo: str, db_role: str, password: str) -> str:
    """The ``DATABASE_URL`` for ``db_role``: the admin's server, database and TLS settings
    with the member's role and password."""
    params = conninfo_to_dict(conninfo)
    host = str(params.get("host") or "localhost")
    port = params.get("port")
    dbname = str(params.get("dbname") or "")
    query = {k: str(params[k]) for k in _URL_KEYS if params.get(k)}
    netloc_host = host if not host.startswith("/") else ""
    if host.startswith("/"):
        query["host"] = host
    url = f"postgresql://{quote(db_role, safe='')}:{quote(password, safe='')}@{netloc_host}"
    if port:
        url += f":{port}"
    url += f"/{quote(dbname, safe='')}"
    return url + (f"?{urlencode(query)}" if query else "")
