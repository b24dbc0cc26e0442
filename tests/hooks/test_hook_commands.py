"""The hook contract: output per client, fail open within the budget (database down, hung,
corrupt config), the daemon's brief service, and the flush nudge."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

BIN = Path(sys.executable).parent
EVENT = {"session_id": "s-1", "cwd": "/tmp", "hook_event_name": "SessionStart", "source": "startup"}


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DB_", "DATABASE_URL", "MEMORY_", "HOOK_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        USER_NAME="tester",
        EMBEDDING_BACKEND="none",
        DEVICE_NAME="dev",
    )
    env.update(extra)
    return env


def _hook(
    env: dict[str, str],
    platform: str = "claude-code",
    event: dict[str, Any] | None = None,
    kind: str = "session-start",
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``memory-capture hook <kind>`` as a client runs it, and its wall time."""
    started = time.monotonic()
    result = subprocess.run(
        [str(BIN / "memory-capture"), "hook", kind, "--platform", platform],
        input=json.dumps(event or EVENT),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result, time.monotonic() - started


@pytest.fixture
def seeded(db_url: str) -> str:
    with psycopg.connect(db_url) as conn:
        uid = ensure_user(conn, "tester")
        insert_memories(
            conn,
            uid,
            [
                NewMemory(
                    "codex-cli",
                    "user",
                    "remember: the staging port is 5433",
                    external_uuid="p1",
                    is_pinned=True,
                )
            ],
        )
    return db_url


@pytest.mark.parametrize("platform", ["claude-code", "codex-cli", "gemini-cli"])
def test_session_start_prints_the_brief_in_the_client_envelope(
    seeded: str, tmp_path: Path, platform: str
) -> None:
    result, _elapsed = _hook(_env(tmp_path, DATABASE_URL=seeded), platform)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    context = payload["hookSpecificOutput"]["additionalContext"]
    assert payload["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert context.startswith(BRIEF_MARKER) and "staging port is 5433" in context


def test_database_down_prints_nothing_within_the_budget(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: connection refused
    env = _env(tmp_path, DATABASE_URL=f"postgresql://x@127.0.0.1:{port}/db", HOOK_TIMEOUT_MS="800")
    result, elapsed = _hook(env)
    assert (result.returncode, result.stdout) == (0, "")
    assert elapsed < 0.8 + 0.7


@pytest.fixture
def hung_listener() -> Iterator[int]:
    """A TCP listener that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


def test_hung_database_prints_nothing_within_the_budget(tmp_path: Path, hung_listener: int) -> None:
    env = _env(
        tmp_path, DATABASE_URL=f"postgresql://x@127.0.0.1:{hung_listener}/db", HOOK_TIMEOUT_MS="700"
    )
    result, elapsed = _hook(env)
    assert (result.returncode, result.stdout) == (0, "")
    assert elapsed < 0.7 + 0.7


def test_corrupt_config_prints_nothing(tmp_path: Path, seeded: str) -> None:
    config = tmp_path / ".config" / "mcp-agents-memory"
    config.mkdir(parents=True)
    (config / ".env").write_text("SHORT_TERM_DAYS=many\n\x00garbage", encoding="utf-8")
    result, _elapsed = _hook(_env(tmp_path, DATABASE_URL=seeded))
    assert (result.returncode, result.stdout) == (0, "")
    bad_stdin = subprocess.run(
        [str(BIN / "memory-capture"), "hook", "session-start", "--platform", "claude-code"],
        input="{not json",
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad_stdin.returncode == 0


def test_the_running_daemon_serves_the_brief(seeded: str, tmp_path: Path) -> None:
    daemon = subprocess.Popen(
        [str(BIN / "memory-capture"), "run"],
        env=_env(tmp_path, DATABASE_URL=seeded),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sock = tmp_path / ".state" / "mcp-agents-memory" / "brief.sock"
        deadline = time.monotonic() + 60
        while not sock.exists():
            assert time.monotonic() < deadline and daemon.poll() is None
            time.sleep(0.05)
        # The hook itself cannot reach the database: only the daemon can answer.
        env = _env(tmp_path, DATABASE_URL="postgresql://x@127.0.0.1:1/none")
        result, _elapsed = _hook(env, "gemini-cli")
        assert result.returncode == 0
        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "staging port is 5433" in context
    finally:
        daemon.terminate()
        daemon.communicate(timeout=60)


def test_flush_sends_the_transcript_path_to_the_daemon(tmp_path: Path) -> None:
    path = tmp_path / ".state" / "mcp-agents-memory" / "capture.sock"
    path.parent.mkdir(parents=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        listener.settimeout(30)
        result = subprocess.run(
            [str(BIN / "memory-capture"), "hook", "flush"],
            input=json.dumps({"transcript_path": "/t/session.jsonl"}),
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (result.returncode, result.stdout) == (0, "")
        assert listener.recv(4096) == b"/t/session.jsonl"


def test_flush_without_a_daemon_is_silent(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(BIN / "memory-capture"), "hook", "flush"],
        input="{}",
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_hook_help_still_works(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(BIN / "memory-capture"), "hook", "session-start", "--help"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and "--platform" in result.stdout
