"""The console run as a team member (their own PostgreSQL role, row-level security on): every
page answers, showing the person's own memory and teammates' shared projects, attributed;
tables only the admin reads are said so in a line, never a traceback. (The same against the
shared servers, through the product's commands: ``tests/sharedserver/test_team.py``.)"""

from __future__ import annotations

import itertools
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mcp.server.mcpserver.exceptions import ToolError
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from starlette.testclient import TestClient

from agents_memory.adapters import all_adapters
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.console.app import create_app
from agents_memory.console.build import open_console
from agents_memory.console.security import Guard
from agents_memory.ops import team as team_service
from agents_memory.ops.export import ExportRequest, export
from agents_memory.recall.state import open_state
from agents_memory.server.tools.pins import run_task_pin
from agents_memory.store import tags
from agents_memory.store import team as team_store
from agents_memory.store.memories import NewMemory, insert_memories
from tests.console.conftest import ORIGIN, PORT, csrf_of
from tests.console.test_bad_input import PAGES

_n = itertools.count()
SHARED = "quokka backoff of nine seconds"
PRIVATE = "zebrafish payroll codes leak"
BOBS = "heron pipeline after the smoke tests"


@dataclass
class Team:
    owner_url: str
    urls: dict[str, str]
    users: dict[str, int]
    roles: dict[str, str]


def _role_url(url: str, role: str) -> str:
    params = conninfo_to_dict(url)
    params["user"] = role
    return make_conninfo(**params)


@pytest.fixture
def small_team(db_url: str) -> Iterator[Team]:
    """Alice and Bob, each their own login role (the embedded server trusts its socket):
    Alice has a project she shares (alpha) and one she keeps (secretproj); Bob has beta."""
    n = f"{os.getpid()}_{next(_n)}"
    roles = {who: f"{who}_c{n}" for who in ("alice", "bob")}
    with psycopg.connect(db_url) as conn:
        team_service.init(conn)
        for role in roles.values():
            team_service.add(conn, db_url, role)
        users = {
            who: int(r[0])
            for who in roles
            for r in conn.execute(
                "SELECT user_id FROM team_members WHERE db_role = %s", (roles[who],)
            )
        }
        for name, who, text in (
            ("alpha", "alice", SHARED),
            ("secretproj", "alice", PRIVATE),
            ("beta", "bob", BOBS),
        ):
            tag = tags.create_project_tag(conn, name)
            ids = insert_memories(
                conn,
                users[who],
                [
                    NewMemory(
                        "claude-code", "assistant", f"It uses a {text}.", session_id=f"s-{name}"
                    )
                ],
            ).ids
            conn.execute(
                "UPDATE memory SET p_tag_id = %s, tag_processed = true WHERE id = ANY(%s)",
                (tag, list(ids)),
            )
        conn.commit()
        team_service.share(conn, users["alice"], "alpha")
    yield Team(db_url, {w: _role_url(db_url, r) for w, r in roles.items()}, users, roles)
    with psycopg.connect(db_url, autocommit=True) as conn:
        for role in roles.values():
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


@pytest.fixture
def bob_client(small_team: Team, make_settings: Any, tmp_path: Path) -> Iterator[TestClient]:
    settings: Settings = make_settings(
        database_url=small_team.urls["bob"], embedding_backend="none", user_name="bob-laptop"
    )
    console = open_console(
        settings, Catalog(all_adapters(), tmp_path / "home"), tmp_path / "capture.pid"
    )
    guard = Guard(port=PORT)
    try:
        with TestClient(
            create_app(console, guard), base_url=ORIGIN, follow_redirects=False
        ) as client:
            assert client.get(f"/login?token={guard.login_token}").status_code == 303
            client.headers["origin"] = ORIGIN
            yield client
    finally:
        console.state.close()


