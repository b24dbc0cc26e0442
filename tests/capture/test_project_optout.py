"""A project's committed opt-out (``.agents-memory/no-memory``) through the real parts: real
git repositories in tmp, the marker written by ``mcp-agents-memory memory off``, the real
capture daemon tailing a Claude Code transcript, its hooks over the daemon's socket and
``memory-capture status`` run inside the repository. The opted-out project's turns are not
stored, its sessions get no brief and its prompts no memories, rows stored before stay, and
``memory on`` brings capture back."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agents_memory.admission.project_switch import NO_MEMORY, SWITCH_DIR, memory_off
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.capture.cli import BIN, capture_env
from tests.capture.transcripts import claude_assistant, claude_user

OLD = "Before the opt-out we chose the zebra-cache layout for the ledger service."


def _git_repo(path: Path) -> Path:
    (path / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def _cli(home: Path, db_url: str, script: str, *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(BIN / script), *args],
        env=capture_env(home, db_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd or home,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _hook(home: Path, db_url: str, kind: str, event: dict[str, str]) -> str:
    done = subprocess.run(
        [str(BIN / "memory-capture"), "hook", kind, "--platform", "claude-code"],
        input=json.dumps(event),
        env=capture_env(home, db_url, HOOK_TIMEOUT_MS="20000", PROMPT_HOOK_TIMEOUT_MS="20000"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stored(db_url: str, word: str) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memory WHERE message LIKE %s", (f"%{word}%",)
        ).fetchone()
    return int(row[0]) if row else 0


def _wait_for(db_url: str, word: str) -> None:
    deadline = time.monotonic() + 60
    while _stored(db_url, word) == 0:
        assert time.monotonic() < deadline, f"{word} never captured"
        time.sleep(0.2)


@pytest.fixture
def daemon(tmp_path: Path, db_url: str) -> Iterator[Path]:
    """The real capture daemon under ``tmp_path`` as home; yields the transcript it tails."""
    transcript = tmp_path / ".claude" / "projects" / "-work" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(claude_user("s1", "warm-up turn outside any project", 0, "/"))
    proc = subprocess.Popen(
        [str(BIN / "memory-capture"), "run", "--no-cold-path"],
        env=capture_env(tmp_path, db_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        sock = tmp_path / ".state" / "mcp-agents-memory" / "brief.sock"
        deadline = time.monotonic() + 60
        while not sock.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        _wait_for(db_url, "warm-up")
        yield transcript
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_opted_out_repository_is_not_captured_briefed_or_recalled(
    tmp_path: Path, db_url: str, daemon: Path
) -> None:
    secret = _git_repo(tmp_path / "secret")
    public = _git_repo(tmp_path / "public")
    with psycopg.connect(db_url) as conn:  # stored before the opt-out: it stays
        uid = ensure_user(conn, "tester")
        insert_memories(
            conn, uid, [NewMemory("claude-code", "user", OLD, external_uuid="old", cwd=str(secret))]
        )

    said = _cli(tmp_path, db_url, "mcp-agents-memory", "memory", "off", str(secret / "src"))
    marker = secret / SWITCH_DIR / NO_MEMORY
    assert marker.is_file() and str(marker) in said and "forget --project" in said
    assert memory_off(str(secret / "src" / "deep")) == marker and memory_off(str(public)) is None

    inside, outside = str(secret / "src" / "deep"), str(public / "src")
    with daemon.open("ab") as out:
        out.write(claude_user("s2", "quokka-alpha plan for the secret repo", 1, inside))
        out.write(claude_assistant("s2", "quokka-beta answer in the secret repo", 2, inside))
        out.write(claude_user("s3", "wombat-gamma plan for the public repo", 3, outside))
    _wait_for(db_url, "wombat-gamma")  # written after the secret turns: those were read
    assert _stored(db_url, "quokka") == 0
    assert _stored(db_url, "zebra-cache") == 1  # rows stored before the marker stay

    event = {"session_id": "s9", "cwd": inside, "prompt": "what layout did we choose, zebra-cache?"}
    assert _hook(tmp_path, db_url, "session-start", event) == ""
    assert _hook(tmp_path, db_url, "prompt", event) == ""
    assert "mcp-agents-memory:brief" in _hook(
        tmp_path, db_url, "session-start", {**event, "cwd": outside}
    )

    status = _cli(tmp_path, db_url, "memory-capture", "status", "--json", cwd=secret / "src")
    assert json.loads(status)["project_opted_out"] == str(marker)
    shown = _cli(tmp_path, db_url, "memory-capture", "status", cwd=secret)
    assert "opted out of memory" in " ".join(shown.split())
    elsewhere = _cli(tmp_path, db_url, "memory-capture", "status", "--json", cwd=public)
    assert json.loads(elsewhere)["project_opted_out"] is None
    assert "memory is off" in _cli(
        tmp_path, db_url, "mcp-agents-memory", "memory", "status", inside
    )

    back = _cli(tmp_path, db_url, "mcp-agents-memory", "memory", "on", inside)
    assert "memory is on" in back and not marker.exists()
    with daemon.open("ab") as out:
        out.write(claude_user("s2", "quokka-delta after the opt-out ended", 4, inside))
    _wait_for(db_url, "quokka-delta")
