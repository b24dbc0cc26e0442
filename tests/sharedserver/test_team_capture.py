"""Capture's own state in a team is each person's (migration 0023): two teammates whose
machines look alike — the same DEVICE_NAME (the shared servers' tests give every machine one)
and the same transcript path — capture the same file through their own roles, and neither's
cursor, pause or forget changes what the other captures. Real roles made by `team add`, the
real `memory-capture` and `forget` commands, raw SQL as each person."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from agents_memory.store.capture import pause as pause_store
from agents_memory.store.capture import tombstones as tombstone_store
from tests.sharedserver.conftest import run_cli
from tests.sharedserver.test_team import Team, _claude_session, _git_repo, _ok, team

pytestmark = pytest.mark.sharedserver
__all__ = ["team"]  # the fixture, used by name

DEVICE = "shared-laptop"
SESSION = "s-same"


def _rows(team: Team, who: str) -> list[str]:
    with team.raw(who) as conn:
        found = conn.execute(
            "SELECT message FROM memory WHERE session_id = %s AND user_id = am_me() ORDER BY id",
            (SESSION,),
        ).fetchall()
    return [str(r[0]) for r in found]


def _keys(team: Team) -> list[tombstone_store.TurnKey]:
    with team.admin() as admin:
        found = admin.execute(
            "SELECT DISTINCT ON (external_uuid) external_uuid, agent_platform, session_id, role"
            " FROM memory WHERE session_id = %s ORDER BY external_uuid",
            (SESSION,),
        ).fetchall()
    return [(str(k), str(p), s, str(r)) for k, p, s, r in found]


def test_cursors_pauses_and_tombstones_are_each_persons(team: Team, tmp_path: Path) -> None:
    # One home path for both: two machines with the same user and DEVICE_NAME.
    home = tmp_path / "same-home"
    home.mkdir()
    alice = {**team.alice, "HOME": str(home), "DEVICE_NAME": DEVICE}
    bob = {**team.bob, "HOME": str(home), "DEVICE_NAME": DEVICE}
    repo = _git_repo(tmp_path / "repos" / "gamma", "https://git.example.com/team/gamma.git")
    _claude_session(
        tmp_path / "draft",
        SESSION,
        repo,
        [
            ("where is the ledger rotated?", "The ledger rotates at the pelican checkpoint."),
            ("and the backup?", "Nightly, to the osprey bucket."),
        ],
    )
    (drafted,) = (tmp_path / "draft").rglob("*.jsonl")
    lines = drafted.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript = home / drafted.relative_to(tmp_path / "draft")
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(lines[:2]), encoding="utf-8")  # the first turn so far

    _ok(run_cli("memory-capture", ["backfill"], alice))
    assert len(_rows(team, "alice")) == 2
    # Alice forgets the session: her turns go and their keys are buried — for her.
    _ok(run_cli("mcp-agents-memory", ["forget", "--session", SESSION, "--yes"], alice))
    assert _rows(team, "alice") == []

    # Bob captures the same file at the same path on a device of the same name: Alice's
    # cursor (at the file's end) and her tombstones are not his.
    _ok(run_cli("memory-capture", ["backfill"], bob))
    assert len(_rows(team, "bob")) == 2
    keys = _keys(team)
    assert len(keys) == 2
    with team.raw("alice") as conn:
        assert tombstone_store.forgotten_among(conn, keys) == frozenset(keys)
    with team.raw("bob") as conn:
        assert tombstone_store.forgotten_among(conn, keys) == frozenset()

    # Alice pauses capture on her device; Bob's device of the same name keeps capturing.
    _ok(run_cli("memory-capture", ["pause"], alice))
    with team.raw("bob") as conn:
        assert pause_store.paused_until(conn, DEVICE, "claude-code") == (False, None)
    with team.raw("alice") as conn:
        assert pause_store.paused_until(conn, DEVICE, "claude-code")[0]
    with transcript.open("a", encoding="utf-8") as growing:
        growing.write("".join(lines[2:]))
    _ok(run_cli("memory-capture", ["backfill"], bob))
    _ok(run_cli("memory-capture", ["backfill"], alice))
    assert len(_rows(team, "bob")) == 4
    assert _rows(team, "alice") == []  # paused: passed over, never captured later

    # Raw SQL: each person reads and changes only their own capture state.
    with team.admin() as admin:
        ids = dict(admin.execute("SELECT db_role, user_id FROM team_members").fetchall())
        per_person = {
            table: dict(
                admin.execute(f"SELECT user_id, count(*) FROM {table} GROUP BY 1").fetchall()
            )
            for table in ("capture_cursors", "capture_pauses", "tombstones")
        }
    alice_id, bob_id = ids[team.role("alice")], ids[team.role("bob")]
    assert per_person["capture_pauses"] == {alice_id: 1}
    assert set(per_person["capture_cursors"]) == {alice_id, bob_id}
    assert set(per_person["tombstones"]) == {alice_id}  # forgotten and paused turns: hers
    with team.raw("bob") as conn:
        for table in ("capture_cursors", "capture_pauses", "tombstones"):
            seen = conn.execute(f"SELECT DISTINCT user_id FROM {table}").fetchall()
            assert {r[0] for r in seen} <= {bob_id}, table
        assert conn.execute("DELETE FROM capture_pauses").rowcount == 0
        assert conn.execute("DELETE FROM tombstones").rowcount == 0
        assert (
            conn.execute(
                'UPDATE capture_cursors SET "offset" = 0 WHERE user_id = %s', (alice_id,)
            ).rowcount
            == 0
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO capture_pauses (device_name, platform, user_id) VALUES (%s, '*', %s)",
                (DEVICE, alice_id),
            )
