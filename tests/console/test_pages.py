"""Every page renders with data, and every action reaches its service (test client)."""

from __future__ import annotations

import re
import zipfile
from io import BytesIO
from typing import Any

import psycopg
from starlette.testclient import TestClient

from agents_memory.console.context import Console
from agents_memory.ops.tags import tag_overview
from tests.console.conftest import csrf_of
from tests.data.pool import PINNED, PROFILE


def _follow(client: TestClient, response: Any) -> str:
    assert response.status_code == 303, response.text
    return str(client.get(response.headers["location"]).text)


def test_every_page_renders_with_the_pools_data(client: TestClient) -> None:
    status = client.get("/").text
    assert "claude-code" in status and "Pause capture" in status
    timeline = client.get("/timeline").text
    assert timeline.count('class="turn') >= 10 and 'data-live="/live?after=' in timeline
    assert "shop" in client.get("/projects").text
    knowledge = client.get("/knowledge").text
    assert PINNED.replace("`", "") in knowledge.replace("`", "") and PROFILE in knowledge
    brief = client.get("/brief?platform=claude-code&project=shop").text
    assert "of 9500 characters" in brief and 'id="hook-output"' in brief
    assert "Archive: can be restored" in client.get("/forget").text
    assert "Import a bundle" in client.get("/transfer").text


def test_timeline_pages_by_keyset_without_repeating_a_turn(
    client: TestClient, console: Console
) -> None:
    with console.state.pool.connection() as conn:
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, message_at)"
            " SELECT %s, 'grok', 'user', 'same instant ' || n, '2026-01-01T00:00:00Z'"
            " FROM generate_series(1, 120) n",
            (console.user_id,),
        )
        total = conn.execute("SELECT count(*) FROM memory WHERE is_active").fetchone()
    assert total
    seen: list[str] = []
    url: str | None = "/timeline"
    while url:
        html = client.get(url).text
        seen += re.findall(r'id="row-(\d+)"', html)
        older = re.search(r'id="older" href="([^"]+)"|href="([^"]+)" id="older"', html)
        url = (older.group(1) or older.group(2)).replace("&amp;", "&") if older else None
    assert len(seen) == len(set(seen)) == total[0]


def test_timeline_filters_by_platform_and_role(client: TestClient) -> None:
    html = client.get("/timeline?platform=codex-cli&role=user").text
    whos = re.findall(r'<span class="who">([^<]+)</span>', html)
    assert whos and all(w.strip().startswith("codex-cli user") for w in whos)


def test_search_explains_each_hit_and_opens_its_session(client: TestClient) -> None:
    html = client.get("/search?q=deploy").text
    assert "why: full-text #1" in html
    first = re.search(r'class="open" href="/turn/(\d+)"', html)
    assert first
    opened = client.get(f"/turn/{first.group(1)}")
    assert opened.status_code == 303 and "#turn-" in opened.headers["location"]
    session = client.get(opened.headers["location"]).text
    assert f'id="turn-{first.group(1)}"' in session


