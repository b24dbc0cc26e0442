"""The seed A ``.env`` traps and ``import --from``, through the real console script."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import ignored_seed_settings
from agents_memory.embeddings import embedding_spec

BIN = Path(sys.executable).parent
TRAP = (
    "problem: EMBEDDING_MODEL=text-embedding-3-large is an OpenAI model but EMBEDDING_BACKEND "
    "is local: set EMBEDDING_BACKEND=openai and EMBEDDING_DIM=3072 (with OPENAI_API_KEY), or "
    "unset EMBEDDING_MODEL to use the local multilingual-e5-small-q4"
)


def _env(home: Path, env_file: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k.isupper()
        and not k.startswith(("DB_", "DATABASE_URL", "EMBEDDING_", "MEMORY_", "COLD_", "SSH_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        MEMORY_CONFIG_PATH=str(env_file),
        USER_NAME="tester",
    )
    env.update(extra)
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mcp-agents-memory"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=env["HOME"],
    )


def test_doctor_explains_seed_a_embedding_model_in_one_line_and_stamps_nothing(
    tmp_path: Path, empty_db_url: str
) -> None:
    env_file = tmp_path / "seed-a.env"
    env_file.write_text(
        f"DATABASE_URL={empty_db_url}\nEMBEDDING_MODEL=text-embedding-3-large\n", encoding="utf-8"
    )
    result = _run(_env(tmp_path, env_file), "doctor")
    assert result.returncode == 1, result.stdout + result.stderr
    assert TRAP in result.stderr.splitlines()
    with psycopg.connect(empty_db_url) as conn:
        stamped = conn.execute("SELECT key, value FROM meta WHERE key LIKE 'embedding%'")
        assert stamped.fetchall() == []


def test_the_embedding_model_trap_selects_no_vectors_to_stamp(make_settings: Any) -> None:
    assert embedding_spec(make_settings(embedding_model="text-embedding-3-large")) is None
    openai = make_settings(
        embedding_backend="openai", embedding_model="text-embedding-3-large", embedding_dim=3072
    )
    spec = embedding_spec(openai)
    assert spec is not None and (spec.model, spec.dim) == ("text-embedding-3-large", 3072)


def test_doctor_names_every_ignored_seed_a_setting_with_why(tmp_path: Path, db_url: str) -> None:
    env_file = tmp_path / "seed-a.env"
    env_file.write_text(
        f"DATABASE_URL={db_url}\nXAI_API_KEY=xai-abc\nTAGGER_PROVIDER=xai\n"
        "SSH_ENABLED=true\nSSH_HOST=db.example\nLIBRARIAN_DEEP_THINKING=true\n"
        "# BRIEF_MAX_CHARS=1\nLIBRARIAN_ENABLED=true\n",
        encoding="utf-8",
    )
    env = _env(
        tmp_path,
        env_file,
        LOCAL_GROK_FALLBACK="1",
        BRIEF_MAX_CHARS="8000",
        SSH_AUTH_SOCK="/tmp/agent.sock",
    )
    result = _run(env, "doctor")
    notes = [line for line in result.stdout.splitlines() if " is ignored: " in line]
    named = [line.removeprefix("note: ").split(" ", 1)[0] for line in notes]
    assert named == [
        "BRIEF_MAX_CHARS",
        "LIBRARIAN_DEEP_THINKING",
        "LOCAL_GROK_FALLBACK",
        "SSH_ENABLED",
        "SSH_HOST",
        "XAI_API_KEY",
    ], result.stdout + result.stderr
    assert "note: XAI_API_KEY is ignored: no per-provider keys: set LLM_BASE_URL" in result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_ignored_settings_come_from_the_environment_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUZZ_INGEST_OWNER", "npub1")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    found = dict(ignored_seed_settings(tmp_path / "absent.env"))
    assert found["BUZZ_INGEST_OWNER"] == "no Buzz chat ingest here"
    assert "SSH_AUTH_SOCK" not in found


def test_import_seed_through_the_console_script(
    tmp_path: Path,
    db_url: str,
    make_seed_a: Callable[[int], tuple[str, dict[str, int]]],
    seed_b_path: Path,
) -> None:
    env = _env(tmp_path, tmp_path / "absent.env", DATABASE_URL=db_url)
    url, _ids = make_seed_a(3072)
    dry = _run(env, "import", "--from", "seed-a", url, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0].startswith("would import from seed-a postgresql://")
    assert "  memories: 7 new, 0 already here" in dry.stdout
    first = _run(env, "import", "--from", "seed-a", url)
    assert "  memories: 7 new, 0 already here" in first.stdout, first.stderr
    second = _run(env, "import", "--from", "seed-a", url)
    assert "  memories: 0 new, 7 already here" in second.stdout, second.stderr
    b = _run(env, "import", "--from", "seed-b", str(seed_b_path), "--json")
    assert b.returncode == 0, b.stderr
    assert '"source": "seed-b"' in b.stdout and "earlier persona traits" in b.stdout
    bad = _run(env, "import", "--from", "seed-b", str(tmp_path / "missing.db"))
    assert bad.returncode == 1 and bad.stderr.startswith("error: no seed B database")


def test_import_claude_mem_and_a_seed_b_dump_through_the_console_script(
    tmp_path: Path, db_url: str, seed_b_path: Path
) -> None:
    from tests.seeds import claude_mem_schema, seed_b_schema

    env = _env(tmp_path, tmp_path / "absent.env", DATABASE_URL=db_url)
    cm = tmp_path / "claude-mem.db"
    claude_mem_schema.build(cm)
    first = _run(env, "import", "--from", "claude-mem", str(cm))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0].startswith(f"imported from claude-mem {cm}")
    assert "  prompts: 3 new, 0 already here" in first.stdout
    assert "  session summaries: 1 new, 0 already here" in first.stdout
    assert "    pending_messages: 1 (" in first.stdout
    second = _run(env, "import", "--from", "claude-mem", str(cm))
    assert "  observations: 0 new, 2 already here" in second.stdout, second.stderr
    dump = tmp_path / "unified.jsonl"
    seed_b_schema.dump(seed_b_path, dump)
    b = _run(env, "import", "--from", "seed-b", str(dump))
    assert b.returncode == 0, b.stderr
    assert "  facts: 3 new, 0 already here" in b.stdout
    bad = _run(env, "import", "--from", "claude-mem", str(seed_b_path))
    assert bad.returncode == 1 and bad.stderr.startswith("error: ")
    assert "not a claude-mem database" in bad.stderr
