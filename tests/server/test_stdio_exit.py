"""Bare ``mcp-agents-memory`` with stdin piped (the MCP stdio server, as clients run it) ends
cleanly: on Ctrl-C (SIGINT), on SIGTERM and when the client closes stdin. A real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


@pytest.mark.parametrize("ending", ["SIGINT", "SIGTERM", "stdin closed"])
def test_the_stdio_server_exits_cleanly(db_url: str, tmp_path: Path, ending: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_", "DATABASE"))}
    env.update(
        DATABASE_URL=db_url,
        EMBEDDING_BACKEND="none",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        USER_NAME="tester",
    )
    proc = subprocess.Popen(
        [str(BIN / "mcp-agents-memory")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 1 and "serverInfo" in answer["result"]
        started = time.monotonic()
        if ending != "stdin closed":  # communicate() closes stdin: the client went away
            proc.send_signal(getattr(signal, ending))
        _out, err = proc.communicate(timeout=15)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    code, stderr = proc.returncode, err.decode()
    expected = {"SIGINT": 130, "SIGTERM": 0, "stdin closed": 0}[ending]
    assert code == expected, stderr
    assert elapsed < 5
    assert "Traceback" not in stderr