def test_a_session_shows_its_turns_in_order_with_summary_and_forget_link(
    client: TestClient, console: Console
) -> None:
    def first_session(conn: psycopg.Connection[Any]) -> tuple[str, str]:
        row = conn.execute(
            "SELECT agent_platform, session_id FROM memory WHERE p_tag_id IS NOT NULL"
            " AND session_id IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
        assert row
        return str(row[0]), str(row[1])

    with console.state.pool.connection() as conn:
        platform, session = first_session(conn)
    html = client.get(f"/session?platform={platform}&id={session}").text
    ids = [int(i) for i in re.findall(r'id="turn-(\d+)"', html)]
    assert len(ids) > 1 and "Shop work." in html and 'id="forget-session"' in html


def test_confirming_a_new_tag_suggestion_creates_the_tag(
    client: TestClient, console: Console
) -> None:
    page = client.get("/projects").text
    ref = re.search(r'name="ref" value="(n\d+)"', page)
    assert ref
    done = client.post(
        "/projects/suggestion",
        data={"csrf": csrf_of(page), "ref": ref.group(1), "action": "confirm"},
    )
    assert "created project tag &#39;payments&#39;" in _follow(client, done)
    with console.state.pool.connection() as conn:
        overview = tag_overview(conn, console.user_id)
    assert "payments" in [t.name for t in overview.tags] and not overview.new
    again = client.post(
        "/projects/suggestion",
        data={"csrf": csrf_of(page), "ref": ref.group(1), "action": "confirm"},
    )
    assert "is already confirmed" in _follow(client, again)


def test_forget_shows_the_count_first_then_forgets_the_session(
    client: TestClient, console: Console
) -> None:
    dry = client.get("/forget?session=evil-session&platform=claude-code").text
    assert "1 memories would be forgotten" in dry
    with console.state.pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM memory WHERE session_id = 'evil-session'")
    wrong = client.post(
        "/forget",
        data={"csrf": csrf_of(dry), "session": "evil-session", "expected": "7"},
    )
    assert "now names 1 memories, not 7" in _follow(client, wrong)
    done = client.post(
        "/forget",
        data={"csrf": csrf_of(dry), "session": "evil-session", "expected": "1"},
    )
    assert "forgot 1 memories" in _follow(client, done)
    gone = client.get("/session?platform=claude-code&id=evil-session")
    assert gone.status_code == 404


def test_a_fact_is_pinned_edited_archived_and_restored(client: TestClient) -> None:
    csrf = csrf_of(client.get("/knowledge").text)
    added = _follow(
        client,
        client.post(
            "/knowledge/fact", data={"csrf": csrf, "action": "add", "content": "Tabs, never."}
        ),
    )
    found = re.search(r"fact #(\d+) pinned", added)
    assert found
    fact = found.group(1)
    edited = client.post(
        "/knowledge/fact",
        data={"csrf": csrf, "action": "update", "id": fact, "content": "Spaces, four."},
    )
    page = _follow(client, edited)
    assert "Spaces, four." in page and "1 earlier version(s)" in page and "Tabs, never." in page
    archived = _follow(
        client, client.post("/knowledge/fact", data={"csrf": csrf, "action": "remove", "id": fact})
    )
    assert f'id="archived-{fact}"' in archived and f'id="fact-{fact}"' not in archived
    restored = _follow(client, client.post("/restore", data={"csrf": csrf, "id": fact}))
    assert f"memory {fact} restored" in restored and f'id="archived-{fact}"' not in restored


def test_unpinning_keeps_the_memory_but_takes_it_off_the_pinned_list(client: TestClient) -> None:
    csrf = csrf_of(client.get("/knowledge").text)
    added = _follow(
        client,
        client.post("/knowledge/fact", data={"csrf": csrf, "action": "add", "content": "Use uv."}),
    )
    found = re.search(r"fact #(\d+) pinned", added)
    assert found
    fact = found.group(1)
    unpinned = _follow(client, client.post("/knowledge/unpin", data={"csrf": csrf, "id": fact}))
    assert f"fact #{fact} unpinned" in unpinned and f'id="fact-{fact}"' not in unpinned
    again = _follow(client, client.post("/knowledge/unpin", data={"csrf": csrf, "id": fact}))
    assert f"memory {fact} is not pinned" in again


def test_the_sub_profile_is_saved_with_history(client: TestClient) -> None:
    csrf = csrf_of(client.get("/knowledge").text)
    page = _follow(
        client,
        client.post(
            "/knowledge/profile",
            data={"csrf": csrf, "action": "update", "content": "Works in Rust this month."},
        ),
    )
    assert "sub profile saved" in page and "sub_profile by manage_knowledge" in page


def test_export_downloads_a_bundle_and_import_shows_a_dry_run_first(client: TestClient) -> None:
    bundle = client.get("/export?project=shop")
    assert bundle.status_code == 200
    assert bundle.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(BytesIO(bundle.content)) as archive:
        assert "manifest.json" in archive.namelist()
    csrf = csrf_of(client.get("/transfer").text)
    dry = client.post(
        "/import",
        data={"csrf": csrf},
        files={"bundle": ("shop.zip", bundle.content, "application/zip")},
    )
    assert dry.status_code == 200 and "Dry run" in dry.text
    upload = re.search(r'name="upload" value="([0-9a-f]+)"', dry.text)
    assert upload
    done = client.post("/import/apply", data={"csrf": csrf, "upload": upload.group(1)})
    assert done.status_code == 200 and "Imported" in done.text
    gone = client.post("/import/apply", data={"csrf": csrf, "upload": upload.group(1)})
    assert "upload the bundle again" in _follow(client, gone)


def test_a_new_tag_suggestion_can_be_answered_as_an_alias_of_an_existing_project(
    client: TestClient,
) -> None:
    page = client.get("/projects").text
    ref = re.search(r'name="ref" value="(n\d+)"', page)
    assert ref
    done = client.post(
        "/projects/suggestion",
        data={"csrf": csrf_of(page), "ref": ref.group(1), "action": "alias", "target": "shop"},
    )
    after = _follow(client, done)
    assert "&#39;payments&#39; is now an alias of &#39;shop&#39;" in after
    assert "payments → shop" in after


def test_a_merge_suggestion_is_rejected_for_good(client: TestClient) -> None:
    page = client.get("/projects").text
    ref = re.search(r'name="ref" value="(a\d+)"', page)
    assert ref
    done = client.post(
        "/projects/suggestion",
        data={"csrf": csrf_of(page), "ref": ref.group(1), "action": "reject"},
    )
    after = _follow(client, done)
    assert "rejected &#39;blog&#39; -&gt; &#39;shop&#39;" in after
    assert f'id="suggestion-{ref.group(1)}"' not in after


def test_a_project_is_put_in_the_registry_and_paused_from_its_form(client: TestClient) -> None:
    page = client.get("/projects").text
    assert 'id="registry-shop"' in page
    form = {"csrf": csrf_of(page), "name": "shop", "kind": "project", "paused": "1"}
    done = client.post("/projects/registry", data={**form, "description": "The web shop"})
    after = _follow(client, done)
    assert "&#39;shop&#39;: kind project, paused, described as &#39;The web shop&#39;" in after
    assert 'value="The web shop"' in after and "checked" in after
    status = client.get("/").text
    assert "Paused projects (not captured): shop" in status
    cleared = {**form, "kind": "none", "paused": "", "description": ""}
    again = _follow(client, client.post("/projects/registry", data=cleared))
    assert "&#39;shop&#39;: kind none, active" in again
    bad = _follow(client, client.post("/projects/registry", data={**form, "kind": "planet"}))
    assert "unknown kind &#39;planet&#39;" in bad
