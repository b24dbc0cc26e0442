"""SPEC §11: two simulated machines (separate homes and DEVICE_NAMEs), each running the
capture daemon and the MCP server, against one PostgreSQL reached over TCP on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client, StdioServerParameters

from tests.capture.transcripts import claude_exchange, claude_session_path, expected_texts
from tests.coldpath.embedding_helpers import wait_until
from tests.multimachine.conftest import BIN, machine_env

pytestmark = pytest.mark.slow


def _matches(found: Any) -> list[dict[str, Any]]:
    """The hits that contain the query's words (search adds their session neighbours too)."""
    return [r for r in found["results"] if "fulltext" in r["why"]["arms"]]


def _search(env: dict[str, str], args: dict[str, Any]) -> Any:
    params = StdioServerParameters(command=str(BIN / "mcp-agents-memory"), args=[], env=env)

    async def go() -> Any:
        async with Client(params) as client:
            return await client.call_tool("search_memory", {**args, "detail": "full"})

    result = anyio.run(go)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_two_machines_share_one_pool_and_keep_their_device_scope(
    tcp_server: str, tmp_path: Path
) -> None:
    homes = {name: tmp_path / name for name in ("laptop", "desktop")}
    envs = {name: machine_env(home, name, tcp_server) for name, home in homes.items()}
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

        wait_until(lambda: stored() == 40, timeout=60)
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
        everywhere = _matches(_search(envs["laptop"], {"query": "question", "limit": 50}))
        local = _matches(
            _search(envs["laptop"], {"query": "question", "limit": 50, "device_scope": "local"})
        )
        assert len(everywhere) == 21
        assert {r["device_name"] for r in local} == {"laptop", "desktop"}
        assert {r["message"] for r in local if r["device_name"] == "desktop"} == {
            "question about the shared staging server"
        }
        assert {r["message"] for r in local if r["device_name"] == "laptop"} == {
            t for t in expected_texts(10) if t.startswith("question")
        }
    finally:
        for proc in daemons:
            proc.terminate()
        for proc in daemons:
            _out, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err[-2000:]
