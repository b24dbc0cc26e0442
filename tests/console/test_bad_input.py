"""Bad input on every page and every field: a NUL byte, the bytes of a lone surrogate, an
over-long value. Each is the form's error on its page (HTTP 400), never a 500 or a traceback;
failed uploads and exports leave no temporary file."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from agents_memory.admission.admit import MAX_SAVED_CHARS
from agents_memory.console.app import routes
from agents_memory.console.inputs import LONGEST
from tests.console.conftest import csrf_of
from tests.data.bundles import DEEP, second_line, with_member

TIMELINE = ("project", "platform", "model", "device", "role", "since", "until")
FORGET = ("id", "session", "project", "platform", "device", "since", "until", "match", "min_score")
PAGES: dict[str, tuple[str, ...]] = {
    "/": ("notice", "failed"),
    "/timeline": (*TIMELINE, "actions", "kind", "before"),
    "/live": (*TIMELINE, "after"),
    "/search": (
        "q",
        "project",
        "since",
        "until",
        "p_tag",  # the older names, still read for one release
        "date_range",
        "role",
        "platform",
        "device_scope",
        "limit",
        "include_archived",
        "kind",
        "file",
    ),
    "/session": ("platform", "id", "turn"),
    "/sessions": ("project", "page"),
    "/projects": ("notice",),
    "/knowledge": ("notice",),
    "/brief": ("platform", "project", "model", "prompt", "cwd"),
    "/forget": FORGET,
    "/transfer": ("failed",),
    "/export": ("project", "platform", "since", "until", "include_archived", "vectors"),
    "/team": ("notice", "failed"),
}
"""Every page (GET) and the query fields it reads."""
FORMS: dict[str, tuple[str, ...]] = {
    "/pause": ("platform", "for"),
    "/resume": ("platform",),
    "/forget": (*FORGET, "expected"),
    "/knowledge/fact": ("action", "id", "content"),
    "/knowledge/profile": ("action", "content"),
    "/knowledge/unpin": ("id",),
    "/restore": ("id", "next"),
    "/projects/suggestion": ("ref", "action", "target", "reason"),
    "/projects/alias": ("source", "target"),
    "/projects/unalias": ("source",),
    "/projects/registry": ("name", "kind", "paused", "description"),
    "/projects/file": ("folder", "has_folder", "project"),
    "/import/apply": ("upload",),
    "/import": ("bundle",),
    "/team/share": ("project", "action"),
    "/team/remove": ("role",),
}
"""Every change (POST) and its form fields."""

BAD = {
    "nul": lambda name: "%00",
    "surrogate": lambda name: "%ED%A0%80",
    "long": lambda name: "x" * ((MAX_SAVED_CHARS if name == "content" else LONGEST) + 1),
}
SAYS = {"nul": "NUL byte", "surrogate": "not UTF-8", "long": "characters long"}
TEMPLATES = Path(__file__).parents[2] / "agents_memory" / "console" / "templates"


HOSTILE = (
    "99999999999999999999",
    "-1",
    "' OR 1=1 --",
    "\u202e",
    "%",
    "..",
    " ",
    "2026-13-45",
    "9999-12-31",
    "1e309",
    "nan",
    "\t\n",
    "\x01\x1f",
    "*",
    "<script>alert(1)</script>",
)
"""Values that are not refused by the input rule but are no valid filter or id either."""


def _clean(response_text: str) -> None:
    assert "Traceback" not in response_text
    assert 'File "' not in response_text


def test_the_tables_name_every_route_and_every_field_the_templates_send() -> None:
    paths = {(r.path, m) for r in routes() if isinstance(r, Route) for m in r.methods or ()}
    gets = {p for p, m in paths if m == "GET"} - {"/turn/{memory_id:int}"}
    posts = {p for p, m in paths if m == "POST"}
    assert gets == set(PAGES) and posts == set(FORMS)
    for template in TEMPLATES.glob("*.html"):
        for form in re.findall(r"<form\b(.*?)</form>", template.read_text("utf-8"), re.S):
            action = re.search(r'action="([^"{]+)"', form)
            if action is None:
                continue
            method = "POST" if 'method="post"' in form else "GET"
            table = FORMS if method == "POST" else PAGES
            names = set(re.findall(r'name="(\w+)"', form)) - {"csrf", "viewport"}
            assert names <= set(table[action.group(1)]), (template.name, action.group(1))


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_query_fields_show_the_pages_form_error(client: TestClient, kind: str) -> None:
    for path, fields in PAGES.items():
        for name in fields:
            value = BAD[kind](name)
            response = client.get(f"{path}?{name}={value}")
            where = f"{path}?{name}= ({kind})"
            assert response.status_code == 400, where
            _clean(response.text)
            assert SAYS[kind] in response.text and name in response.text, where
            if path != "/live":  # the live feed has no page; its 400 is one line
                assert 'role="alert"' in response.text, where


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_form_fields_show_the_forms_page_with_its_error(client: TestClient, kind: str) -> None:
    csrf = csrf_of(client.get("/").text)
    for path, fields in FORMS.items():
        for name in fields:
            value = BAD[kind](name)
            response = client.post(
                path,
                content=f"csrf={quote(csrf)}&{name}={value}",
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
            where = f"{path} {name} ({kind})"
            assert response.status_code == 400, where
            _clean(response.text)
            assert SAYS[kind] in response.text and 'role="alert"' in response.text, where


def test_an_upload_key_that_names_no_upload_is_gone_whatever_its_length(
    client: TestClient,
) -> None:
    csrf = csrf_of(client.get("/transfer").text)
    for key in ("a" * 300, "../" * 10, "0" * 32):
        response = client.post("/import/apply", data={"csrf": csrf, "upload": key})
        assert response.status_code == 303, key
        assert "upload+the+bundle+again" in response.headers["location"], key


def test_a_nul_in_a_multipart_field_is_refused_and_the_upload_not_kept(
    client: TestClient, spool: Path
) -> None:
    csrf = csrf_of(client.get("/transfer").text)
    response = client.post(
        "/import",
        data={"csrf": csrf, "note": "a\x00b"},
        files={"bundle": ("x.zip", b"PK", "application/zip")},
    )
    assert response.status_code == 400 and "NUL byte" in response.text
    assert list(spool.rglob("*.zip")) == []


@pytest.fixture
def spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory every console temp file goes to, for this test alone."""
    where = tmp_path / "spool"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (second_line(b'{"external_uuid": '), "memory.jsonl line 2"),
        (second_line(DEEP), "memory.jsonl line 2"),
    ],
    ids=["bad-json-line", "nested-50k-deep"],
)
def test_a_refused_upload_shows_why_on_the_transfer_page_and_is_not_kept(
    client: TestClient, spool: Path, change: object, says: str
) -> None:
    good = client.get("/export").content
    bad = with_member(good, "memory.jsonl", change)  # type: ignore[arg-type]
    assert list(spool.iterdir()) == []
    csrf = csrf_of(client.get("/transfer").text)
    response = client.post(
        "/import", data={"csrf": csrf}, files={"bundle": ("bad.zip", bad, "application/zip")}
    )
    assert response.status_code == 400
    _clean(response.text)
    assert says in response.text and 'role="alert"' in response.text
    assert list(spool.rglob("*.zip")) == []


def test_a_failed_export_leaves_no_temporary_folder(client: TestClient, spool: Path) -> None:
    for query in ("project=%00", "since=not-a-day", "until=%ED%A0%80"):
        response = client.get(f"/export?{query}")
        assert response.status_code in (303, 400), query
        _clean(response.text)
        assert list(spool.iterdir()) == [], query


def test_hostile_but_encodable_values_never_fail_a_page_or_a_form(client: TestClient) -> None:
    """Every field of every page and form, each value of :data:`HOSTILE` (bounded: one request
    each): an answer below 500 with no traceback (the test client raises on a server error)."""
    csrf = csrf_of(client.get("/").text)
    for value in HOSTILE:
        for path, fields in PAGES.items():
            for name in fields if path != "/live" else ():  # a valid filter would stream
                response = client.get(f"{path}?{name}={quote(value)}")
                assert response.status_code < 500, (path, name, value)
                _clean(response.text)
        for path, fields in FORMS.items():
            for name in fields:
                response = client.post(
                    path,
                    content=f"csrf={quote(csrf)}&{name}={quote(value)}",
                    headers={"content-type": "application/x-www-form-urlencoded"},
                )
                assert response.status_code < 500, (path, name, value)
                _clean(response.text)