def test_every_page_answers_for_a_member(small_team: Team, bob_client: TestClient) -> None:
    for path in [*PAGES, "/team"]:
        if path in ("/live", "/export", "/session"):
            continue
        page = bob_client.get(path)
        assert page.status_code == 200, (path, page.text[-3000:])
        assert "Traceback" not in page.text
        assert "zebrafish" not in page.text, path


def test_a_member_sees_own_memory_and_shared_projects_attributed(
    small_team: Team, bob_client: TestClient
) -> None:
    alice = small_team.roles["alice"]
    timeline = bob_client.get("/timeline").text
    assert "heron pipeline" in timeline and "quokka backoff" in timeline
    assert f"by {alice}" in timeline and "zebrafish" not in timeline
    found = bob_client.get("/search", params={"q": "quokka backoff"}).text
    assert "quokka" in found and f"by {alice}" in found
    assert "codes leak" not in bob_client.get("/search", params={"q": "zebrafish payroll"}).text
    shared = bob_client.get("/session", params={"platform": "claude-code", "id": "s-alpha"})
    assert shared.status_code == 200 and f"by {alice}" in shared.text
    assert "forgetting it is theirs" in shared.text and 'id="forget-session"' not in shared.text
    private = bob_client.get("/session", params={"platform": "claude-code", "id": "s-secretproj"})
    assert private.status_code == 404 and "zebrafish" not in private.text
    assert "own memory only" in bob_client.get("/transfer").text


def test_a_member_shares_and_unshares_from_the_team_page(
    small_team: Team, bob_client: TestClient
) -> None:
    page = bob_client.get("/team").text
    assert f"Connected as {small_team.roles['bob']}: a person of the team" in page
    assert f"{small_team.roles['alice']}</td>" in page and "alpha" in page
    assert "/team/remove" not in page  # the admin's action only
    csrf = csrf_of(page)
    shared = bob_client.post(
        "/team/share", data={"csrf": csrf, "project": "beta", "action": "share"}
    )
    assert shared.status_code == 303 and "shared+with+the+team" in shared.headers["location"]
    with psycopg.connect(small_team.urls["alice"]) as alice:
        assert alice.execute(
            "SELECT count(*) FROM memory WHERE message LIKE '%%heron%%'"
        ).fetchone() == (1,)
    # Bob cannot share Alice's project in her name: the service shares his own turns only.
    refused = bob_client.post(
        "/team/share", data={"csrf": csrf, "project": "nosuch", "action": "share"}
    )
    assert "failed=" in refused.headers["location"]
    bob_client.post("/team/share", data={"csrf": csrf, "project": "beta", "action": "unshare"})
    with psycopg.connect(small_team.urls["alice"]) as alice:
        assert alice.execute(
            "SELECT count(*) FROM memory WHERE message LIKE '%%heron%%'"
        ).fetchone() == (0,)


def test_a_table_the_role_may_not_read_is_a_line_not_a_traceback(
    small_team: Team, bob_client: TestClient
) -> None:
    with psycopg.connect(small_team.owner_url, autocommit=True) as owner:
        group = team_store.group_role(owner)
        owner.execute(f"REVOKE SELECT ON capture_pauses FROM {group}")
    page = bob_client.get("/")
    assert page.status_code == 403, page.text[-2000:]
    assert "your database role may not do this" in page.text and "Traceback" not in page.text


def test_a_members_export_holds_their_own_memory_only(
    small_team: Team, make_settings: Any, tmp_path: Path
) -> None:
    settings: Settings = make_settings(
        database_url=small_team.urls["bob"], embedding_backend="none", user_name="bob-laptop"
    )
    out = tmp_path / "bob.zip"
    report = export(settings, ExportRequest(path=out), now=datetime.now().astimezone())
    assert report.person == small_team.roles["bob"]
    with zipfile.ZipFile(out) as bundle:
        text = b"".join(bundle.read(n) for n in bundle.namelist()).decode()
    assert "heron pipeline" in text
    assert "quokka" not in text and "zebrafish" not in text


