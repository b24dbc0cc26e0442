"""Import from seed A: a seed A database built from its schema on the test server."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings
from agents_memory.ops.seed_import import import_seed_a
from agents_memory.store.knowledge import get_profiles, set_profile
from agents_memory.store.memories import ensure_user
from tests.conftest import TEST_DIM, TEST_MODEL
from tests.seeds import seed_a_schema as seed

MakeSeed = Callable[[int], tuple[str, dict[str, int]]]


def _rows(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every memory row here, by its message's first 12 characters."""
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        cur = conn.execute(
            "SELECT m.*, t.name AS tag_name, embedding IS NOT NULL AS has_vector FROM memory m"
            " LEFT JOIN project_tags t ON t.id = m.p_tag_id"
        )
        names = [c.name for c in cur.description or []]
        return {row[names.index("message")][:12]: dict(zip(names, row, strict=True)) for row in cur}


def _count(settings: Settings, table: str) -> int:
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert row is not None
        return int(row[0])


def test_every_seed_a_memory_column_is_mapped(settings: Settings, make_seed_a: MakeSeed) -> None:
    url, _ids = make_seed_a(3072)
    report = import_seed_a(settings, url)
    rows = _rows(settings)

    korean = rows[seed.KOREAN[:12]]
    assert korean["agent_platform"] == "claude-code" and korean["role"] == "user"
    assert korean["external_uuid"] == "claude-code:s1:u1"
    assert korean["tag_name"] == "mcp-agents-memory"
    assert korean["d_tag"] == ["postgres", "migration"]
    assert korean["tag_processed"] is True and korean["device_name"] == "Mac-Studio"
    assert korean["message_at"] == datetime(2025, 11, 3, 1, 0, tzinfo=UTC)
    assert korean["source"] == "import" and korean["session_id"] == "s1"  # from its key

    russian = rows[seed.RUSSIAN[:12]]
    assert russian["agent_model"] == "claude-opus-4" and russian["role"] == "assistant"
    assert russian["raw_message"] == "<base>envelope</base>" + seed.RUSSIAN
    assert russian["tag_name"] == "agents-memory"  # filed under the alias, as in seed A

    sub = rows["Found 3 call"]
    assert (sub["subagent"], sub["subagent_model"], sub["subagent_role"]) == (
        True,
        "claude-haiku-4",
        "explorer",
    )

    pinned = rows["Always answe"]
    assert pinned["is_pinned"] is True and pinned["is_active"] is True
    assert pinned["agent_platform"] == "gemini-cli"  # seed A's MCP client name, ours here
    assert pinned["external_uuid"].startswith("seed-a:")
    assert pinned["d_tag"] == ["style"]

    archived = rows["Old plan: ke"]
    assert archived["is_active"] is False and archived["is_pinned"] is False
    assert archived["archived_at"] == datetime(2025, 12, 1, tzinfo=UTC)
    assert archived["agent_platform"] == "codex-cli" and archived["tag_name"] == "старый-проект"

    buzz = rows[seed_a_text("buzz")]
    assert buzz["session_id"] == "buzz:dev"

    assert report.tally("memories").new == 7
    assert report.refused == {"private-only": 1}
    assert not any("task" in name for name in report.unmapped)
    assert "venue" in report.unmapped and "terminal 3" in report.unmapped["venue"]
    assert ("gemini-cli-mcp-client", "gemini-cli") in report.renamed
    assert not any("TASK:" in key for key in rows)


def seed_a_text(name: str) -> str:
    return {"buzz": "배포는 금요일에 하자"}[name][:12]


def test_a_secret_in_a_seed_a_message_comes_out_redacted(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    import_seed_a(settings, url)
    row = _rows(settings)["use this tok"]
    assert seed.SECRET not in row["message"] and "[redacted:" in row["message"]
    assert seed.SECRET not in row["raw_message"]


def test_project_tags_keep_aliases_registry_fields_and_both_suggestion_queues(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    report = import_seed_a(settings, url)
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        tags = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT t.name, a.name, t.kind, t.paused, t.description FROM project_tags t"
                " LEFT JOIN project_tags a ON a.id = t.alias_of"
            )
        }
        aliases = conn.execute(
            "SELECT s.name, t.name, a.relation, a.status, a.confidence::float8,"
            " cardinality(a.evidence_memory_ids), a.signals, a.model_name, a.decided_by"
            " FROM project_tag_alias_suggestions a JOIN project_tags s ON s.id = a.source_tag_id"
            " JOIN project_tags t ON t.id = a.target_tag_id ORDER BY a.id"
        ).fetchall()
        new = conn.execute(
            "SELECT name, members, uses, status, recommendation FROM project_tag_new_suggestions"
            " ORDER BY name"
        ).fetchall()
    assert tags["agents-memory"][0] == "mcp-agents-memory"
    assert tags["mcp-agents-memory"] == (None, "project", False, "the memory server")
    assert tags["blog"] == (None, "category", True, None)
    assert tags["старый-проект"][3] == "прежнее имя"
    assert aliases == [
        ("старый-проект", "mcp-agents-memory", "same_project", "pending", 0.91, 2,
         {"shared_dtags": 2}, "grok-4", None),
        ("blog", "mcp-agents-memory", "different", "rejected", None, 0, {}, None, "user"),
    ]  # fmt: skip
    assert new == [
        ("dotfiles", ["dotfiles", "zsh"], 12, "pending", "project"),
        ("misc", ["misc"], 30, "rejected", "generic"),
    ]
    assert report.tally("aliases").new == 1 and report.tally("project tags").new == 4


