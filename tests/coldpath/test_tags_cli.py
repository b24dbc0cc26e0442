"""``mcp-agents-memory tags`` through click's runner against the test database."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from agents_memory.cli.tags import tags
from agents_memory.coldpath.alias_promoter import AliasPromoterJob
from agents_memory.config import Settings
from agents_memory.store.coldpath import tag_suggestions as suggestion_store

from .jobkit import add, context, make_tag, row


@pytest.fixture
def cli_settings(make_settings: Any, db_url: str) -> Settings:
    result: Settings = make_settings(database_url=db_url, embedding_backend="none")
    return result


def _run(settings: Settings, *args: str) -> Any:
    return CliRunner().invoke(tags, list(args), obj=settings)


def _questions(conn: psycopg.Connection[Any], settings: Settings) -> tuple[int, int]:
    """A repository suggestion (left pending by an older version: today the tagger makes a
    repository's tag itself) and an alias suggestion; returns their ids."""
    memory = make_tag(conn, "agents-memory")
    make_tag(conn, "hive-mind")
    make_tag(conn, "old-name", alias_of=memory)
    add(
        conn,
        settings,
        row("work in the repo", git_root="/src/rocket", git_remote="https://example.org/rocket"),
        row("I renamed agents-memory to hive-mind"),
    )
    conn.execute(
        "UPDATE memory SET p_tag_id = (SELECT id FROM project_tags WHERE name = 'agents-memory')"
        " WHERE git_root IS NULL"
    )
    conn.commit()
    ctx = context(conn, settings)
    suggestion_store.suggest_new_tag(
        conn,
        ctx.user_id,
        "rocket",
        members=["rocket"],
        git_root="/src/rocket",
        git_remote="https://example.org/rocket",
        recommendation="project",
    )
    conn.commit()
    AliasPromoterJob().run(ctx)
    new_id = conn.execute("SELECT id FROM project_tag_new_suggestions").fetchone()
    alias_id = conn.execute("SELECT id FROM project_tag_alias_suggestions").fetchone()
    assert new_id and alias_id
    return int(new_id[0]), int(alias_id[0])


def test_every_tags_command_has_help(cli_settings: Settings) -> None:
    for command in ("list", "confirm", "reject", "alias", "unalias"):
        result = _run(cli_settings, command, "--help")
        assert result.exit_code == 0 and "Usage:" in result.output


def test_list_shows_tags_aliases_counts_and_pending_questions_with_ids(
    conn: psycopg.Connection[Any], cli_settings: Settings
) -> None:
    new_id, alias_id = _questions(conn, cli_settings)
    result = _run(cli_settings, "list")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "agents-memory  1 row(s)  aliases: old-name" in out
    assert "old-name -> agents-memory" in out
    assert (
        f"n{new_id}  new project tag 'rocket' (project), 1 use(s): https://example.org/rocket"
        in out
    )
    assert f"a{alias_id}  'hive-mind' -> 'agents-memory' (rename, confidence 0.90)" in out

    data = json.loads(_run(cli_settings, "list", "--json").stdout)
    by_name = {t["name"]: t for t in data["tags"]}
    assert by_name["agents-memory"]["aliases"] == ["old-name"]
    assert by_name["old-name"]["canonical"] == "agents-memory"
    assert data["new_tag_suggestions"][0]["ref"] == f"n{new_id}"
    assert data["alias_suggestions"][0]["relation"] == "rename"


def test_confirming_a_new_tag_creates_it_and_files_its_rows(
    conn: psycopg.Connection[Any], cli_settings: Settings
) -> None:
    new_id, _alias_id = _questions(conn, cli_settings)
    result = _run(cli_settings, "confirm", f"n{new_id}")
    assert result.exit_code == 0, result.output
    assert "created project tag 'rocket'; filed 1 row(s) under it" in result.stdout
    tag = conn.execute(
        "SELECT git_root, git_remote FROM project_tags WHERE name = 'rocket'"
    ).fetchone()
    assert tag == ("/src/rocket", "https://example.org/rocket")
    again = _run(cli_settings, "confirm", f"n{new_id}")
    assert again.exit_code == 1 and "is already confirmed" in again.output


def test_confirming_an_alias_sets_alias_of_and_reject_is_final(
    conn: psycopg.Connection[Any], cli_settings: Settings
) -> None:
    new_id, alias_id = _questions(conn, cli_settings)
    if new_id == alias_id:
        ambiguous = _run(cli_settings, "confirm", str(alias_id))
        assert ambiguous.exit_code == 1 and "ambiguous" in ambiguous.output
    result = _run(cli_settings, "confirm", f"a{alias_id}")
    assert result.exit_code == 0, result.output
    parent = conn.execute(
        "SELECT p.name FROM project_tags t JOIN project_tags p ON p.id = t.alias_of"
        " WHERE t.name = 'hive-mind'"
    ).fetchone()
    assert parent == ("agents-memory",)
    rejected = _run(cli_settings, "reject", f"n{new_id}", "--reason", "scratch repo")
    assert rejected.exit_code == 0 and "rejected new project tag 'rocket'" in rejected.stdout
    status = conn.execute("SELECT status, decision_reason FROM project_tag_new_suggestions")
    assert status.fetchone() == ("rejected", "scratch repo")


def test_manual_alias_and_unalias_with_one_line_errors(
    conn: psycopg.Connection[Any], cli_settings: Settings
) -> None:
    make_tag(conn, "one")
    make_tag(conn, "two")
    assert _run(cli_settings, "alias", "one", "two").exit_code == 0
    cycle = _run(cli_settings, "alias", "two", "one")
    assert cycle.exit_code == 1 and "cycle" in cycle.output
    unknown = _run(cli_settings, "alias", "one", "nope")
    assert unknown.exit_code == 1 and "no project tag 'nope'" in unknown.output
    assert _run(cli_settings, "unalias", "one").exit_code == 0
    not_alias = _run(cli_settings, "unalias", "one")
    assert not_alias.exit_code == 1 and "'one' is not an alias" in not_alias.output
    missing = _run(cli_settings, "confirm", "a4242")
    assert missing.exit_code == 1 and "no suggestion 'a4242'" in missing.output
    assert len(missing.output.strip().splitlines()) == 1
    bad = _run(cli_settings, "reject", "xyz")
    assert bad.exit_code == 1 and "not a suggestion id" in bad.output
