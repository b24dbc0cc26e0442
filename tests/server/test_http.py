"""`mcp-agents-memory serve --http`: streamable HTTP on loopback with a bearer token."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKEN = "test-token-123"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not listen")


def test_http_transport_requires_the_bearer_token(db_url: str, tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        MCP_HTTP_TOKEN=TOKEN,
    )
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "mcp-agents-memory"),
            "serve",
            "--http",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_listening(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401

        async def go() -> Any:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                await client.call_tool(
                    "manage_knowledge", {"action": "add", "content": "over http"}
                )
                return await client.call_tool("search_memory", {"detail": "full", "query": "http"})

        found = anyio.run(go)
        assert json.loads(found.content[0].text)["count"] == 1
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_listening_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCP_HTTP_TOKEN"}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "mcp-agents-memory"),
            "serve",
            "--http",
            "--host",
            "0.0.0.0",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0 and "MCP_HTTP_TOKEN" in result.stderr