def test_a_pin_for_a_teammate_reaches_their_brief_in_a_shared_project_only(
    small_team: Team, bob_client: TestClient, make_settings: Any
) -> None:
    bob = small_team.roles["bob"]
    alice_state = open_state(
        make_settings(
            database_url=small_team.urls["alice"], embedding_backend="none", user_name="a"
        )
    )
    try:
        made = run_task_pin(
            alice_state,
            action="create",
            caller="claude-code",
            to=f"{bob}/codex-cli",
            title="Rerun the quokka soak test",
            project="alpha",
        )
        pin = made.pins[0].pin
        with pytest.raises(ToolError, match="share with the team"):
            run_task_pin(
                alice_state,
                action="create",
                caller="claude-code",
                to=bob,
                title="the zebrafish audit",
                project="secretproj",
            )
        mine = run_task_pin(
            alice_state,
            action="create",
            caller="claude-code",
            to="codex-cli",
            title="a private chore",
        )
    finally:
        alice_state.close()
    brief = bob_client.get("/brief", params={"platform": "codex-cli"}).text
    assert f"pin {pin} from {small_team.roles['alice']}&#39;s claude-code" in brief, brief[-3000:]
    assert "quokka soak" in brief and "zebrafish" not in brief
    assert "private chore" not in brief
    with psycopg.connect(small_team.urls["bob"]) as raw:
        seen = {r[0] for r in raw.execute("SELECT pin_id FROM task_pin_events")}
        assert seen == {pin}, (seen, mine.pins[0].pin)
        # Bob may not write a pin in Alice's name, nor address one outside a shared project.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute(
                "INSERT INTO task_pin_events (user_id, pin_id, event, status, title, to_agent,"
                " project, to_user_id) VALUES (%s, 1, 'create', 'pending', 'x', '*', 'beta', %s)",
                (small_team.users["alice"], small_team.users["bob"]),
            )
    bob_state = open_state(
        make_settings(database_url=small_team.urls["bob"], embedding_backend="none")
    )
    try:
        for status, note in (("in_progress", None), ("done", "soak test green")):
            run_task_pin(
                bob_state, action="update", caller="codex-cli", pin=pin, status=status, note=note
            )
    finally:
        bob_state.close()
    with psycopg.connect(small_team.urls["alice"]) as raw:
        # The database itself keeps a pin for a teammate inside a shared project.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute(
                "INSERT INTO task_pin_events (user_id, pin_id, event, status, title, to_agent,"
                " project, to_user_id) VALUES (%s, 1, 'create', 'pending', 'x', '*',"
                " 'secretproj', %s)",
                (small_team.users["alice"], small_team.users["bob"]),
            )
        raw.rollback()
        statuses = [
            r[0]
            for r in raw.execute(
                "SELECT status FROM task_pin_events WHERE pin_id = %s ORDER BY id", (pin,)
            )
        ]
    assert statuses == ["pending", "in_progress", "done"]


def test_the_admin_removes_a_member_from_the_team_page(
    small_team: Team, make_settings: Any, tmp_path: Path
) -> None:
    settings: Settings = make_settings(database_url=small_team.owner_url, embedding_backend="none")
    console = open_console(
        settings, Catalog(all_adapters(), tmp_path / "owner"), tmp_path / "owner.pid"
    )
    guard = Guard(port=PORT)
    bob = small_team.roles["bob"]
    try:
        with TestClient(create_app(console, guard), base_url=ORIGIN) as client:
            client.get(f"/login?token={guard.login_token}", follow_redirects=False)
            client.headers["origin"] = ORIGIN
            page = client.get("/team").text
            assert "owner of the schema" in page and f'id="member-{bob}"' in page
            assert "/team/share" not in page  # the owner is no person of the team
            done = client.post(
                "/team/remove", data={"csrf": csrf_of(page), "role": bob}, follow_redirects=False
            )
            assert done.status_code == 303 and "removed" in done.headers["location"]
            assert f'id="member-{bob}"' not in client.get("/team").text
    finally:
        console.state.close()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(small_team.urls["bob"]).close()
