"""Import from seed B's JSONL dump (``mem_doctor export``, ``um-export-jsonl``): the same
memories, fact slots and history as from its SQLite file, and nothing twice from both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import DatabaseError
from agents_memory.ops.seed_import_b import import_seed_b
from tests.seeds import seed_b_schema as seed
from tests.seeds.seed_a_schema import SECRET


@pytest.fixture
def seed_b_dump(seed_b_path: Path, tmp_path: Path) -> Path:
    path = tmp_path / "unified.db.export-20251009-094640.jsonl"
    seed.dump(seed_b_path, path)
    return path


_COLUMNS = (
    "external_uuid, agent_platform, session_id, role, message, message_at, is_pinned,"
    " is_active, archived_at, slot, expires_at, superseded_at,"
    " (SELECT s.external_uuid FROM memory s WHERE s.id = m.superseded_by) AS successor,"
    " embedding IS NOT NULL AS has_vector"
)


def _rows(settings: Settings) -> list[tuple[Any, ...]]:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(f"SELECT {_COLUMNS} FROM memory m ORDER BY external_uuid").fetchall()


def test_a_dump_brings_what_its_database_brings(
    settings: Settings, seed_b_path: Path, seed_b_dump: Path
) -> None:
    from_dump = import_seed_b(settings, seed_b_dump)
    rows = _rows(settings)
    assert from_dump.tally("memories").new == 4 and from_dump.tally("facts").new == 3
    assert from_dump.vectors_kept == 1 and from_dump.refused == {}
    assert any("JSONL dump" in note for note in from_dump.notes)
    for table in ("um_summaries", "um_entities", "um_edges", "um_links"):
        assert table in from_dump.unmapped
    assert from_dump.unmapped["archived messages"].startswith("1 ")
    by_text = {r[4]: r for r in rows}
    vim, neovim = by_text["[user] editor: vim"], by_text["[user] editor: neovim"]
    assert vim[9] == neovim[9] == "user.editor" and vim[12] == neovim[0]  # history → live
    assert neovim[6] is True and vim[6] is False and vim[7] is False
    assert by_text["[project] deadline: релиз в пятницу"][10] is not None  # its expiry
    assert by_text[seed.RUSSIAN][13] is True  # same model and dimension: its vector kept
    assert not any(SECRET in r[4] for r in rows) and any("[redacted:" in r[4] for r in rows)
    from_db = import_seed_b(settings, seed_b_path)  # the database it was dumped from
    assert _rows(settings) == rows
    assert all(t.new == 0 for t in from_db.tallies.values()), from_db.tallies


def test_a_dump_after_its_database_stores_nothing_new(
    settings: Settings, seed_b_path: Path, seed_b_dump: Path
) -> None:
    import_seed_b(settings, seed_b_path)
    before = _rows(settings)
    again = import_seed_b(settings, seed_b_dump)
    assert _rows(settings) == before
    assert all(t.new == 0 for t in again.tallies.values()), again.tallies
    assert again.tally("facts").present == 3 and not again.conflict_notes
    twice = import_seed_b(settings, seed_b_dump)
    assert all(t.new == 0 for t in twice.tallies.values()) and _rows(settings) == before


def test_a_cut_or_foreign_dump_is_refused_in_one_line(
    settings: Settings, seed_b_path: Path, seed_b_dump: Path, tmp_path: Path
) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(seed_b_dump.read_text().splitlines(keepends=True)[:-3]))
    with pytest.raises(DatabaseError, match="cut short"):
        import_seed_b(settings, cut)
    old = tmp_path / "legacy.json"
    old.write_text(json.dumps({"schema_version": "1", "tables": {}}))
    with pytest.raises(DatabaseError, match="single-JSON"):
        import_seed_b(settings, old)
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"format": "um-export-jsonl", "schema_version": "9"}) + "\n")
    with pytest.raises(DatabaseError, match="schema version '9'"):
        import_seed_b(settings, newer)
    assert _rows(settings) == []


def test_a_dump_without_the_closing_line_of_later_exporters_is_read(
    settings: Settings, seed_b_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / "v08.jsonl"
    seed.dump(seed_b_path, path, complete=False)
    report = import_seed_b(settings, path)
    assert report.tally("memories").new == 4 and report.tally("facts").new == 3
