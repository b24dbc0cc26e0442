"""The per-prompt hook (``memory-capture hook prompt``) as clients run it: a real subprocess,
a real database, the real capture daemon's socket. Output per client, silence for an unrelated
prompt and an acknowledgement, the owner's switches (setting, project marker), the fallback
without a daemon, and fail-open within its own budget when the database hangs or is down."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.recall.prompt_switch import MARKER
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.hooks.test_hook_commands import BIN, _env, _hook, hung_listener  # noqa: F401

FACT = "The nightly export job fails with error QX-4471 when the vault token expired."
RELATED = "The nightly export job failed with error QX-4471 again. What was it?"
UNRELATED = "Write a haiku about autumn leaves falling on a quiet pond."
ENVELOPES = {
    "claude-code": "UserPromptSubmit",
    "codex-cli": "UserPromptSubmit",
    "gemini-cli": "BeforeAgent",
}


def _event(prompt: str, cwd: Path | str = "/tmp", session: str = "s-new") -> dict[str, Any]:
    return {"session_id": session, "cwd": str(cwd), "prompt": prompt}


def _prompt_hook(
    env: dict[str, str], event: dict[str, Any], platform: str = "claude-code"
) -> tuple[subprocess.CompletedProcess[str], float]:
    return _hook(env, platform, event, kind="prompt")


def _context(result: subprocess.CompletedProcess[str], platform: str) -> str:
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)["hookSpecificOutput"]
    assert payload["hookEventName"] == ENVELOPES[platform]
    context: str = payload["additionalContext"]
    return context


@pytest.fixture
def seeded(db_url: str) -> str:
    with psycopg.connect(db_url) as conn:
        uid = ensure_user(conn, "tester")
        insert_memories(
            conn,
            uid,
            [NewMemory("codex-cli", "user", FACT, external_uuid="qx", session_id="s-old")],
        )
    return db_url


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a subdirectory (where the prompt is typed)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


@pytest.mark.parametrize("platform", list(ENVELOPES))
def test_without_a_daemon_the_hook_builds_the_memories_itself(
    seeded: str, tmp_path: Path, platform: str
) -> None:
    # the fallback's cold start (settings, psycopg) needs more than 300 ms on a busy machine
    env = _env(tmp_path, DATABASE_URL=seeded, PROMPT_HOOK_TIMEOUT_MS="20000")
    result, _elapsed = _prompt_hook(env, _event(RELATED), platform)
    assert "QX-4471" in _context(result, platform)
    for quiet in (UNRELATED, "ok", "/clear"):
        result, _elapsed = _prompt_hook(env, _event(quiet), platform)
        assert (result.returncode, result.stdout) == (0, ""), quiet


def test_gemini_s_prompt_is_searched_without_the_brief_it_carries(
    seeded: str, tmp_path: Path
) -> None:
    """Gemini CLI hands BeforeAgent the first prompt with the session-start brief before it."""
    brief = "<hook_context>" + "recent work on the console layout and its tests. " * 120
    prompt = f"{brief}</hook_context>\n\n{RELATED}"
    env = _env(tmp_path, DATABASE_URL=seeded, PROMPT_HOOK_TIMEOUT_MS="20000")
    result, _elapsed = _prompt_hook(env, _event(prompt), "gemini-cli")
    assert "QX-4471" in _context(result, "gemini-cli")


def test_the_switches_silence_the_hook_before_it_searches(
    seeded: str, tmp_path: Path, repo: Path
) -> None:
    env = _env(tmp_path, DATABASE_URL=seeded, PROMPT_HOOK_TIMEOUT_MS="20000")
    inside = repo / "src" / "deep"
    result, _elapsed = _prompt_hook(env, _event(RELATED, inside))
    assert "QX-4471" in _context(result, "claude-code")  # on: the memory comes

    off = _env(tmp_path, DATABASE_URL=seeded, PROMPT_HOOK_TIMEOUT_MS="20000", PROMPT_RECALL="off")
    result, _elapsed = _prompt_hook(off, _event(RELATED, inside))
    assert (result.returncode, result.stdout) == (0, "")

    def toggle(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(BIN / "mcp-agents-memory"), "recall", *args]
        return subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=60, check=False
        )

    done = toggle("off", str(inside))
    assert done.returncode == 0, done.stderr
    assert (repo / MARKER).is_file() and str(repo / MARKER) in done.stdout
    result, _elapsed = _prompt_hook(env, _event(RELATED, inside))
    assert (result.returncode, result.stdout) == (0, "")
    status = toggle("status", str(inside))
    assert "off for this project" in status.stdout

    done = toggle("on", str(repo))
    assert done.returncode == 0 and not (repo / MARKER).exists(), done.stdout
    # A new session (the first one was given this memory already, and gets it only once).
    result, _elapsed = _prompt_hook(env, _event(RELATED, inside, session="s-later"))
    assert "QX-4471" in _context(result, "claude-code")


def test_a_marker_above_the_repository_root_does_not_apply(
    seeded: str, tmp_path: Path, repo: Path
) -> None:
    (tmp_path / MARKER).parent.mkdir(parents=True)
    (tmp_path / MARKER).write_text("off\n", encoding="utf-8")  # outside the repository
    env = _env(tmp_path, DATABASE_URL=seeded, PROMPT_HOOK_TIMEOUT_MS="20000")
    result, _elapsed = _prompt_hook(env, _event(RELATED, repo / "src"))
    assert "QX-4471" in _context(result, "claude-code")


def test_hung_database_lets_the_prompt_through_within_the_budget(
    tmp_path: Path,
    hung_listener: int,  # noqa: F811
) -> None:
    env = _env(tmp_path, DATABASE_URL=f"postgresql://x@127.0.0.1:{hung_listener}/db")
    result, elapsed = _prompt_hook(env, _event(RELATED))  # PROMPT_HOOK_TIMEOUT_MS: 300 ms
    assert (result.returncode, result.stdout) == (0, "")
    assert elapsed < 0.3 + 0.7  # the budget, plus the interpreter's start and exit


def test_database_down_lets_the_prompt_through(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = _env(tmp_path, DATABASE_URL=f"postgresql://x@127.0.0.1:{port}/db")
    result, _elapsed = _prompt_hook(env, _event(RELATED))
    assert (result.returncode, result.stdout) == (0, "")


@pytest.fixture
def daemon(seeded: str, tmp_path: Path) -> Iterator[Path]:
    """The real capture daemon; yields its socket."""
    proc = subprocess.Popen(
        [str(BIN / "memory-capture"), "run", "--no-cold-path"],
        env=_env(tmp_path, DATABASE_URL=seeded),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        sock = tmp_path / ".state" / "mcp-agents-memory" / "brief.sock"
        deadline = time.monotonic() + 60
        while not sock.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        yield sock
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_the_running_daemon_answers_the_prompt(daemon: Path, tmp_path: Path, repo: Path) -> None:
    # The hook itself cannot reach the database: only the daemon can answer.
    env = _env(tmp_path, DATABASE_URL="postgresql://x@127.0.0.1:1/none")
    env["PROMPT_HOOK_TIMEOUT_MS"] = "5000"  # a cold interpreter on a loaded machine; bench times it
    for platform in ENVELOPES:
        result, _elapsed = _prompt_hook(env, _event(RELATED, repo), platform)
        context = _context(result, platform)
        assert "QX-4471" in context and "codex-cli" in context
    result, _elapsed = _prompt_hook(env, _event(UNRELATED, repo))
    assert (result.returncode, result.stdout) == (0, "")
    result, _elapsed = _prompt_hook(env, _event(RELATED, repo, session="s-old"))
    assert (result.returncode, result.stdout) == (0, "")  # the session's own turn
    (repo / MARKER).parent.mkdir()
    (repo / MARKER).write_text("off\n", encoding="utf-8")
    result, _elapsed = _prompt_hook(env, _event(RELATED, repo / "src"))
    assert (result.returncode, result.stdout) == (0, "")  # the daemon reads the marker too
