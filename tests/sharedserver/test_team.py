"""A team on one PostgreSQL, with three real roles (two people and the Cold Path) made by the
product's own `team` command: each person's memory is private, a shared project is the team's,
and the database itself enforces it — for a raw SQL session too.

Run on both shared servers: the wheel's PostgreSQL 18 with pgvector behind TLS, and Debian's
PostgreSQL 15 (full-text only). The team's admin is a role that owns only its database and may
create roles (as a managed service's main role usually may)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
from mcp import Client, StdioServerParameters

from tests.console.test_bad_input import PAGES
from tests.sharedserver.conftest import (
    BIN,
    SharedServer,
    coldpath_once,
    embedding_env,
    product_env,
    run_cli,
    search_json,
)

pytestmark = pytest.mark.sharedserver

_teams = itertools.count()
ALPHA_WORDS = "quokka backoff"
SECRET_WORDS = "zebrafish payroll"


@dataclass
class Team:
    server: SharedServer
    database: str
    n: int
    owner_env: dict[str, str]
    alice: dict[str, str]
    bob: dict[str, str]
    cold: dict[str, str]
    urls: dict[str, str]

    def role(self, name: str) -> str:
        return f"{name}_{self.n}"

    def raw(self, who: str) -> psycopg.Connection[Any]:
        """A raw SQL session as ``who`` (what a person could open with psql)."""
        return psycopg.connect(self.urls[who], autocommit=True)

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.server.cluster.admin_conninfo(self.database), autocommit=True)


def _url(server: SharedServer, role: str, password: str, database: str) -> str:
    return (
        f"postgresql://{role}:{password}@localhost:{server.port}/{database}"
        f"?sslmode=verify-full&sslrootcert={server.ca}"
    )


def _git_repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", remote]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def _claude_session(home: Path, session: str, cwd: Path, turns: list[tuple[str, str]]) -> None:
    """A Claude Code transcript in its real shape: a user prompt and the assistant's reply."""
    folder = home / ".claude" / "projects" / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    start = datetime.now(UTC) - timedelta(hours=2)  # inside the brief's recent days
    for i, (ask, answer) in enumerate(turns):
        base = {"sessionId": session, "cwd": str(cwd), "version": "2.1.197", "gitBranch": "main"}
        lines.append(
            {
                **base,
                "type": "user",
                "uuid": f"{session}-u{i}",
                "timestamp": (start + timedelta(minutes=2 * i)).isoformat(),
                "message": {"role": "user", "content": ask},
            }
        )
        lines.append(
            {
                **base,
                "type": "assistant",
                "uuid": f"{session}-a{i}",
                "timestamp": (start + timedelta(minutes=2 * i + 1)).isoformat(),
                "message": {
                    "id": f"msg_{session}_{i}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-8",
                    "content": [{"type": "text", "text": answer}],
                },
            }
        )
    (folder / f"{session}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )


def _read_memory(env: dict[str, str], *ids: int) -> list[Any]:
    """``read_memory`` of each id through the MCP server run as ``env``'s person."""
    params = StdioServerParameters(command=str(BIN / "mcp-agents-memory"), args=[], env=env)

    async def session() -> list[Any]:
        async with Client(params) as client:
            return [await client.call_tool("read_memory", {"memory_id": i}) for i in ids]

    return anyio.run(session)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(params=["pg18", "pg15"])
def team(request: pytest.FixtureRequest, tmp_path: Path, embed_server: Any) -> Team:
    server: SharedServer = request.getfixturevalue(request.param)
    n = next(_teams)
    owner, database = f"teamowner_{n}", f"teamdb_{n}"
    with psycopg.connect(server.cluster.admin_conninfo(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {owner} LOGIN CREATEROLE PASSWORD 'owner-pw-{n}'")
        conn.execute(f"CREATE DATABASE {database} TEMPLATE template0 ENCODING UTF8 OWNER {owner}")
    if server.vector:
        with psycopg.connect(server.cluster.admin_conninfo(database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
    embedding = (
        embedding_env(embed_server.base_url) if server.vector else {"EMBEDDING_BACKEND": "none"}
    )

    def env(who: str, url: str) -> dict[str, str]:
        home = tmp_path / who
        home.mkdir(exist_ok=True)
        return product_env(home, url, USER_NAME=f"{who}-laptop", **embedding)

    owner_env = env("owner", _url(server, owner, f"owner-pw-{n}", database))
    _ok(run_cli("mcp-agents-memory", ["migrate"], owner_env))
    ready = _ok(run_cli("mcp-agents-memory", ["team", "init"], owner_env))
    assert "team ready" in ready
    # The owner is no superuser: init names what the server's admin runs so members' searches
    # use the indexes; the admin runs it, as they created pgvector.
    statements = [line.strip() for line in ready.splitlines() if "LEAKPROOF" in line]
    assert statements and all(s.startswith("ALTER FUNCTION") for s in statements)
    with psycopg.connect(server.cluster.admin_conninfo(database), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.encode())
    urls: dict[str, str] = {}
    for who, extra in (("alice", []), ("bob", []), ("cold", ["--cold-path"])):
        added = _ok(
            run_cli("mcp-agents-memory", ["team", "add", f"{who}_{n}", *extra, "--json"], owner_env)
        )
        urls[who] = json.loads(added)["database_url"]
        assert urls[who].startswith(f"postgresql://{who}_{n}:")
    return Team(
        server,
        database,
        n,
        owner_env,
        env("alice", urls["alice"]),
        env("bob", urls["bob"]),
        env("cold", urls["cold"]),
        urls,
    )


def _capture(team: Team, tmp_path: Path) -> None:
    """Alice works in two repositories (one she will share), Bob in his own; both capture,
    and the Cold Path (its own role) tags every person's rows."""
    alpha = _git_repo(tmp_path / "repos" / "alpha", "https://git.example.com/team/alpha.git")
    secret = _git_repo(tmp_path / "repos" / "secretproj", "https://git.example.com/al/secretproj")
    beta = _git_repo(tmp_path / "repos" / "beta", "https://git.example.com/bob/beta.git")
    alice_home = Path(team.alice["HOME"])
    _claude_session(
        alice_home,
        "s-alpha",
        alpha,
        [("why does the reconcile worker wait?", f"It uses a {ALPHA_WORDS} of nine seconds.")],
    )
    _claude_session(
        alice_home,
        "s-secret",
        secret,
        [("what leaks in the export?", f"The {SECRET_WORDS} codes leak into the CSV.")],
    )
    _claude_session(
        Path(team.bob["HOME"]),
        "s-beta",
        beta,
        [("how do we deploy beta?", "With the heron pipeline, after the smoke tests.")],
    )
    _ok(run_cli("memory-capture", ["backfill"], team.alice))
    _ok(run_cli("memory-capture", ["backfill"], team.bob))
    reports = coldpath_once(team.cold)
    assert reports["tagger"].startswith("6 processed, 0 failed"), reports


def test_private_by_default_shared_by_project_enforced_by_the_database(
    team: Team, tmp_path: Path
) -> None:
    _capture(team, tmp_path)
    with team.admin() as admin:
        tagged = dict(
            admin.execute(
                "SELECT t.name, count(*) FROM memory m JOIN project_tags t ON t.id = m.p_tag_id"
                " GROUP BY 1"
            ).fetchall()
        )
        ids = dict(admin.execute("SELECT user_name, user_id FROM users").fetchall())
        alice_ids = dict(
            admin.execute(
                "SELECT session_id, max(id) FROM memory WHERE role = 'assistant' GROUP BY 1"
            ).fetchall()
        )
    assert tagged == {"alpha": 2, "secretproj": 2, "beta": 2}
    alice_id = ids["alice_" + str(team.n)]

    # Before sharing, Bob sees none of Alice's rows: not by search, not by raw SQL.
    found, _ = search_json(team.bob, ALPHA_WORDS)
    assert not [r for r in found["results"] if ALPHA_WORDS in r["message"]]
    with team.raw("bob") as bob:
        assert bob.execute(
            "SELECT count(*) FROM memory WHERE user_id = %s", (alice_id,)
        ).fetchone() == (0,)

    assert "alpha: shared with the team" in _ok(
        run_cli("mcp-agents-memory", ["team", "share", "alpha"], team.alice)
    )

    # Bob's search finds Alice's shared project, attributed; her private project stays hers.
    found, _ = search_json(team.bob, ALPHA_WORDS)
    mine = [r for r in found["results"] if ALPHA_WORDS in r["message"]]
    assert mine and all(r["by"] == f"alice_{team.n}" for r in mine), json.dumps(found)[:3000]
    found, _ = search_json(team.bob, SECRET_WORDS)
    assert not [r for r in found["results"] if "zebrafish" in r["message"]]

    with team.raw("bob") as bob:
        rows = bob.execute(
            "SELECT message FROM memory WHERE user_id = %s ORDER BY id", (alice_id,)
        ).fetchall()
        assert len(rows) == 2 and all("zebrafish" not in r[0] for r in rows)
        assert bob.execute(
            "SELECT count(*) FROM memory WHERE message LIKE '%%zebrafish%%'"
        ).fetchone() == (0,)
        # Her profile is hers; teammates' names (for attribution) are all Bob reads of users.
        assert bob.execute(
            "SELECT count(*) FROM users WHERE user_id = %s", (alice_id,)
        ).fetchone() == (0,)
        names = {r[0] for r in bob.execute("SELECT user_name FROM am_person_names()")}
        assert names == {f"alice_{team.n}", f"bob_{team.n}"}
        # Writes to Alice's rows are refused by the database.
        assert (
            bob.execute(
                "UPDATE memory SET message = 'rewritten' WHERE user_id = %s", (alice_id,)
            ).rowcount
            == 0
        )
        assert bob.execute("DELETE FROM memory WHERE user_id = %s", (alice_id,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO memory (user_id, agent_platform, role, message)"
                " VALUES (%s, 'claude-code', 'user', 'forged')",
                (alice_id,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO project_shares (user_id, p_tag_id) SELECT %s, id"
                " FROM project_tags WHERE name = 'secretproj'",
                (alice_id,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("DELETE FROM team_members")
        assert (
            bob.execute(
                "UPDATE users SET core_profile = 'x' WHERE user_id = %s", (alice_id,)
            ).rowcount
            == 0
        )

    # The admin (and nobody else) sees it all; Alice's rows are unchanged.
    with team.admin() as admin:
        assert admin.execute(
            "SELECT count(*) FROM memory WHERE message IN ('rewritten', 'forged')"
        ).fetchone() == (0,)

    # Bob's brief in his own clone of alpha tells what Alice did there; nothing private.
    bob_alpha = _git_repo(
        tmp_path / "bob-clone" / "alpha", "https://git.example.com/team/alpha.git"
    )
    hook = run_cli(
        "memory-capture",
        ["hook", "session-start", "--platform", "claude-code"],
        {**team.bob, "HOOK_TIMEOUT_MS": "30000"},  # built directly (no daemon), machine busy
        stdin=json.dumps({"session_id": "s-new", "cwd": str(bob_alpha), "source": "startup"}),
    )
    brief = json.loads(_ok(hook))["hookSpecificOutput"]["additionalContext"]
    assert "## Teammates in alpha (shared with you)" in brief
    assert f"alice_{team.n}: " in brief and "quokka" in brief
    assert "zebrafish" not in brief

    # read_memory (MCP, the SDK's client) reads Alice's shared turn, not her private one.
    shared_id, private_id = (
        alice_ids["s-alpha"],
        alice_ids["s-secret"],
    )
    shared, private = _read_memory(team.bob, shared_id, private_id)
    assert not shared.is_error and "quokka" in shared.content[0].text
    assert private.is_error and "zebrafish" not in private.content[0].text

    # doctor says which role Bob is; team list shows who shares what.
    doctor = run_cli("mcp-agents-memory", ["doctor"], team.bob)
    assert f"bob_{team.n}: a person of the team" in doctor.stdout + doctor.stderr
    listed = json.loads(
        _ok(run_cli("mcp-agents-memory", ["team", "list", "--json"], team.owner_env))
    )
    assert {m["db_role"]: m["shares"] for m in listed}[f"alice_{team.n}"] == ["alpha"]


def test_forget_by_the_owner_and_removal_of_a_person(team: Team, tmp_path: Path) -> None:
    _capture(team, tmp_path)
    _ok(run_cli("mcp-agents-memory", ["team", "share", "alpha"], team.alice))
    with team.raw("bob") as bob:
        assert bob.execute(
            "SELECT count(*) FROM memory WHERE p_tag_id IS NOT NULL AND message LIKE '%%quokka%%'"
        ).fetchone() == (1,)

        # Alice forgets her shared session: gone for both.
        _ok(run_cli("mcp-agents-memory", ["forget", "--session", "s-alpha", "--yes"], team.alice))
        assert bob.execute(
            "SELECT count(*) FROM memory WHERE message LIKE '%%quokka%%'"
        ).fetchone() == (0,)

        # Removing Bob revokes at once, even in his open session.
        _ok(run_cli("mcp-agents-memory", ["team", "remove", f"bob_{team.n}"], team.owner_env))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("SELECT count(*) FROM memory")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(team.urls["bob"]).close()


def _pin(env: dict[str, str], **arguments: Any) -> Any:
    """``task_pin`` through the MCP server run as ``env``'s person (the SDK's client)."""
    params = StdioServerParameters(command=str(BIN / "mcp-agents-memory"), args=[], env=env)

    async def session() -> Any:
        async with Client(params) as client:
            return await client.call_tool("task_pin", arguments)

    return anyio.run(session)


@contextmanager
def _console(env: dict[str, str]) -> Iterator[tuple[httpx2.Client, str]]:
    """``mcp-agents-memory ui`` run as ``env``'s person, logged in over real HTTP."""
    process = subprocess.Popen(
        [str(BIN / "mcp-agents-memory"), "ui", "--no-browser", "--port", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)/login\?token=\S+", process.stdout.readline())
        assert found, "the console printed no login URL"
        with httpx2.Client(follow_redirects=False, timeout=120) as client:
            assert client.get(found.group(0)).status_code == 303
            yield client, found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()


def _bundle_text(path: Path) -> str:
    with zipfile.ZipFile(path) as bundle:
        return b"".join(bundle.read(n) for n in bundle.namelist()).decode()


def test_a_teammates_console_export_and_pins(team: Team, tmp_path: Path) -> None:
    _capture(team, tmp_path)
    _ok(run_cli("mcp-agents-memory", ["team", "share", "alpha"], team.alice))
    alice, bob = f"alice_{team.n}", f"bob_{team.n}"
    # Alice's agent hands Bob's Codex a task in the shared project; not in her private one.
    made = _pin(
        team.alice,
        action="create",
        to=f"{bob}/codex-cli",
        title="Rerun the quokka soak test",
        project="alpha",
        from_agent="claude-code",
    )
    assert not made.is_error, made.content[0].text
    refused = _pin(team.alice, action="create", to=bob, title="audit", project="secretproj")
    assert refused.is_error and "share" in refused.content[0].text

    with _console(team.bob) as (client, origin):
        for path in [*PAGES, "/team"]:
            if path in ("/live", "/export", "/session"):
                continue
            page = client.get(origin + path)
            assert page.status_code == 200, (path, page.text[-2000:])
            assert "zebrafish" not in page.text and "Traceback" not in page.text, path
        timeline = client.get(origin + "/timeline").text
        assert "quokka" in timeline and f"by {alice}" in timeline and "heron" in timeline
        found = client.get(origin + "/search", params={"q": ALPHA_WORDS}).text
        assert "quokka" in found and f"by {alice}" in found
        # All of Alice's shared session (both turns), none of her private one.
        shared = client.get(
            origin + "/session", params={"platform": "claude-code", "id": "s-alpha"}
        )
        assert shared.status_code == 200 and "reconcile worker" in shared.text
        assert "quokka" in shared.text
        private = client.get(
            origin + "/session", params={"platform": "claude-code", "id": "s-secret"}
        )
        assert private.status_code == 404 and "zebrafish" not in private.text
        brief = client.get(origin + "/brief", params={"platform": "codex-cli"}).text
        assert "quokka soak test" in brief and f"{alice}&#39;s claude-code" in brief
        assert f"{alice}</td>" in client.get(origin + "/team").text
        download = client.get(origin + "/export")
        assert download.status_code == 200
        (tmp_path / "console.zip").write_bytes(download.content)
    held = _bundle_text(tmp_path / "console.zip")
    assert "heron" in held and "quokka" not in held and "zebrafish" not in held

    out = tmp_path / "bob.zip"
    said = _ok(run_cli("mcp-agents-memory", ["export", str(out)], team.bob))
    assert f"{bob}'s own memory only" in said
    held = _bundle_text(out)
    assert "heron" in held and "quokka" not in held and "zebrafish" not in held
