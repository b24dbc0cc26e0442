"""SPEC §11: two simulated machines (separate homes and DEVICE_NAMEs), each running the
capture daemon and the MCP server, against one PostgreSQL reached over TCP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client, StdioServerParameters

from agents_memory.store.embedded import EmbeddedServer
from tests.capture.transcripts import claude_exchange, claude_session_path, expected_texts
from tests.conftest import postgres_processes, private_tmp_dir

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tcp_server() -> Iterator[str]:
    base = private_tmp_dir("am-mm-")
    server = EmbeddedServer(base / "pg", port=_free_port(), listen_host="127.0.0.1")
    info = server.start()
    try:
        assert info.listen_host == "127.0.0.1"
        yield f"postgresql://postgres@127.0.0.1:{info.port}/agents_memory"
    finally:
        server.stop()
        leftover = postgres_processes(server.pgdata)
        shutil.rmtree(base, ignore_errors=True)
        assert leftover == []


def _machine_env(home: Path, device: str, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        DATABASE_URL=url,
        DEVICE_NAME=device,
        EMBEDDING_BACKEND="none",
        CAPTURE_RESCAN_SEC="0.5",
        CAPTURE_DEBOUNCE_MS="50",
        USER_NAME="shared-user",
        COLD_PATH_ENABLED="false",
    )
    return env


def _wait(predicate: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _search(env: dict[str, str], args: dict[str, Any]) -> Any:
    params = StdioServerParameters(command=str(BIN / "mcp-agents-memory"), args=[], env=env)

    async def go() -> Any:
        async with Client(params) as client:
            return await client.call_tool("search_memory", args)

    result = anyio.run(go)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_two_machines_share_one_pool_and_keep_their_device_scope(
    tcp_server: str, tmp_path: Path
) -> None:
    homes = {name: tmp_path / name for name in ("laptop", "desktop")}
    envs = {name: _machine_env(home, name, tcp_server) for name, home in homes.items()}
    daemons = []
    try:
        for name, home in homes.items():
            path = claude_session_path(home, f"s-{name}")
            start = 0 if name == "laptop" else 100
            path.write_bytes(
                b"".join(claude_exchange(f"s-{name}", n) for n in range(start, start + 10))
            )
            daemons.append(
                subprocess.Popen(
                    [str(BIN / "memory-capture"), "run"],
                    env=envs[name],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )

        def stored() -> int:
            with psycopg.connect(tcp_server) as conn:
                if conn.execute("SELECT to_regclass('memory')").fetchone() == (None,):
                    return 0  # the daemons are still migrating
                row = conn.execute("SELECT count(*) FROM memory").fetchone()
                return int(row[0]) if row else 0

        _wait(lambda: stored() == 40)
        with psycopg.connect(tcp_server) as conn:
            per_device = dict(
                conn.execute("SELECT device_name, count(*) FROM memory GROUP BY 1").fetchall()
            )
            users = conn.execute("SELECT count(*) FROM users").fetchone()
        assert per_device == {"laptop": 20, "desktop": 20}
        assert users == (1,)

        # A pinned memory added on the desktop is visible locally on the laptop too.
        params = StdioServerParameters(
            command=str(BIN / "mcp-agents-memory"), args=[], env=envs["desktop"]
        )

        async def pin() -> Any:
            async with Client(params) as client:
                return await client.call_tool(
                    "manage_knowledge",
                    {"action": "add", "content": "question about the shared staging server"},
                )

        assert not anyio.run(pin).is_error
        everywhere = _search(envs["laptop"], {"query": "question", "limit": 50})
        local = _search(envs["laptop"], {"query": "question", "limit": 50, "device_scope": "local"})
        assert everywhere["count"] == 21
        devices = {r["device_name"] for r in local["results"]}
        assert devices == {"laptop", "desktop"}
        assert {r["message"] for r in local["results"] if r["device_name"] == "desktop"} == {
            "question about the shared staging server"
        }
        assert {r["message"] for r in local["results"] if r["device_name"] == "laptop"} == {
            t for t in expected_texts(10) if t.startswith("question")
        }
    finally:
        for proc in daemons:
            proc.terminate()
        for proc in daemons:
            _out, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err[-2000:]
