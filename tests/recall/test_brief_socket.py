"""The daemon's brief socket in process: a real Unix socket, a real database, real clients."""

from __future__ import annotations

import json
import shutil
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.recall.session import hook_output
from agents_memory.recall.socket_server import BriefServer
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.conftest import private_tmp_dir

PLATFORM = "gemini-cli"
FACT = "The staging database listens on port 5433."


def ask(path: Path, payload: bytes, timeout: float = 10.0) -> bytes:
    """What the socket answers to ``payload`` (sent as is, then the write side is closed)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def request(event: dict[str, Any] | None = None, platform: str = PLATFORM) -> bytes:
    return json.dumps({"platform": platform, "event": event or {}}).encode() + b"\n"


@pytest.fixture
def sock_path() -> Iterator[Path]:
    folder = private_tmp_dir("briefsock-")  # short: a Unix socket path has ~100 bytes
    yield folder / "brief.sock"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def served(make_settings: Any, db_url: str, sock_path: Path) -> Iterator[BriefServer]:
    settings = make_settings(database_url=db_url, hook_timeout_ms=1500)
    with psycopg.connect(db_url) as conn:
        user_id = ensure_user(conn, settings.user_name)
        insert_memories(
            conn,
            user_id,
            [
                NewMemory(
                    agent_platform="claude-code",
                    role="user",
                    message=FACT,
                    external_uuid="brief-socket-1",
                    device_name="test-device",
                    is_pinned=True,
                )
            ],
        )
    server = BriefServer(settings, sock_path)
    server.start(threading.Event())
    try:
        yield server
    finally:
        server.close()


def test_the_socket_is_private_and_answers_what_the_hook_would_print(
    served: BriefServer, sock_path: Path, db_url: str
) -> None:
    assert stat.S_IMODE(sock_path.stat().st_mode) == 0o600
    answer = ask(sock_path, request({"cwd": "/src/x"}))
    with psycopg.connect(db_url) as conn:
        user_id = ensure_user(conn, served.settings.user_name)
        expected = hook_output(conn, served.settings, user_id, PLATFORM, {"cwd": "/src/x"})
    assert answer == b"ok\n" + expected.encode()
    assert FACT in answer.decode()


@pytest.mark.parametrize(
    "payload",
    [
        b"not json\n",
        b"[1, 2]\n",
        json.dumps({"platform": "no-such-client", "event": {}}).encode() + b"\n",
        json.dumps({"platform": PLATFORM, "event": [1]}).encode() + b"\n",
    ],
    ids=["not-json", "not-an-object", "unknown-platform", "event-not-an-object"],
)
def test_a_bad_request_answers_err_and_the_next_one_is_served(
    served: BriefServer, sock_path: Path, payload: bytes
) -> None:
    assert ask(sock_path, payload) == b"err\n"
    assert ask(sock_path, request()).startswith(b"ok\n")


def test_a_silent_client_times_out_and_the_next_one_is_served(
    served: BriefServer, sock_path: Path
) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.settimeout(10)
        silent.connect(str(sock_path))  # sends nothing and keeps the connection open
        assert ask(sock_path, request()).startswith(b"ok\n")
        assert silent.recv(100) == b"err\n"


def test_an_unreachable_database_answers_err(
    make_settings: Any, sock_path: Path, tmp_path: Path
) -> None:
    settings = make_settings(database_url="postgresql://x@127.0.0.1:1/none")
    server = BriefServer(settings, sock_path)
    server.start(threading.Event())
    try:
        assert ask(sock_path, request()) == b"err\n"
    finally:
        server.close()


def test_close_stops_serving_and_removes_the_socket(served: BriefServer, sock_path: Path) -> None:
    served.close()
    assert not sock_path.exists()
    with pytest.raises(OSError):
        ask(sock_path, request())
    served.close()  # twice is harmless
