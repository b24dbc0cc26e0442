"""`serve --http` reached from a second machine: a network namespace of its own joined by a
veth pair. With the token it works; without it gets 401; a forged Host still gets 421."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.test_http import TOKEN, _free_port

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="needs root and iproute2 to make a network namespace",
)

SERVER_ADDR = "10.231.77.1"
CLIENT_ADDR = "10.231.77.2"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def remote_machine() -> Iterator[str]:
    """A namespace with its own address, linked to this one; yields its name."""
    tag = str(os.getpid() % 100000)
    ns, here, there = f"am-remote-{tag}", f"amh{tag}", f"amr{tag}"
    _ip("netns", "add", ns)
    try:
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", ns)
        _ip("addr", "add", f"{SERVER_ADDR}/30", "dev", here)
        _ip("link", "set", here, "up")
        _ip("-n", ns, "addr", "add", f"{CLIENT_ADDR}/30", "dev", there)
        _ip("-n", ns, "link", "set", there, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        yield ns
    finally:
        subprocess.run(["ip", "link", "del", here], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


CLIENT = textwrap.dedent(
    """
    import json, sys
    import anyio, httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url, token = sys.argv[1], sys.argv[2]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    result = {
        "no_token": httpx2.post(url, json=ping).status_code,
        "forged_host": httpx2.post(
            url, json=ping,
            headers={"Authorization": f"Bearer {token}", "Host": "attacker.example"},
        ).status_code,
    }

    async def go():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            await client.call_tool("manage_knowledge", {"action": "add", "content": "remote"})
            found = await client.call_tool("search_memory", {"detail": "full", "query": "remote"})
            return json.loads(found.content[0].text)["count"]

    result["found"] = anyio.run(go)
    print(json.dumps(result))
    """
)


WAIT = textwrap.dedent(
    """
    import socket, time
    for _ in range(600):
        try:
            socket.create_connection(("{addr}", {port}), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    """
)


def test_a_second_machine_reaches_the_server_with_the_token_only(
    remote_machine: str, db_url: str, tmp_path: Path
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_", "MCP_"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        MCP_HTTP_TOKEN=TOKEN,
    )
    bin_dir = Path(sys.executable).parent
    server = subprocess.Popen(
        [
            str(bin_dir / "mcp-agents-memory"),
            "serve",
            "--http",
            "--host",
            SERVER_ADDR,
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://{SERVER_ADDR}:{port}/mcp"
        wait = WAIT.format(addr=SERVER_ADDR, port=port)
        subprocess.run(
            ["ip", "netns", "exec", remote_machine, sys.executable, "-c", wait],
            check=True,
            timeout=60,
        )
        client = subprocess.run(
            ["ip", "netns", "exec", remote_machine, sys.executable, "-c", CLIENT, url, TOKEN],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert client.returncode == 0, client.stderr[-2000:]
        result = json.loads(client.stdout.strip().splitlines()[-1])
        assert result == {"no_token": 401, "forged_host": 421, "found": 1}
    finally:
        server.terminate()
        _out, err = server.communicate(timeout=30)
    assert TOKEN not in err
