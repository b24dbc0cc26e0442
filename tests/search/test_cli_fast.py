"""The fast ``mcp-agents-memory search`` (issue 31): the entry point asks the running capture
daemon to run the command before click or psycopg are imported, and prints the same bytes as
the full command; anything unusual runs the full command."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest

from agents_memory.cli.fast_search import request_line

from .test_cli_daemon import _env, _stable, daemon, seeded  # noqa: F401 - fixtures

BIN = Path(sys.executable).parent


@pytest.fixture
def full(tmp_path: Path) -> list[str]:
    """The full command, without the entry point's fast path (a script of the same name, so
    that its usage lines name the same program)."""
    script = tmp_path / "full" / "mcp-agents-memory"
    script.parent.mkdir()
    script.write_text("from agents_memory.cli.memory import main\n\nmain()\n", encoding="utf-8")
    return [sys.executable, str(script)]


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)


def _fast(env: dict[str, str], *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The console script with its imports listed: the process and the modules it imported."""
    script = str(BIN / "mcp-agents-memory")
    proc = _run([sys.executable, "-X", "importtime", script, "search", *argv], env)
    lines = proc.stderr.splitlines(keepends=True)
    imported = {ln.split("|")[-1].strip() for ln in lines if ln.startswith("import time:")}
    proc.stderr = "".join(ln for ln in lines if not ln.startswith("import time:"))
    return proc, imported


@pytest.mark.parametrize(
    "argv",
    [
        ("staging", "port"),
        ("staging", "--platform", "codex", "--why"),
        ("port", "--limit", "1", "--role", "user"),
        ("no-such-word-anywhere",),
        (),
    ],
)
def test_the_daemon_prints_the_same_bytes_as_the_full_command(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
    argv: tuple[str, ...],
) -> None:
    env = _env(tmp_path, seeded)
    fast, imported = _fast(env, *argv)
    slow = _run([*full, "search", *argv], env)
    assert "click" not in imported and "psycopg" not in imported  # the daemon answered
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )
    assert fast.returncode == 0 and fast.stdout
    if argv:  # a query with words: the search's note (no model), on stderr
        assert "full-text search only" in fast.stderr


def test_json_is_the_full_commands_json(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
) -> None:
    env = _env(tmp_path, seeded)
    fast, imported = _fast(env, "staging", "--json")
    slow = _run([*full, "search", "staging", "--json"], env)
    assert "click" not in imported
    assert fast.returncode == slow.returncode == 0
    assert _stable(json.loads(fast.stdout)) == _stable(json.loads(slow.stdout))


def test_a_terminal_gets_its_width_and_colours_from_the_daemon_too(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
) -> None:
    env = _env(tmp_path, seeded, TERM="xterm-256color")
    fast = _on_terminal([str(BIN / "mcp-agents-memory"), "search", "staging"], env, 100)
    slow = _on_terminal([*full, "search", "staging"], env, 100)
    assert fast == slow
    assert b"\x1b[" in fast  # the header's style: it was printed for a terminal
    assert max(len(_plain(line)) for line in fast.splitlines()) > 80


def _on_terminal(argv: list[str], env: dict[str, str], columns: int) -> bytes:
    """What ``argv`` prints on a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    try:
        proc = subprocess.Popen(argv, env=env, stdin=follower, stdout=follower, stderr=follower)
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 0
    finally:
        os.close(leader)
    return b"".join(chunks)


def _plain(line: bytes) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", line.decode("utf-8", "replace"))


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (("staging", "--limit", "0"), {}),  # a usage error: the full command says it
        (("staging", "--help"), {}),
        (("staging", "--json"), {"USER_NAME": "someone-else"}),  # other settings
        (("staging",), {"SEARCH_FALLBACK_THRESHOLD": "0.5"}),
    ],
)
def test_anything_unusual_runs_the_full_command(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
    argv: tuple[str, ...],
    extra: dict[str, str],
) -> None:
    env = _env(tmp_path, seeded, **extra)
    fast, imported = _fast(env, *argv)
    slow = _run([*full, "search", *argv], env)
    assert "click" in imported  # the full command ran
    if "--json" in argv:
        assert _stable(json.loads(fast.stdout)) == _stable(json.loads(slow.stdout))
    else:
        assert fast.stdout == slow.stdout
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)


def test_without_a_daemon_the_full_command_runs(seeded: str, tmp_path: Path) -> None:  # noqa: F811
    env = _env(tmp_path, seeded)
    fast, imported = _fast(env, "staging")
    assert fast.returncode == 0, fast.stderr
    assert "click" in imported and "2 result(s) by fulltext" in fast.stdout


def test_the_request_carries_no_secret_and_no_environment_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DB_PASS", "hunter2-secret-pass")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:url-secret-pw@db/x")
    monkeypatch.setenv("LLM_FALLBACK_API_KEY", "sk-secret-key-123")
    monkeypatch.setenv("TERM", "xterm")
    line = request_line(["search", "staging"])
    assert line is not None
    for secret in (b"hunter2-secret-pass", b"url-secret-pw", b"sk-secret-key-123", b"db/x"):
        assert secret not in line
    request: dict[str, Any] = json.loads(line)["cli"]
    assert request["terminal"]["env"] == {"TERM": "xterm"}
    assert len(request["env"]["DB_PASS"]) == 32  # a keyed digest, not the value


def test_a_dotenv_changed_since_the_daemon_started_runs_the_full_command(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
) -> None:
    env = _env(tmp_path, seeded)
    assert "click" not in _fast(env, "staging")[1]  # the daemon's settings, read and kept
    dotenv = tmp_path / ".config" / "mcp-agents-memory" / ".env"
    dotenv.parent.mkdir(parents=True, exist_ok=True)
    dotenv.write_text("SEARCH_RECENCY_HALFLIFE_DAYS=3\n", encoding="utf-8")
    fast, imported = _fast(env, "staging")
    slow = _run([*full, "search", "staging"], env)
    assert "click" in imported  # the daemon's settings are not the command's any more
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )
    dotenv.unlink()
    assert "click" not in _fast(env, "staging")[1]  # the same settings again: the daemon's


def _closed_pipe(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """``argv``'s exit code and stderr when its stdout is a pipe nobody reads any more (as
    ``search … | head -1`` once ``head`` has its line)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            argv, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, check=False
        )
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


def test_a_closed_pipe_ends_the_search_as_the_full_command_ends(
    seeded: str,  # noqa: F811
    tmp_path: Path,
    daemon: subprocess.Popen[str],  # noqa: F811
    full: list[str],
) -> None:
    """``search … | head -1``: no traceback, the full command's exit code (click and rich end
    a closed pipe with 1 and nothing more); the notes written before are the same."""
    env = _env(tmp_path, seeded)
    fast = _closed_pipe([str(BIN / "mcp-agents-memory"), "search", "staging"], env)
    slow = _closed_pipe([*full, "search", "staging"], env)
    assert fast == slow == (1, "note: EMBEDDING_BACKEND=none, full-text search only\n")
    fast_json = _closed_pipe([str(BIN / "mcp-agents-memory"), "search", "port", "--json"], env)
    assert fast_json == _closed_pipe([*full, "search", "port", "--json"], env) == slow
