"""The team's guarantee covers every table that holds a person's rows, including tables later
migrations add: each table with a ``user_id`` column has row-level security and a policy, so a
new table cannot slip past it unnoticed. (The policies at work, with three real roles:
``tests/sharedserver/test_team.py``.)"""

from __future__ import annotations

from typing import Any

import psycopg

from agents_memory.store import team

NOT_A_PERSONS_ROWS = {"team_members"}
"""Who is on the team: readable by every member (it decides what they see), written only by
the admin (its privileges are revoked from the team's group)."""


def test_every_table_with_a_persons_rows_has_row_level_security(
    conn: psycopg.Connection[Any],
) -> None:
    rows = conn.execute(
        "SELECT c.relname, c.relrowsecurity,"
        "  (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        "  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid"
        "   AND a.attname = 'user_id' AND NOT a.attisdropped)"
    ).fetchall()
    tables = {name: (secured, policies) for name, secured, policies in rows}
    assert {"memory", "actions", "users", "task_pin_events"} <= set(tables)
    unprotected = {
        name
        for name, (secured, policies) in tables.items()
        if name not in NOT_A_PERSONS_ROWS and not (secured and policies)
    }
    assert not unprotected, (
        f"tables holding a person's rows without row-level security: {sorted(unprotected)}; "
        "add them to the team migration's policies"
    )
    # memory_history has no user_id of its own: its rows follow their turn's.
    history = conn.execute(
        "SELECT relrowsecurity FROM pg_class WHERE relname = 'memory_history'"
    ).fetchone()
    assert history == (True,)


def test_a_single_person_set_up_has_no_team_and_no_members(
    conn: psycopg.Connection[Any],
) -> None:
    who = team.whoami(conn)
    assert who.kind == "owner" and who.team is None
    assert team.member_user_id(conn) is None
    assert team.people_for_coldpath(conn) is None
    assert team.shared_view(conn, 1) == ()
