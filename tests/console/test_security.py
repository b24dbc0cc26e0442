"""The console's guard: login by one-time token, the session cookie, the Host allow-list, the
origin and CSRF checks on every change, the security headers, escaping of transcript text."""

from __future__ import annotations

from starlette.routing import Route
from starlette.testclient import TestClient

from agents_memory.console.app import routes
from agents_memory.console.security import Guard
from tests.console.conftest import ORIGIN, csrf_of


def test_every_page_needs_the_login(anonymous: TestClient) -> None:
    for path in ("/", "/timeline", "/search", "/projects", "/knowledge", "/forget", "/live"):
        response = anonymous.get(path)
        assert response.status_code == 401, path
        assert "mcp-agents-memory ui" in response.text


def test_the_login_token_works_once_and_sets_a_strict_httponly_cookie(
    anonymous: TestClient, guard: Guard
) -> None:
    token = guard.login_token
    assert token
    wrong = anonymous.get("/login?token=nope")
    assert wrong.status_code == 403
    first = anonymous.get(f"/login?token={token}")
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert anonymous.get("/").status_code == 200
    anonymous.cookies.clear()
    again = anonymous.get(f"/login?token={token}")
    assert again.status_code == 403
    assert anonymous.get("/").status_code == 401


def test_a_foreign_host_header_is_refused_even_with_a_session(client: TestClient) -> None:
    for host in ("evil.example:8765", "127.0.0.1:9999", "localhost.evil.example:8765"):
        response = client.get("/", headers={"host": host})
        assert response.status_code == 421, host
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_changes_from_another_origin_or_without_csrf_are_refused(client: TestClient) -> None:
    csrf = csrf_of(client.get("/").text)
    posts = [r for r in routes() if isinstance(r, Route) and "POST" in (r.methods or ())]
    assert len(posts) >= 10
    for route in posts:
        foreign = client.post(
            route.path, data={"csrf": csrf}, headers={"origin": "http://evil.example"}
        )
        assert foreign.status_code == 403, route.path
        no_origin = client.post(route.path, data={"csrf": csrf}, headers={"origin": ""})
        assert no_origin.status_code == 403, route.path
        no_token = client.post(route.path, data={})
        assert no_token.status_code == 403, route.path
        wrong = client.post(route.path, data={"csrf": csrf + "x"})
        assert wrong.status_code == 403, route.path


def test_a_change_with_origin_and_token_goes_through(client: TestClient) -> None:
    csrf = csrf_of(client.get("/").text)
    paused = client.post("/pause", data={"csrf": csrf, "platform": "", "for": "1h"})
    assert paused.status_code == 303
    page = client.get(paused.headers["location"]).text
    assert "paused" in page
    resumed = client.post("/resume", data={"csrf": csrf}, headers={"origin": ORIGIN})
    assert resumed.status_code == 303


def test_every_response_carries_the_content_security_policy(client: TestClient) -> None:
    for path in ("/", "/static/console.css", "/login?token=x"):
        headers = client.get(path).headers
        assert headers["content-security-policy"].startswith("default-src 'self'"), path
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"


def test_transcript_markup_is_shown_as_text_everywhere(client: TestClient) -> None:
    pages = [
        client.get("/timeline").text,
        client.get("/session?platform=claude-code&id=evil-session").text,
        client.get("/search?q=owned+alert+onerror").text,
    ]
    for html in pages[:2]:
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in html
    # Search renders the hit as Markdown with the searched words marked: still text, never markup.
    found = pages[2]
    assert "<script>alert" not in found and "<img src=x" not in found
    assert "&lt;script&gt;<mark>alert</mark>" in found and "&lt;img src=x" in found


def test_no_page_loads_anything_from_another_origin(client: TestClient) -> None:
    for path in ("/", "/timeline", "/search", "/projects", "/knowledge", "/brief", "/forget"):
        html = client.get(path).text
        for attribute in ('src="http', "src='http", 'href="http', "//cdn"):
            assert attribute not in html, (path, attribute)
        assert "<script>" not in html and " style=" not in html, path
