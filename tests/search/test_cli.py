"""``mcp-agents-memory search`` through click's runner against the test database."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from agents_memory.cli.search import search
from agents_memory.config import Settings

from .helpers import add, mem


@pytest.fixture
def cli_settings(make_settings: Any, db_url: str, conn: psycopg.Connection[Any]) -> Settings:
    add(
        conn,
        [
            mem("Postgres [bold]migration[/bold] plan for the capture daemon", age_days=2),
            mem("Мы обсуждали миграцию базы данных", platform="codex-cli", role="assistant"),
            # written moments ago, so "today" holds it at any hour (2.4 hours ago failed
            # between midnight and 02:24)
            mem("lunch order", at=datetime.now(UTC) - timedelta(seconds=1)),
        ],
    )
    result: Settings = make_settings(database_url=db_url, embedding_backend="none")
    return result


def test_search_prints_a_table_and_says_it_runs_full_text_only(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["migration", "plan"], obj=cli_settings)
    assert result.exit_code == 0, result.output
    assert "1 result(s) by fulltext" in result.stdout
    assert "[bold]" in result.stdout  # message text is shown as is, not read as markup
    assert "lunch" not in result.stdout
    assert "full-text search only" in result.stderr


def test_search_json_output_carries_results_and_why(cli_settings: Settings) -> None:
    result = CliRunner().invoke(
        search,
        ["миграция", "--json", "--platform", "codex", "--role", "assistant"],
        obj=cli_settings,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["used"] == "fulltext" and data["count"] == 1
    hit = data["results"][0]
    assert hit["agent_platform"] == "codex-cli" and hit["role"] == "assistant"
    assert hit["why"]["arms"] == ["fulltext"] and hit["why"]["fts_rank"] == 1


def test_search_without_a_query_lists_newest_first(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["--json", "--limit", "2"], obj=cli_settings)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["used"] == "recency"
    assert data["results"][0]["message"] == "lunch order"
    assert data["count"] == 2


def test_search_rejects_a_bad_date_range_with_the_accepted_forms(
    cli_settings: Settings,
) -> None:
    result = CliRunner().invoke(search, ["x", "--date-range", "someday"], obj=cli_settings)
    assert result.exit_code == 2
    assert "N_days_ago" in result.output


def test_search_filters_by_date_range(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["--json", "--date-range", "today"], obj=cli_settings)
    assert result.exit_code == 0, result.output
    messages = [r["message"] for r in json.loads(result.stdout)["results"]]
    assert "Postgres [bold]migration[/bold] plan for the capture daemon" not in messages


def test_search_help_names_every_option_in_the_one_vocabulary() -> None:
    result = CliRunner().invoke(search, ["--help"])
    assert result.exit_code == 0
    assert "--p-tag" not in result.output and "--date-range" not in result.output
    assert "claude-code (claude)" in result.output  # the client list comes from the registry
    for option in (
        "--project",
        "--since",
        "--until",
        "--role",
        "--platform",
        "--device-scope",
        "--limit",
        "--include-archived",
        "--json",
    ):
        assert option in result.output


def test_search_refuses_a_misspelt_platform_with_the_list(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["x", "--platform", "cluade"], obj=cli_settings)
    assert result.exit_code == 2
    assert "unknown platform 'cluade' (did you mean 'claude'?)" in result.output
    assert "claude-code" in result.output


def test_search_takes_a_client_without_an_adapter_by_its_name(cli_settings: Settings) -> None:
    """``save_message`` stores a client no adapter claims (Cursor) under its own name."""
    result = CliRunner().invoke(search, ["x", "--platform", "cursor"], obj=cli_settings)
    assert result.exit_code == 0, result.output


def test_search_with_no_match_says_so(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["zyxwvut", "qqqq"], obj=cli_settings)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "no match"


def test_the_table_fits_80_columns_and_shows_why_only_when_asked(cli_settings: Settings) -> None:
    plain = CliRunner().invoke(search, ["migration"], obj=cli_settings, env={"COLUMNS": "80"})
    lines = plain.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, plain.stdout
    assert "project" in lines[1] and "full-text #" not in plain.stdout
    why = CliRunner().invoke(
        search, ["migration", "--why"], obj=cli_settings, env={"COLUMNS": "80"}
    )
    why_text = " ".join(why.stdout.split())
    assert "full-text #1" in why_text and "fts#" not in why_text
    assert max(len(line) for line in why.stdout.splitlines()) <= 80


def test_search_filters_by_since_and_until_as_every_other_command(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["--json", "--since", "today"], obj=cli_settings)
    assert result.exit_code == 0, result.output
    messages = [r["message"] for r in json.loads(result.stdout)["results"]]
    assert messages == ["lunch order"]
    older = CliRunner().invoke(search, ["--json", "--until", "2d"], obj=cli_settings)
    assert older.exit_code == 0, older.output
    kept = [r["message"] for r in json.loads(older.stdout)["results"]]
    assert kept == ["Postgres [bold]migration[/bold] plan for the capture daemon"]


def test_search_refuses_a_date_it_cannot_read_naming_the_option(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["x", "--since", "someday"], obj=cli_settings)
    assert result.exit_code == 2
    assert "--since" in result.output and "N_days_ago" in result.output


@pytest.fixture
def tagged(cli_settings: Settings, conn: psycopg.Connection[Any]) -> Settings:
    tag = conn.execute(
        "INSERT INTO project_tags (name) VALUES ('quokka-api') RETURNING id"
    ).fetchone()
    assert tag is not None
    conn.execute("INSERT INTO project_tags (name, alias_of) VALUES ('qa-old', %s)", (tag[0],))
    conn.execute("UPDATE memory SET p_tag_id = %s WHERE message = 'lunch order'", (tag[0],))
    conn.commit()
    return cli_settings


@pytest.mark.parametrize("spelling", ["--project", "--p-tag"])
def test_search_takes_the_project_by_its_name_or_the_old_spelling(
    tagged: Settings, spelling: str
) -> None:
    result = CliRunner().invoke(search, ["--json", spelling, "QA-old"], obj=tagged)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["message"] for r in data["results"]] == ["lunch order"]


def test_a_partial_project_says_which_projects_exist(tagged: Settings) -> None:
    result = CliRunner().invoke(search, ["x", "--project", "quokka"], obj=tagged)
    assert result.exit_code == 2, result.output
    assert "no project 'quokka' (did you mean 'quokka-api'?)" in result.output
    assert "projects: quokka-api" in result.output
    assert "no match" not in result.output


def test_also_adds_phrasings_fused_with_the_query(cli_settings: Settings) -> None:
    alone = CliRunner().invoke(search, ["lunch", "--json"], obj=cli_settings)
    fused = CliRunner().invoke(search, ["lunch", "--also", "migration", "--json"], obj=cli_settings)
    assert alone.exit_code == 0 and fused.exit_code == 0, fused.output
    assert json.loads(alone.stdout)["count"] == 1
    messages = [h["message"] for h in json.loads(fused.stdout)["results"]]
    assert "lunch order" in messages
    assert any("migration" in m for m in messages)
    five = ["x", *[a for n in range(5) for a in ("--also", f"y{n}")]]
    refused = CliRunner().invoke(search, five, obj=cli_settings)
    assert refused.exit_code == 2 and "--also" in refused.output


def test_the_table_shows_the_year_of_this_year_s_turns_too(cli_settings: Settings) -> None:
    result = CliRunner().invoke(search, ["migration"], obj=cli_settings, env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    year = str(datetime.now().astimezone().year)
    assert re.search(rf"\b{year}-\d\d-\d\d \d\d:\d\d\b", result.stdout), result.stdout
