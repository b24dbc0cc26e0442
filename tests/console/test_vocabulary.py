"""The console's forms speak the commands' vocabulary: ``project``, ``since`` / ``until`` and a
client's full or short name in search, timeline, forget and pause, and a misspelt project is
named with the close ones (test client on the real pool)."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from agents_memory.console.context import Console
from agents_memory.store.capture.pause import active_pauses
from tests.console.conftest import csrf_of


def test_the_search_form_has_the_fields_of_the_command_line(client: TestClient) -> None:
    html = client.get("/search").text
    for name in ("project", "since", "until", "platform"):
        assert f'name="{name}"' in html
    assert 'name="p_tag"' not in html and 'name="date_range"' not in html


def test_search_by_project_and_an_old_link_by_p_tag_find_the_same(client: TestClient) -> None:
    new = client.get("/search?q=deploy&project=Shop-Old&since=2000-01-01")
    old = client.get("/search?q=deploy&p_tag=shop&date_range=2000-01-01..")
    assert new.status_code == old.status_code == 200
    hits = re.findall(r'class="open" href="/turn/(\d+)"', new.text)
    assert hits and hits == re.findall(r'class="open" href="/turn/(\d+)"', old.text)
    assert 'name="project" value="shop"' in old.text  # the old link fills the new field


def test_a_misspelt_project_names_the_close_ones_in_search_and_timeline(
    client: TestClient,
) -> None:
    for url in ("/search?q=deploy&project=sho", "/timeline?project=sho"):
        page = client.get(url)
        assert page.status_code == 400, url
        assert "no project &#39;sho&#39; (did you mean &#39;shop&#39;" in page.text, url
        assert "projects: blog, shop" in page.text


def test_the_timeline_and_forget_take_a_clients_short_name(client: TestClient) -> None:
    html = client.get("/timeline?platform=codex&role=user").text
    whos = re.findall(r'<span class="who">([^<]+)</span>', html)
    assert whos and all(w.strip().startswith("codex-cli user") for w in whos)
    dry = client.get("/forget?session=evil-session&platform=claude").text
    assert "1 memories would be forgotten" in dry


def test_pause_takes_a_clients_short_name(client: TestClient, console: Console) -> None:
    page = client.get("/").text
    done = client.post("/pause", data={"csrf": csrf_of(page), "platform": "codex", "for": "1h"})
    assert done.status_code == 303, done.text
    with console.state.pool.connection() as conn:
        assert [p.platform for p in active_pauses(conn, console.settings.device_name)] == [
            "codex-cli"
        ]


def test_the_brief_preview_takes_a_short_client_name_and_an_alias(client: TestClient) -> None:
    page = client.get("/brief?platform=claude&project=Shop-Old")
    assert page.status_code == 200, page.text
    assert "of 9500 characters" in page.text and 'id="hook-output"' in page.text
    wrong = client.get("/brief?platform=claude&project=sho")
    assert wrong.status_code == 400
    assert "did you mean &#39;shop&#39;" in wrong.text


def test_an_export_of_a_misspelt_project_names_the_close_ones(client: TestClient) -> None:
    refused = client.get("/export?project=sho", follow_redirects=True)
    assert "did you mean &#39;shop&#39;" in refused.text or "did you mean 'shop'" in refused.text
