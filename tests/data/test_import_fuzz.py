"""The per-row decisions of a bundle import under generated hostile rows: a real export with
its rows given wrong types and shapes, fields dropped, rows doubled with changed text, users
renamed away. Each import (one bundle per seed, a few hundred rows) must finish, and every
row of every member must be counted exactly once: new, present or refused with a reason.
Bounded: :data:`SEEDS` bundles, a fixed seed each."""

from __future__ import annotations

import json
import random
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import psycopg
import pytest

from agents_memory.ops import bundle_format as fmt
from agents_memory.ops.export import ExportRequest, export
from agents_memory.ops.importer import import_bundle
from tests.adapters.test_fuzz import mutate_json, wrong_value
from tests.data.pool import populate
from tests.data.test_import_report import make_bundle

SEEDS: Final = ("a", "b", "c")


@pytest.fixture
def exported(make_settings: Any, db_url: str, tmp_path: Path) -> dict[str, list[Any]]:
    """A populated pool's export, member by member (table -> rows)."""
    settings = make_settings(database_url=db_url)
    with psycopg.connect(db_url) as conn:
        populate(settings, tmp_path / "a", conn)
    path = tmp_path / "pool.zip"
    export(settings, ExportRequest(path), now=datetime.now().astimezone())
    with zipfile.ZipFile(path) as archive:
        return {
            t: [json.loads(line) for line in archive.read(fmt.member(t)).splitlines()]
            for t in fmt.TABLES
        }


def _hostile(rng: random.Random, rows: list[Any]) -> list[Any]:
    out: list[Any] = []
    for row in rows:
        roll = rng.random()
        if roll < 0.4:
            out.append(mutate_json(rng, row))
        elif roll < 0.5:
            out.append(wrong_value(rng))
        elif roll < 0.6 and isinstance(row, dict):
            out += [row, {**row, **{k: "changed" for k in ("message", "summary") if k in row}}]
        elif roll < 0.7 and isinstance(row, dict) and "user_name" in row:
            out.append({**row, "user_name": "nobody"})
        else:
            out.append(row)
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_every_hostile_row_is_counted_once_and_the_import_finishes(
    seed: str,
    exported: dict[str, list[Any]],
    make_settings: Any,
    empty_db_url: str,
    tmp_path: Path,
) -> None:
    rng = random.Random(f"import-fuzz:{seed}")
    members = {t: _hostile(rng, rows) for t, rows in exported.items()}
    members["users"] += exported["users"]  # so that some memories have their user
    bundle = make_bundle(tmp_path / f"{seed}.zip", **members)
    settings = make_settings(database_url=empty_db_url)

    first = import_bundle(settings, bundle, home=tmp_path)
    again = import_bundle(settings, bundle, home=tmp_path)

    for report in (first, again):
        for table, tally in report.tables.items():
            assert tally.rows == len(members[table]), table
            assert tally.new + tally.present + tally.refused_total == tally.rows, (table, tally)
    assert sum(t.new for t in again.tables.values()) == 0
    assert first.tables["memory"].new > 0
