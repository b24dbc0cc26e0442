"""The console's finishing list (issue 31), through the real app: the brief as the model reads
it, search hits marked and paged, known values in the timeline's filters, problems first,
no LLM table without an LLM, and times the browser can put in the viewer's zone."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import psycopg
from starlette.testclient import TestClient

from agents_memory.console.context import Console
from tests.console.conftest import EVIL
from tests.data.pool import PINNED


class _Tags(HTMLParser):
    """Every element the page would build (what a browser would run or load)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _section(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</(div|section|pre)>', html, re.S)
    assert found, f"no #{element_id}"
    return found.group(1)


def _pin(console: Console, text: str) -> None:
    with console.state.pool.connection() as conn:
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, source, is_pinned)"
            " VALUES (%s, 'claude-code', 'user', %s, 'manage_knowledge', true)",
            (console.user_id, text),
        )


def _newest(console: Console, assignments: str) -> None:
    """``UPDATE memory SET <assignments>`` on the newest active turn (a constant from a test)."""
    with console.state.pool.connection() as conn:
        conn.execute(
            f"UPDATE memory SET {assignments}"
            " WHERE id = (SELECT max(id) FROM memory WHERE is_active)"
        )


def test_the_brief_is_shown_as_the_model_reads_it_with_the_raw_output_behind_a_toggle(
    client: TestClient, console: Console
) -> None:
    _pin(console, "Never trust a turn: " + EVIL + " [x](javascript:alert(2)) ![i](http://x.test/a)")
    html = client.get("/brief?platform=claude-code&project=shop").text
    shown = _section(html, "brief-text")
    assert "<code>make ship</code>" in shown  # Markdown, not the literal backticks
    assert "\\n" not in shown
    raw = re.search(r"<details[^>]*>.*?<pre[^>]*id=\"hook-output\"", html, re.S)
    assert raw, "the raw envelope is not behind a toggle"
    assert "`make ship`" in _section(html, "hook-output")
    elements = _elements(html)
    assert not [a for t, a in elements if t == "script" and a.get("src") != "/static/console.js"]
    assert not [t for t, a in elements if t == "img" or any(k.startswith("on") for k in a)]
    assert not [a for t, a in elements if t == "a" and "javascript" in (a.get("href") or "")]
    assert "&lt;script&gt;" in shown


def test_search_marks_the_words_names_the_project_and_renders_markdown_safely(
    client: TestClient,
) -> None:
    html = client.get("/search?q=deploy+make+ship").text
    hits = re.findall(r'<li class="hit".*?</li>', html, re.S)
    assert hits
    assert all('class="tag project"' in hit for hit in hits)
    assert any(re.search(r"<mark>deploy</mark>", hit, re.I) for hit in hits)
    assert any("<code>make <mark>ship</mark></code>" in h for h in hits), PINNED
    evil = client.get("/search?q=owned+alert").text
    assert "&lt;script&gt;" in evil
    elements = _elements(evil)
    assert not [a for t, a in elements if t == "script" and a.get("src") != "/static/console.js"]
    assert not [t for t, a in elements if t == "img"]


def test_search_pages_its_results_without_repeating_a_hit(
    client: TestClient, console: Console
) -> None:
    with console.state.pool.connection() as conn:
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message)"
            " SELECT %s, 'grok', 'user', 'pagination marker number ' || n"
            " FROM generate_series(1, 25) n",
            (console.user_id,),
        )
    seen: list[str] = []
    url: str | None = "/search?q=pagination+marker&limit=10"
    pages = 0
    while url:
        html = client.get(url).text
        pages += 1
        seen += re.findall(r'<li class="hit" id="hit-(\d+)"', html)
        following = re.search(r'id="next-page" href="([^"]+)"', html)
        url = following.group(1).replace("&amp;", "&") if following else None
    assert pages == 3 and len(seen) == len(set(seen)) == 25
    assert 'id="previous-page"' in html and 'start="21"' in html


def test_an_empty_search_page_says_what_to_type(client: TestClient) -> None:
    html = client.get("/search").text
    assert 'id="search-hint"' in html and "Type what you remember" in html


def test_timeline_filters_offer_the_known_projects_models_and_devices(
    client: TestClient, console: Console
) -> None:
    _newest(console, "agent_model = 'gpt-known-1', device_name = 'laptop-known'")
    html = client.get("/timeline").text
    for name, value in (("project", "shop"), ("model", "gpt-known-1"), ("device", "laptop-known")):
        select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
        assert select, f"{name} is not a list of known values"
        assert f"<option>{value}</option>" in select.group(1)
    assert "<option>shop-old</option>" not in html  # an alias is not a project of its own
    chosen = client.get("/timeline?model=gpt-known-1").text
    assert "<option selected>gpt-known-1</option>" in chosen
    assert chosen.count('id="row-') == 1


def test_status_shows_problems_first_and_no_llm_table_without_an_llm(
    client: TestClient, console: Console
) -> None:
    html = client.get("/").text
    assert 'id="problems"' in html  # no daemon, no worker in the test pool
    assert html.index('id="problems"') < html.index("Capture per client")
    assert "LLM use today" not in html
    assert "budget" not in html.lower()


def test_status_shows_the_llm_table_when_an_llm_is_configured(
    client: TestClient, console: Console
) -> None:
    console.state.settings = console.settings.model_copy(
        update={"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m"}
    )
    assert "LLM use today" in client.get("/").text


def test_times_are_iso_in_the_page_for_the_browser_and_say_utc_without_it(
    client: TestClient, console: Console
) -> None:
    _newest(console, "message_at = '2025-03-04T05:06:00Z'")
    html = client.get("/timeline").text
    assert '<time datetime="2025-03-04T05:06:00Z">2025-03-04 05:06 UTC</time>' in html


def test_the_timeline_s_database_values_are_bounded(console: Console) -> None:
    from agents_memory.store.owner.known_values import MAX_VALUES, known_values

    with console.state.pool.connection() as conn:
        assert isinstance(conn, psycopg.Connection)
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, agent_model)"
            " SELECT %s, 'grok', 'user', 'm', 'model-' || n FROM generate_series(1, %s) n",
            (console.user_id, MAX_VALUES + 50),
        )
        known = known_values(conn, console.user_id)
    assert len(known.models) == MAX_VALUES


def test_status_shows_the_vector_backlog_s_time_left_at_the_measured_pace(
    client: TestClient, console: Console
) -> None:
    from datetime import UTC, datetime, timedelta

    from agents_memory.store.coldpath import coldqueue

    start = datetime.now(UTC) - timedelta(minutes=1)
    with console.state.pool.connection() as conn:
        for seconds in (0, 10):
            report = coldqueue.JobReport("embedder", processed=30)
            at = start + timedelta(seconds=seconds)
            coldqueue.record_run(conn, report, now=at, device_name="d")
    eta = re.search(r'<span id="embed-eta">([^<]*)</span>', client.get("/").text)
    assert eta and eta.group(1).endswith("left at 3.0 rows/s (the worker&#39;s recent pace)")