def test_a_second_seed_a_import_changes_nothing(settings: Settings, make_seed_a: MakeSeed) -> None:
    url, _ids = make_seed_a(3072)
    import_seed_a(settings, url)
    before = {t: _count(settings, t) for t in _TABLES}
    again = import_seed_a(settings, url)
    assert {t: _count(settings, t) for t in _TABLES} == before
    assert all(t.new == 0 for t in again.tallies.values()), again.tallies
    assert again.tally("memories").present == 7 and again.tally("aliases").present == 1
    assert again.tally("task pins").present == 3


def test_seed_a_task_pins_come_in_as_pins_with_their_updates(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    report = import_seed_a(settings, url)
    assert report.tally("task pins").new == 3
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        events = conn.execute(
            "SELECT e.pin_id = c.id, c.title, e.event, e.status, e.note, e.from_agent,"
            " e.to_agent, e.device_name, e.created_at FROM task_pin_events e"
            " JOIN task_pin_events c ON c.id = e.pin_id ORDER BY e.created_at"
        ).fetchall()
    plain, created, done = events
    assert plain[1:4] == ("TASK: codex should review the migration", "create", "pending")
    assert plain[6] == "unknown"  # no header: no recipient
    assert created[1:4] == (seed.PIN_TITLE, "create", "pending")
    assert created[5:8] == ("claude-code", "codex", "Mac-Studio")
    assert seed.SECRET not in (created[4] or "") and "[redacted:" in (created[4] or "")
    assert done[0] and done[1:5] == (seed.PIN_TITLE, "update", "done", "merged, thanks")
    assert done[5:7] == ("codex-cli", "codex")
    assert done[8] == datetime(2025, 11, 7, 6, 0, tzinfo=UTC)
    assert any("no JSON header" in note for note in report.notes)


_TABLES = (
    "memory",
    "project_tags",
    "project_tag_alias_suggestions",
    "project_tag_new_suggestions",
    "profile_history",
    "task_pin_events",
)


def test_a_dry_run_reports_the_import_and_writes_nothing(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    before = {t: _count(settings, t) for t in _TABLES}
    report = import_seed_a(settings, url, dry_run=True)
    assert report.tally("memories").new == 7 and report.dry_run
    assert report.lines()[-1] == "dry run: nothing was written"
    assert {t: _count(settings, t) for t in _TABLES} == before


def test_seed_a_profiles_fill_an_empty_profile_and_never_clobber_one(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        user_id = ensure_user(conn, settings.user_name)
        set_profile(conn, user_id, "sub_profile", "my own notes", changed_by="user")
    report = import_seed_a(settings, url)
    with psycopg.connect(settings.database_url) as conn:
        profiles = get_profiles(conn, user_id)
    assert profiles.core_profile == seed.CORE
    assert profiles.sub_profile == "my own notes"
    assert report.tally("profiles").new == 1 and report.tally("profiles").conflicts == 1
    assert any("sub_profile of hoon" in note for note in report.conflict_notes)


def test_seed_a_vectors_are_kept_when_the_model_and_dimension_are_ours(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(TEST_DIM)
    report = import_seed_a(settings, url, source_model=TEST_MODEL)
    rows = _rows(settings)
    korean = rows[seed.KOREAN[:12]]
    assert korean["has_vector"] and korean["embedding_model"] == TEST_MODEL
    assert abs(float(str(korean["embedding"]).strip("[]").split(",")[0]) - 0.5) < 1e-3
    assert report.vectors_kept == 2 and report.reembed == 5


def test_seed_a_vectors_of_another_model_are_left_for_the_cold_path(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    report = import_seed_a(settings, url)
    assert not any(row["has_vector"] for row in _rows(settings).values())
    assert report.vectors_kept == 0 and report.reembed == 7
    assert any("text-embedding-3-large, 3072 dims" in note for note in report.notes)


def test_a_row_edited_here_is_a_conflict_and_keeps_its_text(
    settings: Settings, make_seed_a: MakeSeed
) -> None:
    url, _ids = make_seed_a(3072)
    import_seed_a(settings, url)
    assert settings.database_url
    with psycopg.connect(settings.database_url) as conn:
        conn.execute(
            "UPDATE memory SET message = 'edited here' WHERE external_uuid = 'claude-code:s1:u1'"
        )
    report = import_seed_a(settings, url)
    assert report.tally("memories").conflicts == 1
    assert "edited here" in _rows(settings)


def test_something_that_is_not_seed_a_is_refused_in_one_line(
    settings: Settings, empty_db_url: str
) -> None:
    from agents_memory.errors import DatabaseError

    with pytest.raises(DatabaseError, match="not a seed A database"):
        import_seed_a(settings, empty_db_url)
