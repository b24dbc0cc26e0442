"""``mcp-agents-memory search`` as a real process: answered by the running capture daemon
(same search, no model loaded in the command), and by the command itself when no daemon of
its database and user answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from .helpers import add, mem

BIN = Path(sys.executable).parent
ANSWERED = "search answered by the capture daemon"


def _env(home: Path, db_url: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DB_", "DATABASE_URL", "MEMORY_", "HOOK_", "COLUMNS"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        XDG_DATA_HOME=str(home / ".data"),
        DATABASE_URL=db_url,
        USER_NAME="tester",
        DEVICE_NAME="test-device",
        EMBEDDING_BACKEND="none",
        COLD_PATH_ENABLED="false",
    )
    env.update(extra)
    return env


def _search(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mcp-agents-memory"), "--debug", "search", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def seeded(db_url: str, conn: psycopg.Connection[Any]) -> str:
    add(
        conn,
        [
            mem("the staging port is 5433 after the migration", age_days=2),
            mem("Codex moved the staging port", platform="codex-cli", role="assistant"),
            mem("lunch order", age_days=0.1),
        ],
    )
    return db_url


@pytest.fixture
def daemon(seeded: str, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(BIN / "memory-capture"), "run"],
        env=_env(tmp_path, seeded),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    sock = tmp_path / ".state" / "mcp-agents-memory" / "brief.sock"
    deadline = time.monotonic() + 60
    while not sock.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    yield proc
    proc.terminate()
    proc.communicate(timeout=60)


def test_the_running_daemon_answers_the_same_search_the_command_runs_itself(
    seeded: str, tmp_path: Path, daemon: subprocess.Popen[str]
) -> None:
    env = _env(tmp_path, seeded)
    argv = ("staging", "port", "--platform", "codex", "--json")
    by_daemon = _search(env, *argv)
    assert by_daemon.returncode == 0, by_daemon.stderr
    assert ANSWERED in by_daemon.stderr
    assert "EMBEDDING_BACKEND=none, full-text search only" in by_daemon.stderr  # its note
    data = json.loads(by_daemon.stdout)
    assert [r["message"] for r in data["results"]] == ["Codex moved the staging port"]

    daemon.terminate()
    daemon.communicate(timeout=60)
    by_itself = _search(env, *argv)
    assert by_itself.returncode == 0, by_itself.stderr
    assert ANSWERED not in by_itself.stderr
    assert _stable(json.loads(by_itself.stdout)) == _stable(data)


def _stable(data: dict[str, Any]) -> dict[str, Any]:
    """The result without what moves with the clock between two runs (recency, the score)."""
    for hit in data["results"]:
        for key in ("recency_factor", "score"):
            hit["why"].pop(key, None)
        hit.pop("confidence", None)
    return data


def test_the_table_from_the_daemon_fits_80_columns_when_piped(
    seeded: str, tmp_path: Path, daemon: subprocess.Popen[str]
) -> None:
    result = _search(_env(tmp_path, seeded), "staging")
    assert result.returncode == 0, result.stderr
    assert ANSWERED in result.stderr
    assert "2 result(s) by fulltext" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "codex a" in result.stdout  # short platform names


def test_a_daemon_of_another_user_is_not_asked(
    seeded: str, tmp_path: Path, daemon: subprocess.Popen[str]
) -> None:
    result = _search(_env(tmp_path, seeded, USER_NAME="someone-else"), "staging", "--json")
    assert result.returncode == 0, result.stderr
    assert ANSWERED not in result.stderr
    assert json.loads(result.stdout)["note"] == "no memories for user 'someone-else'"


def test_the_daemon_refuses_a_misspelt_project_with_the_close_ones_and_no_search_runs_here(
    seeded: str, tmp_path: Path, conn: psycopg.Connection[Any], daemon: subprocess.Popen[str]
) -> None:
    conn.execute("INSERT INTO project_tags (name) VALUES ('quokka-api')")
    conn.commit()
    result = _search(_env(tmp_path, seeded), "staging", "--project", "quokka", "--json")
    assert result.returncode == 2, result.stderr
    assert "no project 'quokka' (did you mean 'quokka-api'?)" in result.stderr
    assert "searching in this process" not in result.stderr  # the daemon's answer, not ours
