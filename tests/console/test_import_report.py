"""The console's import page shows the whole report: per member rows, new, present and
refused (with reasons), each refused row, new users, devices and profile changes — in the dry
run and after the import."""

from __future__ import annotations

import html
import re
from pathlib import Path

import psycopg
from starlette.testclient import TestClient

from tests.console.conftest import csrf_of
from tests.data.test_import_report import make_bundle, turn, user


def test_the_import_page_lists_refused_rows_new_users_and_devices(
    client: TestClient, db_url: str, tmp_path: Path
) -> None:
    bundle = make_bundle(
        tmp_path / "b.zip",
        users=[user("tester"), user("alice", core="Writes Go.")],
        memory=[
            turn("c-1", "one", device_name="desk", who="alice"),
            turn("c-2", "two", who="ghost"),
        ],
    )
    csrf = csrf_of(client.get("/transfer").text)

    dry = client.post(
        "/import",
        data={"csrf": csrf},
        files={"bundle": ("b.zip", bundle.read_bytes(), "application/zip")},
    )

    page = html.unescape(dry.text)
    assert dry.status_code == 200 and "Dry run" in page
    assert re.search(r"<td>memory</td><td>2</td><td>1</td><td>0</td><td>1 \(1 unknown user\)", page)
    assert "refused memory.jsonl line 2: unknown user 'ghost' (key 'c-2')" in page
    assert "new user: 'alice' (with core_profile)" in page
    assert "new device: desk (1 memories)" in page
    upload = re.search(r'name="upload" value="([0-9a-f]+)"', dry.text)
    assert upload
    done = client.post("/import/apply", data={"csrf": csrf, "upload": upload.group(1)})
    assert "Imported" in done.text and "new user: 'alice'" in html.unescape(done.text)
    with psycopg.connect(db_url) as conn:
        keys = conn.execute("SELECT external_uuid FROM memory WHERE external_uuid LIKE 'c-%'")
        assert [r[0] for r in keys] == ["c-1"]
