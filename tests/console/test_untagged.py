"""Turns without a project on the Projects page, filed by folder: the console's form and the
CLI's ``tags file`` call one service (:func:`agents_memory.ops.tags.file_untagged`)."""

from __future__ import annotations

from click.testing import CliRunner
from starlette.testclient import TestClient

from agents_memory.cli.tags import tags
from agents_memory.config import Settings
from agents_memory.console.context import Console
from tests.console.conftest import csrf_of

OLD = "/home/someone-else/src/legacy-thing-tmp"


def _untagged(console: Console, cwd: str | None, count: int) -> None:
    with console.state.pool.connection() as conn:
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, cwd, session_id,"
            " tag_processed) SELECT %s, 'codex-cli', 'user', 'old work ' || n, %s, 'old-s', true"
            " FROM generate_series(1, %s) n",
            (console.user_id, cwd, count),
        )


def _projects_of(console: Console, cwd: str | None) -> list[str | None]:
    with console.state.pool.connection() as conn:
        rows = conn.execute(
            "SELECT t.name FROM memory m LEFT JOIN project_tags t ON t.id = m.p_tag_id"
            " WHERE m.cwd IS NOT DISTINCT FROM %s AND m.session_id = 'old-s'",
            (cwd,),
        ).fetchall()
    return [r[0] for r in rows]


def test_the_projects_page_lists_untagged_turns_by_folder_and_files_them(
    client: TestClient, console: Console
) -> None:
    _untagged(console, OLD, 3)
    _untagged(console, None, 2)
    page = client.get("/projects").text
    assert 'id="untagged"' in page and f"<code>{OLD}</code>: 3 turn(s)" in page
    assert "(no folder recorded)</code>: 2 turn(s)" in page
    done = client.post(
        "/projects/file",
        data={"csrf": csrf_of(page), "folder": OLD, "has_folder": "1", "project": "shop"},
    )
    assert done.status_code == 303
    shown = client.get(done.headers["location"]).text
    assert f"filed 3 turn(s) from {OLD} under shop" in shown
    assert _projects_of(console, OLD) == ["shop"] * 3
    assert _projects_of(console, None) == [None, None]
    refused = client.post("/projects/file", data={"csrf": csrf_of(page), "project": "shp"}).headers[
        "location"
    ]
    assert "did+you+mean" in refused or "did%20you%20mean" in refused


def test_the_cli_files_a_folder_with_the_same_service(
    console: Console, pool_settings: Settings
) -> None:
    _untagged(console, OLD, 2)
    listed = CliRunner().invoke(tags, ["untagged"], obj=pool_settings)
    assert listed.exit_code == 0, listed.output
    assert f"2 turn(s), 1 session(s), codex-cli: {OLD}" in listed.output
    wrong = CliRunner().invoke(tags, ["file", "sho", "--folder", OLD], obj=pool_settings)
    assert wrong.exit_code == 1 and "did you mean 'shop'" in wrong.output
    done = CliRunner().invoke(tags, ["file", "shop-old", "--folder", OLD], obj=pool_settings)
    assert done.exit_code == 0, done.output
    assert done.output.strip() == f"filed 2 turn(s) from {OLD} under shop"
    assert _projects_of(console, OLD) == ["shop", "shop"]
