"""``memory-capture backfill`` run twice on the real fixture transcripts (real CLI, real
database): the second run stores nothing new and says how many rows were already stored;
the table fits 80 columns when piped; ``status`` shows the Cold Path's totals."""

from __future__ import annotations

import json
from pathlib import Path

from tests.capture.cli import memory_capture
from tests.capture.test_pipeline import lay_out_fixture_home


def test_a_second_backfill_says_what_is_already_stored_and_stores_nothing_new(
    tmp_path: Path, db_url: str
) -> None:
    files = lay_out_fixture_home(tmp_path)

    first = memory_capture(tmp_path, db_url, "backfill", "--json")
    second = memory_capture(tmp_path, db_url, "backfill", "--json")
    shown = memory_capture(tmp_path, db_url, "backfill")  # no COLUMNS: 80 when piped

    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    before = json.loads(first.stdout)["platforms"]
    again = json.loads(second.stdout)["platforms"]
    assert set(again) == set(files)
    for name, totals in before.items():
        stored = totals["inserted"] + totals["already_stored"]
        assert stored > 0, name
        assert (again[name]["inserted"], again[name]["updated"]) == (0, 0), name
        assert again[name]["already_stored"] == stored, name
    total = sum(t["already_stored"] for t in again.values())
    assert shown.returncode == 0, shown.stderr
    assert f"0 rows stored, {total:,} already stored" in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    assert "claude " in shown.stdout or "claude │" in shown.stdout  # the short name


def test_status_shows_the_cold_path_totals_and_fits_the_columns_it_is_given(
    tmp_path: Path, db_url: str
) -> None:
    lay_out_fixture_home(tmp_path)
    memory_capture(tmp_path, db_url, "backfill")
    status = memory_capture(tmp_path, db_url, "status", COLUMNS="72")
    data = json.loads(memory_capture(tmp_path, db_url, "status", "--json").stdout)

    assert status.returncode in (0, 1), status.stderr
    rows = data["coldpath"]["backlog"]["rows"]
    assert rows == sum(p["rows"] for p in data["platforms"].values()) > 0
    words = " ".join(status.stdout.split())  # lines wrap at 80 columns
    assert f"{rows:,} rows: 0 with a vector ({rows:,} waiting), 0 tagged ({rows:,} waiting)" in (
        words
    )
    table = [line for line in status.stdout.splitlines() if "│" in line or "━" in line]
    assert table and max(len(line) for line in table) <= 72
