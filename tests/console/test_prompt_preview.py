"""The console's brief page previews what a prompt would get from per-prompt recall (the lines,
or why nothing, with the best confidence; nothing recorded), and its status page shows what
prompts got today (the real app, Starlette's test client)."""

from __future__ import annotations

import html
import re

from starlette.testclient import TestClient

from agents_memory.console.context import Console
from agents_memory.recall.prompt_lines import HEADER
from agents_memory.recall.prompt_recall import recall_for_prompt
from agents_memory.recall.search import QueryVector

FACT = "the quarterly invoice batch runs on the billing worker at 02:00 UTC"
PROMPT = "quarterly invoice batch runs on the billing worker at 02:00?"


def _fact(console: Console) -> int:
    with console.state.pool.connection() as conn:
        row = conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, session_id)"
            " VALUES (%s, 'codex-cli', 'assistant', %s, 'old-session') RETURNING id",
            (console.user_id, FACT),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _recorded(console: Console) -> int:
    with console.state.pool.connection() as conn:
        row = conn.execute("SELECT count(*) FROM prompt_recalls").fetchone()
    assert row is not None
    return int(row[0])


def test_the_brief_page_previews_a_prompts_memories(client: TestClient, console: Console) -> None:
    mid = _fact(console)
    page = client.get("/brief", params={"platform": "claude-code", "prompt": PROMPT}).text
    output = re.search(r'<pre class="brief" id="prompt-output">(.*?)</pre>', page, re.DOTALL)
    assert output, page
    text = html.unescape(output.group(1))
    assert text.startswith(HEADER) and f"{FACT} (id {mid})" in text
    assert re.search(
        r"1 memories from every project, \d+ characters; best confidence 0\.\d{3}", page
    )
    assert 'id="hook-output"' in page, "the brief is still shown beside it"
    assert _recorded(console) == 0, "a preview records nothing"


def test_the_brief_page_says_why_a_prompt_gets_nothing(
    client: TestClient, console: Console
) -> None:
    _fact(console)
    ack = client.get("/brief", params={"platform": "claude-code", "prompt": "ok thanks"}).text
    assert "Nothing: an acknowledgement or a command asks nothing of memory" in ack
    weak = client.get(
        "/brief", params={"platform": "claude-code", "prompt": "how many moons does jupiter have?"}
    ).text
    assert re.search(r"Nothing: (no memory clears the bar|nothing in memory matches)", weak)
    assert 'id="prompt-output"' not in weak


def test_the_status_page_shows_what_prompts_got_today(client: TestClient, console: Console) -> None:
    mid = _fact(console)
    with console.state.pool.connection() as conn:
        for prompt in (PROMPT, "ok"):
            recall_for_prompt(
                conn,
                console.settings,
                console.user_id,
                "claude-code",
                {"prompt": prompt, "session_id": "s-today"},
                vector=lambda text: QueryVector(None),
            )
    page = client.get("/").text
    assert "Per-prompt recall today" in page
    assert "1 of 2 prompts got memories" in page
    assert f'href="/turn/{mid}">id {mid}</a> {FACT}' in html.unescape(page)
