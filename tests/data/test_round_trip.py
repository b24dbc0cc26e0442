"""Export a populated pool, import it into an empty database on another home, export again:
the data members are byte-identical. Through the real console script."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.ops import bundle_format as fmt
from tests.data.pool import machine_env, populate, run

_FEATURES_POOL_ONLY = frozenset({"task_pins", "tombstones", "action_tombstones"})
"""Members this pool leaves empty (test_round_trip_features fills every member)."""


def _members(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n != fmt.MANIFEST}


def _manifest(bundle: Path) -> dict[str, Any]:
    with zipfile.ZipFile(bundle) as archive:
        data: dict[str, Any] = json.loads(archive.read(fmt.MANIFEST))
        return data


def _counts(url: str) -> dict[str, int]:
    tables = (
        "memory",
        "memory_history",
        "users",
        "project_tags",
        "tag_summaries",
        "project_tag_alias_suggestions",
        "project_tag_new_suggestions",
        "profile_history",
    )
    with psycopg.connect(url) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}  # type: ignore[index]


def test_round_trip_through_an_empty_database_gives_identical_data_members(
    make_settings: Any, db_url: str, empty_db_url: str, tmp_path: Path
) -> None:
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    settings = make_settings(database_url=db_url)
    with psycopg.connect(db_url) as conn:
        populate(settings, home_a, conn)
    first, second = tmp_path / "first.zip", tmp_path / "second.zip"

    exported = run(machine_env(home_a, db_url), "export", str(first))
    assert exported.returncode == 0, exported.stderr
    imported = run(machine_env(home_b, empty_db_url), "import", str(first))
    assert imported.returncode == 0, imported.stderr
    again = run(machine_env(home_b, empty_db_url), "export", str(second))
    assert again.returncode == 0, again.stderr

    one, two = _members(first), _members(second)
    assert sorted(one) == [fmt.member(t) for t in sorted(fmt.TABLES)]
    for name in one:
        assert one[name] == two[name], name
    manifest = _manifest(first)
    assert manifest["counts"]["memory"] > 20
    used = [t for t in fmt.TABLES if t not in _FEATURES_POOL_ONLY]
    assert all(manifest["counts"][t] > 0 for t in used), manifest["counts"]
    assert manifest["schema_version"] == _manifest(second)["schema_version"]
    assert "memory" in imported.stdout and "new" in imported.stdout
