"""Import from seed B: a SQLite file built from its schema."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.errors import DatabaseError
from agents_memory.ops.seed_import_b import import_seed_b
from agents_memory.store.knowledge import get_profiles
from agents_memory.store.memories import ensure_user
from tests.seeds import seed_b_schema as seed
from tests.seeds.seed_a_schema import SECRET


def _rows(settings: Settings) -> dict[str, dict[str, Any]]:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        cur = conn.execute("SELECT m.*, embedding IS NOT NULL AS has_vector FROM memory m")
        names = [c.name for c in cur.description or []]
        return {row[names.index("message")]: dict(zip(names, row, strict=True)) for row in cur}


def test_seed_b_messages_facts_and_personas_are_mapped(
    settings: Settings, seed_b_path: Path
) -> None:
    report = import_seed_b(settings, seed_b_path)
    rows = _rows(settings)

    russian = rows[seed.RUSSIAN]
    assert russian["session_id"] == "sess-ru" and russian["role"] == "user"
    assert russian["agent_platform"] == "claude-code" and russian["source"] == "import"
    assert russian["message_at"] == datetime.fromtimestamp(seed.T0, tz=UTC)
    assert russian["external_uuid"].startswith("seed-b:") and russian["external_uuid"].endswith(
        ":message:1"
    )
    korean = rows[seed.KOREAN]
    assert korean["agent_platform"] == "unified-memory" and korean["session_id"] == "sess-ko"

    live = rows["[user] editor: neovim"]
    assert live["is_pinned"] is True and live["is_active"] is True
    expired = rows["[project] deadline: релиз в пятницу"]
    assert expired["is_active"] is False and expired["is_pinned"] is False
    assert expired["archived_at"] == datetime.fromtimestamp(seed.T0 + 200, tz=UTC)
    assert live["slot"] == "user.editor" and live["superseded_by"] is None
    earlier = rows["[user] editor: vim"]  # superseded: the slot's history
    assert earlier["slot"] == "user.editor" and earlier["superseded_by"] == live["id"]
    assert earlier["is_active"] is False and earlier["is_pinned"] is False
    assert earlier["superseded_at"] == datetime.fromtimestamp(seed.T0 + 100, tz=UTC)
    assert expired["slot"] == "project.deadline" and expired["superseded_by"] is None
    assert expired["expires_at"] == datetime.fromtimestamp(seed.T0 + 200, tz=UTC)
    assert not any("tone" in text for text in rows)  # personas went to the profile

    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        profile = get_profiles(conn, ensure_user(conn, settings.user_name))
    assert profile.core_profile == "persona lang: русский\npersona tone: concise"

    assert report.tally("memories").new == 4 and report.tally("facts").new == 3
    assert report.refused == {}
    assert "superseded fact values" not in report.unmapped
    assert report.unmapped["earlier persona traits"].startswith("1 ")
    assert report.unmapped["archived messages"].startswith("1 ")
    assert report.unmapped["other roles"].startswith("1 (system 1")
    for table in ("um_summaries", "um_entities", "um_edges", "um_links"):
        assert table in report.unmapped
    assert "fact importance" in report.unmapped
    assert any("alice" in note for note in report.notes)


def test_a_secret_in_a_seed_b_message_comes_out_redacted_and_loses_its_vector(
    settings: Settings, seed_b_path: Path
) -> None:
    report = import_seed_b(settings, seed_b_path)
    rows = _rows(settings)
    secret = next(r for text, r in rows.items() if text.startswith("token "))
    assert SECRET not in secret["message"] and "[redacted:" in secret["message"]
    assert secret["has_vector"] is False
    assert rows[seed.RUSSIAN]["has_vector"] is True  # same model and dimension: kept
    assert report.vectors_kept == 1


def test_seed_b_vectors_of_another_model_are_left_for_the_cold_path(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "other.db"
    seed.build(path, model="paraphrase-multilingual-mpnet-base-v2")
    report = import_seed_b(settings, path)
    assert report.vectors_kept == 0 and report.reembed == 7  # 4 messages, 3 fact values
    assert not any(r["has_vector"] for r in _rows(settings).values())


def test_a_second_seed_b_import_changes_nothing_and_the_file_is_untouched(
    settings: Settings, seed_b_path: Path
) -> None:
    digest = hashlib.sha256(seed_b_path.read_bytes()).hexdigest()
    import_seed_b(settings, seed_b_path)
    count = len(_rows(settings))
    again = import_seed_b(settings, seed_b_path)
    assert len(_rows(settings)) == count
    assert all(t.new == 0 for t in again.tallies.values()), again.tallies
    assert again.tally("profiles").present == 1
    assert again.tally("facts").present == 3 and not again.conflict_notes
    assert hashlib.sha256(seed_b_path.read_bytes()).hexdigest() == digest


def test_a_slot_this_pool_fills_keeps_its_value_and_the_seed_value_comes_in_without_it(
    settings: Settings, seed_b_path: Path
) -> None:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        user = ensure_user(conn, settings.user_name)
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, is_pinned, slot,"
            " source) VALUES (%s, 'claude-code', 'user', 'editor: helix', true, 'user.editor',"
            " 'manage_knowledge')",
            (user,),
        )
    report = import_seed_b(settings, seed_b_path)
    rows = _rows(settings)
    assert rows["editor: helix"]["slot"] == "user.editor"  # this pool's value stays live
    assert rows["[user] editor: neovim"]["slot"] is None
    assert rows["[user] editor: neovim"]["is_pinned"] is True
    assert any("another live value" in note for note in report.conflict_notes)


def test_a_seed_b_dry_run_writes_nothing(settings: Settings, seed_b_path: Path) -> None:
    report = import_seed_b(settings, seed_b_path, dry_run=True)
    assert report.tally("memories").new == 4
    assert _rows(settings) == {}


def test_a_file_that_is_not_seed_b_is_refused_in_one_line(
    settings: Settings, tmp_path: Path
) -> None:
    with pytest.raises(DatabaseError, match="no seed B database"):
        import_seed_b(settings, tmp_path / "missing.db")
    other = tmp_path / "other.db"
    other.write_bytes(b"not sqlite at all, just text" * 100)
    with pytest.raises(DatabaseError, match="not a readable SQLite database"):
        import_seed_b(settings, other)
