from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agents_memory.config import load_settings
from agents_memory.errors import ConfigError

BIN = Path(sys.executable).parent


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k.isupper()
        and not k.startswith(
            ("DB_", "DATABASE_URL", "HOOK_", "EMBEDDING_", "MEMORY_", "COLD_", "CAPTURE_")
        )
    }
    env.update(
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    env.update(extra)
    return env


def test_defaults_match_seed_a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "DB_HOST", "SHORT_TERM_DAYS", "DEVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    s = load_settings(env_file=tmp_path / "none.env")
    assert s.uses_embedded_server
    assert (s.cold_path_interval_sec, s.cold_path_batch_size) == (60, 5)
    assert (s.short_term_days, s.short_term_token_limit) == (3, 8000)
    assert s.search_fallback_threshold == 0.3
    assert (s.librarian_msg_threshold, s.librarian_cooldown_hours) == (30, 24)
    assert s.device_name == socket.gethostname()
    assert s.redact_enabled and s.hook_timeout_ms == 1500
    assert s.embedding_backend == "local"


def test_env_file_is_read_and_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "SHORT_TERM_DAYS=7\nDEVICE_NAME=laptop\nCAPTURE_EXCLUDE=~/secret, */private-*\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("DEVICE_NAME", "from-env")
    s = load_settings(env_file=env_file)
    assert s.short_term_days == 7
    assert s.device_name == "from-env"
    assert s.capture_exclude == ("~/secret", "*/private-*")


def test_external_database_from_db_parts(tmp_path: Path) -> None:
    s = load_settings(
        env_file=tmp_path / "x.env",
        db_host="db.example",
        db_user="me",
        db_pass="pw",
        db_name="mem",
        db_ssl="require",
    )
    assert not s.uses_embedded_server
    from agents_memory.store.database import external_conninfo

    info = external_conninfo(s)
    assert info is not None
    assert "host=db.example" in info and "sslmode=require" in info and "dbname=mem" in info


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("HOOK_TIMEOUT_MS", "soon", "HOOK_TIMEOUT_MS"),
        ("EMBEDDING_BACKEND", "magic", "EMBEDDING_BACKEND"),
        ("COLD_PATH_BATCH_SIZE", "0", "COLD_PATH_BATCH_SIZE"),
        ("DB_PORT", "70000", "DB_PORT"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, fragment: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings(env_file=tmp_path / "none.env")
    message = str(info.value)
    assert fragment in message and "\n" not in message


def test_cli_reports_a_bad_setting_in_one_line_without_traceback(tmp_path: Path) -> None:
    env = _clean_env(tmp_path, HOOK_TIMEOUT_MS="soon")
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "HOOK_TIMEOUT_MS" in lines[0]
    assert "Traceback" not in result.stderr

    debug = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "--debug", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_bad_value_in_the_user_env_file_names_the_file(tmp_path: Path) -> None:
    env = _clean_env(tmp_path)
    config = tmp_path / "config" / "mcp-agents-memory"
    config.mkdir(parents=True)
    (config / ".env").write_text("SHORT_TERM_DAYS=many\n", encoding="utf-8")
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "SHORT_TERM_DAYS" in result.stderr and str(config / ".env") in result.stderr


@pytest.mark.parametrize("script", ["mcp-agents-memory", "memory-capture"])
def test_every_command_has_help(script: str, tmp_path: Path) -> None:
    import click

    from agents_memory.cli import capture as capture_cli
    from agents_memory.cli import memory as cli

    group = cli.cli if script == "mcp-agents-memory" else capture_cli.cli
    commands = [[]] + [[name] for name in group.all_commands()]
    env = _clean_env(tmp_path)
    for args in commands:
        result = subprocess.run(
            [str(BIN / script), *args, "--help"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, (args, result.stderr)
        assert "Usage:" in result.stdout
    assert isinstance(group, click.Group)
