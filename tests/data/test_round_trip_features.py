"""Every feature survives a round trip: a pool using all of them (:mod:`tests.data.features`)
exported with its history, imported into an empty database, exported again gives the same
data members byte for byte, and the imported pool holds the same slots (superseded values
pointing at their successor's new id), expiries, pins, tombstones and registry entries.
Through the real console script."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.ops import bundle_format as fmt
from tests.data.features import EXPIRING, SLOT, SLOT_VALUES, populate_features
from tests.data.pool import machine_env, run

_SLOTS = (
    "SELECT m.message, m.slot, m.is_active, m.expires_at, s.message FROM memory m"
    " LEFT JOIN memory s ON s.id = m.superseded_by WHERE m.slot IS NOT NULL"
    " OR m.expires_at IS NOT NULL ORDER BY m.message"
)
_PINS = (
    "SELECT c.title, e.event, e.status, e.note, e.from_agent, e.to_agent, e.project,"
    " e.payload, e.device_name, e.created_at FROM task_pin_events e"
    " JOIN task_pin_events c ON c.id = e.pin_id ORDER BY c.title, e.id"
)
_TOMBSTONES = (
    "SELECT external_uuid, content_sha256, reason FROM tombstones ORDER BY 1",
    "SELECT agent_platform, session_id, external_key FROM action_tombstones ORDER BY 3",
)
_REGISTRY = "SELECT name, kind, paused, description FROM project_tags ORDER BY name"


def _state(url: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(url) as conn:
        queries = {"slots": _SLOTS, "pins": _PINS, "registry": _REGISTRY}
        queries.update(tombstones=_TOMBSTONES[0], action_tombstones=_TOMBSTONES[1])
        return {name: conn.execute(q).fetchall() for name, q in queries.items()}


def _members(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n != fmt.MANIFEST}


def test_every_feature_survives_a_round_trip(
    make_settings: Any, db_url: str, empty_db_url: str, tmp_path: Path
) -> None:
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    with psycopg.connect(db_url) as conn:
        populate_features(make_settings(database_url=db_url), home_a, conn)
    first, second = tmp_path / "first.zip", tmp_path / "second.zip"
    env_a, env_b = machine_env(home_a, db_url), machine_env(home_b, empty_db_url)

    exported = run(env_a, "export", str(first), "--include-archived")
    assert exported.returncode == 0, exported.stderr
    imported = run(env_b, "import", str(first))
    assert imported.returncode == 0, imported.stderr
    again = run(env_b, "export", str(second), "--include-archived")
    assert again.returncode == 0, again.stderr

    one, two = _members(first), _members(second)
    assert sorted(one) == sorted(fmt.member(t) for t in fmt.TABLES)
    for name in one:
        assert one[name] == two[name], name
    assert all(one[fmt.member(t)] for t in fmt.TABLES), [
        t for t in fmt.TABLES if not one[fmt.member(t)]
    ]

    before, after = _state(db_url), _state(empty_db_url)
    assert after == before
    old, new = SLOT_VALUES
    slots = {row[0]: row for row in after["slots"]}
    assert slots[old][1:3] == (SLOT, False) and slots[old][4] == new  # history, remapped
    assert slots[new][1:3] == (SLOT, True) and slots[new][4] is None  # the live value
    assert slots[EXPIRING][3] is not None
    assert [row[2] for row in after["pins"]] == ["pending", "in_progress", "done", "pending"]
    assert after["tombstones"] and after["action_tombstones"]
    assert ("blog", "project", True, "The blog") in after["registry"]

    twice = run(env_b, "import", str(first))  # idempotent: everything present
    assert twice.returncode == 0, twice.stderr
    assert _state(empty_db_url) == before
