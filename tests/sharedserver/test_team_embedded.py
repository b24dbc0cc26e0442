"""A team on the embedded server, over TCP: the admin's machine runs the product's own server
with ``EMBEDDED_LISTEN``; `team init` and `team add` run there (through the socket, as the
cluster's superuser); a teammate connects over TCP with the URL `team add` printed. Over TCP
every role gives its password — the superuser, which has none, cannot connect that way — and
the team's policies hold as on any server. While the server listens on its socket only,
`team add` refuses (no teammate could reach it) and `team init` says how to open it."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import psycopg
import pytest

from agents_memory.store.embedded import EmbeddedServer
from tests.conftest import postgres_processes, private_tmp_dir
from tests.sharedserver.conftest import product_env, run_cli, search_json
from tests.sharedserver.test_team import _claude_session, _git_repo, _ok

pytestmark = pytest.mark.sharedserver


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _embedded_env(home: Path, data: Path, **extra: str) -> dict[str, str]:
    env = product_env(home, "", EMBEDDING_BACKEND="none", MEMORY_DATA_DIR=str(data), **extra)
    del env["DATABASE_URL"]
    return env


def _stopped(data: Path) -> None:
    server = EmbeddedServer(data / "pg")
    server.stop()
    assert postgres_processes(server.pgdata) == []


def test_a_team_on_the_embedded_server_over_tcp(tmp_path: Path) -> None:
    base = private_tmp_dir("am-team-tcp-")
    port = _free_port()
    admin = _embedded_env(
        tmp_path / "admin",
        base / "data",
        USER_NAME="admin",
        EMBEDDED_LISTEN="127.0.0.1",
        EMBEDDED_PORT=str(port),
    )
    try:
        _ok(run_cli("mcp-agents-memory", ["db", "start"], admin))
        ready = _ok(run_cli("mcp-agents-memory", ["team", "init"], admin))
        assert "team ready" in ready
        # The cluster's superuser marks the search operators itself; the server is reachable.
        assert "LEAKPROOF" not in ready and "EMBEDDED_LISTEN" not in ready
        added = json.loads(
            _ok(run_cli("mcp-agents-memory", ["team", "add", "bob", "--json"], admin))
        )
        url = added["database_url"]
        assert url.startswith("postgresql://bob:") and f"@127.0.0.1:{port}/" in url
        bob = product_env(tmp_path / "bob", url, USER_NAME="bob", EMBEDDING_BACKEND="none")

        repo = _git_repo(tmp_path / "repos" / "delta", "https://git.example.com/team/delta.git")
        _claude_session(
            Path(admin["HOME"]), "s-admin", repo, [("the vault?", "Its key is the lynx rota.")]
        )
        _claude_session(
            Path(bob["HOME"]), "s-bob", repo, [("deploys?", "Through the wombat gate.")]
        )
        _ok(run_cli("memory-capture", ["backfill"], admin))  # through the socket
        _ok(run_cli("memory-capture", ["backfill"], bob))  # over TCP, as bob
        found, _ = search_json(bob, "wombat gate")
        assert any("wombat" in r["message"] for r in found["results"])
        found, _ = search_json(bob, "lynx rota")
        assert not any("lynx" in r["message"] for r in found["results"])

        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT current_user").fetchone() == ("bob",)
            assert conn.execute(
                "SELECT count(*) FROM memory WHERE message LIKE '%%lynx%%'"
            ).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM memory").fetchone() == (2,)
        # Over TCP nobody gets in without their password: not the superuser, not bob.
        for who in ("postgres", "bob"):
            with pytest.raises(psycopg.OperationalError, match="password"):
                psycopg.connect(
                    f"postgresql://{who}:wrong@127.0.0.1:{port}/agents_memory", connect_timeout=10
                ).close()
    finally:
        _stopped(base / "data")

    # On its socket only, the server is this OS user's alone: add refuses and says how.
    alone = _embedded_env(tmp_path / "alone", base / "alone", USER_NAME="alone")
    try:
        _ok(run_cli("mcp-agents-memory", ["db", "start"], alone))
        assert "EMBEDDED_LISTEN" in _ok(run_cli("mcp-agents-memory", ["team", "init"], alone))
        refused = run_cli("mcp-agents-memory", ["team", "add", "carol"], alone)
        assert refused.returncode != 0
        assert "EMBEDDED_LISTEN" in refused.stdout + refused.stderr
    finally:
        _stopped(base / "alone")
        shutil.rmtree(base, ignore_errors=True)
