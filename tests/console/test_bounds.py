"""The console's inputs and outputs are bounded (issue 35): an upload over the cap is refused
with the form's error before its form is parsed (nothing kept), and a 50 MB turn is
shown clipped in the search results with a link to the whole turn."""

from __future__ import annotations

import re
from typing import Any

import psycopg
from starlette.testclient import TestClient

from agents_memory.config import Settings
from agents_memory.console.context import Console
from agents_memory.console.pages.transfer import MAX_UPLOAD
from tests.console.conftest import csrf_of

HUGE = 50 * 1024 * 1024


def _failed(client: TestClient, response: Any) -> str:
    assert response.status_code == 303, response.text
    page = client.get(response.headers["location"]).text
    found = re.search(r'class="failed"[^>]*>([^<]*)<', page)
    assert found, page[-2000:]
    return found.group(1)


def test_an_upload_over_the_cap_is_refused_before_it_is_read(
    client: TestClient, console: Console
) -> None:
    csrf = csrf_of(client.get("/transfer").text)
    refused = client.post(
        "/import",
        content=b"x" * 1024,
        headers={
            "content-type": "multipart/form-data; boundary=b",
            "content-length": str(MAX_UPLOAD * 2),
            "x-csrf-token": csrf,
        },
    )
    message = _failed(client, refused)
    assert "larger than 256 MiB" in message and "mcp-agents-memory import" in message
    assert console.work_dir is None or not any(console.work_dir.iterdir())


def test_an_upload_without_a_declared_size_is_refused(client: TestClient) -> None:
    csrf = csrf_of(client.get("/transfer").text)

    def body() -> Any:
        yield b"--b\r\n"

    refused = client.post(
        "/import",
        content=body(),
        headers={"content-type": "multipart/form-data; boundary=b", "x-csrf-token": csrf},
    )
    assert "larger than 256 MiB" in _failed(client, refused)


def test_search_shows_a_50_mb_turn_clipped_with_a_link_to_it(
    client: TestClient, pool_settings: Settings
) -> None:
    text = "zeppelin maintenance log " + "gauge reading 0123456789 " * (HUGE // 25)
    assert pool_settings.database_url
    with psycopg.connect(pool_settings.database_url) as conn:
        row = conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, session_id, source)"
            " SELECT user_id, 'claude-code', 'assistant', %s, 'huge-session', 'capture'"
            " FROM users WHERE user_name = %s RETURNING id",
            (text, pool_settings.user_name),
        ).fetchone()
    assert row is not None
    page = client.get("/search?q=zeppelin+maintenance")
    assert page.status_code == 200
    assert len(page.text) < 200_000, len(page.text)
    assert f'href="/turn/{row[0]}"' in page.text
    assert f"({len(text)} characters)" in page.text
