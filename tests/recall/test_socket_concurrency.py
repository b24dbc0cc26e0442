"""The daemon's socket answers concurrently: a search held busy in its embedding backend (a
real HTTP embedding server that does not answer until told) does not hold up a session-start
hook, nor a per-prompt hook (which searches full-text only while the backend is busy). The
hooks are the real ``memory-capture`` subprocesses; only the daemon can reach the database."""

from __future__ import annotations

import json
import shutil
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import psycopg
import pytest

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.recall.search_request import SearchRequest
from agents_memory.recall.search_wire import search_line
from agents_memory.recall.socket_server import BriefServer
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.conftest import TEST_DIM, TEST_MODEL, private_tmp_dir
from tests.embeddings.fake_openai import FakeEmbeddingServer
from tests.hooks.test_hook_commands import _env, _hook

PINNED = "remember: the staging port is 5433"
FACT = "The nightly export job fails with error QX-4471 when the vault token expired."


@pytest.fixture
def held_backend() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer(dim=TEST_DIM, hold=threading.Event())
    server.start()
    yield server
    assert server.hold is not None
    server.hold.set()
    server.stop()


@pytest.fixture
def home() -> Iterator[Path]:
    folder = private_tmp_dir("conc-")  # short: the socket's path must fit ~100 bytes
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def daemon(
    make_settings: Any, db_url: str, home: Path, held_backend: FakeEmbeddingServer
) -> Iterator[BriefServer]:
    settings = make_settings(
        database_url=db_url,
        user_name="tester",
        embedding_backend="openai",
        embedding_model=TEST_MODEL,
        embedding_dim=TEST_DIM,
        embedding_base_url=held_backend.base_url,
    )
    with psycopg.connect(db_url) as conn:
        uid = ensure_user(conn, "tester")
        insert_memories(
            conn,
            uid,
            [
                NewMemory("codex-cli", "user", PINNED, external_uuid="p", is_pinned=True),
                NewMemory("codex-cli", "user", FACT, external_uuid="qx", session_id="s-old"),
            ],
        )
    server = BriefServer(settings, home / ".state" / "mcp-agents-memory" / "brief.sock")
    server.start(threading.Event())
    yield server
    assert held_backend.hold is not None
    held_backend.hold.set()
    server.close()


def _search_in_background(server: BriefServer) -> tuple[threading.Thread, list[bytes]]:
    """``mcp-agents-memory search``'s request, sent on a thread; its answer lands in the list."""
    request = SearchRequest.build(query="staging port", limit=5)
    line = search_line(server.settings, request, datetime.now(UTC)) + b"\n"
    answers: list[bytes] = []

    def ask() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(90)
            sock.connect(str(server.path))
            sock.sendall(line)
            sock.shutdown(socket.SHUT_WR)
            answers.append(b"".join(iter(lambda: sock.recv(65536), b"")))

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    return thread, answers


def _daemon_only(home: Path, kind: str, event: dict[str, Any]) -> CompletedProcess[str]:
    """The hook ``kind`` with a database only the daemon can reach."""
    env = _env(home, DATABASE_URL="postgresql://x@127.0.0.1:1/none")
    # the budgets leave a cold interpreter on a loaded machine room (bench/ times the hooks)
    env.update(HOOK_TIMEOUT_MS="10000", PROMPT_HOOK_TIMEOUT_MS="10000")
    return _hook(env, "claude-code", event, kind=kind)[0]


def test_a_busy_search_does_not_hold_up_the_hooks(
    daemon: BriefServer, held_backend: FakeEmbeddingServer, home: Path
) -> None:
    thread, answers = _search_in_background(daemon)
    assert held_backend.arrived.wait(30), "the search never reached its embedding backend"

    started = _daemon_only(home, "session-start", {"session_id": "s-new", "cwd": "/tmp"})
    assert started.returncode == 0, started.stderr
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert brief.startswith(BRIEF_MARKER) and "staging port is 5433" in brief

    prompt = "The nightly export job failed with error QX-4471 again. What was it?"
    asked = _daemon_only(home, "prompt", {"session_id": "s-new", "cwd": "/tmp", "prompt": prompt})
    assert asked.returncode == 0, asked.stderr
    assert "QX-4471" in json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]

    assert thread.is_alive() and answers == [], "the search was not busy all along"
    assert held_backend.hold is not None
    held_backend.hold.set()
    thread.join(60)
    assert answers and answers[0].startswith(b"ok\n"), answers
    assert "staging port is 5433" in answers[0].decode()
