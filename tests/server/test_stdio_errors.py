"""The real stdio server answers every line: text that is not JSON, a lone surrogate, an array
nested 50,000 deep, JSON that is not JSON-RPC each get a JSON-RPC error at once (the SDK's
transport alone drops them and the client waits for its timeout), and the next request is
served as usual. A real process, lines written raw."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_stdio_exit import INITIALIZE

BIN = Path(sys.executable).parent
REPLY_SECONDS = 5.0

BAD_LINES = {
    "malformed": (b'{"jsonrpc": "2.0", "id": 7, "method": ', -32700),
    "lone surrogate": (
        b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"\\ud800"}}',
        -32700,
    ),
    "nested 50k deep": (b"[" * 50_000 + b"]" * 50_000, -32700),
    "not json-rpc": (b'{"hello": "world"}', -32600),
}


class Server:
    """``mcp-agents-memory`` on stdio, its replies read by a thread into a queue."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "mcp-agents-memory")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, within: float = REPLY_SECONDS) -> dict[str, Any]:
        try:
            return self.replies.get(timeout=within)
        except queue.Empty:
            raise AssertionError(f"no reply within {within} s") from None


@pytest.fixture
def server(db_url: str, tmp_path: Path) -> Iterator[Server]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_", "DATABASE"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        USER_NAME="tester",
    )
    running = Server(env)
    try:
        running.send(json.dumps(INITIALIZE).encode())
        assert running.reply(within=120)["id"] == 1  # the start opens the database
        running.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield running
    finally:
        running.proc.kill()
        running.proc.communicate()


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_an_unreadable_line_gets_an_error_reply_and_the_server_goes_on(
    server: Server, case: str
) -> None:
    line, code = BAD_LINES[case]
    server.send(line)
    answer = server.reply()
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None, answer
    assert answer["error"]["code"] == code, answer
    assert len(answer["error"]["message"]) <= 200

    server.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
    listed = server.reply()
    assert listed["id"] == 2 and listed["result"]["tools"], listed
