"""A careless set-up meets the real CLI: one line, exit 1, never a traceback, never a secret."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import private_tmp_dir
from tests.foundation.test_config import BIN, _clean_env

SECRETS = {"LLM_API_KEY": "sk-live-abcdef123456", "MCP_HTTP_TOKEN": "tok-9876543210"}
OTHER_USER = "nobody"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


@pytest.fixture
def home() -> Iterator[Path]:
    path = private_tmp_dir("am-fail-")
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _bad_env_file(home: Path) -> dict[str, str]:
    config = home / "config" / "mcp-agents-memory"
    config.mkdir(parents=True)
    (config / ".env").write_bytes(b"USER_NAME=caf\xe9\nLLM_API_KEY=" + b"sk-live-abcdef123456\n")
    return {}


def _bad_database_url(home: Path) -> dict[str, str]:
    return {"DATABASE_URL": "postgresql:/app:S3cret-pw@db/mem", "DB_PASS": "S3cret-pw"}


def _unwritable_data_dir(home: Path) -> dict[str, str]:
    locked = home / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    return {"MEMORY_DATA_DIR": str(locked / "data")}


def _pg_of_another_user(home: Path) -> dict[str, str]:
    pgdata = home / "data" / "pg"
    pgdata.mkdir(parents=True)
    other = pwd.getpwnam(OTHER_USER)
    os.chown(pgdata, other.pw_uid, other.pw_gid)
    return {"MEMORY_DATA_DIR": str(home / "data")}


def _full_disk(home: Path) -> dict[str, str]:
    disk = home / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
    disk.chmod(0o711)
    return {"MEMORY_DATA_DIR": str(disk / "data")}


CASES: dict[str, tuple[Callable[[Path], dict[str, str]], str, bool]] = {
    # name: (set-up, what the line must say, runs as another user)
    "env-file-not-utf8": (_bad_env_file, "not UTF-8", False),
    "malformed-database-url": (_bad_database_url, "DATABASE_URL", False),
    "unwritable-data-dir": (_unwritable_data_dir, "MEMORY_DATA_DIR", True),
    "pg-of-another-user": (_pg_of_another_user, "belongs to nobody", False),
    "full-disk": (_full_disk, "No space left on device", False),
}


@needs_root
@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_setup_is_one_line_and_exit_1(case: str, home: Path) -> None:
    setup, expected, as_other = CASES[case]
    env = _clean_env(home, **SECRETS)
    env.update(XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"))
    env.update(setup(home))
    other = pwd.getpwnam(OTHER_USER)
    drop = {"user": other.pw_uid, "group": other.pw_gid, "extra_groups": []} if as_other else {}
    try:
        result = subprocess.run(  # type: ignore[call-overload]
            [str(BIN / "mcp-agents-memory"), "migrate"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=home,
            **drop,
        )
    finally:
        if case == "full-disk":
            subprocess.run(["umount", str(home / "disk")], check=False)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expected in lines[0]
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    for secret in [*SECRETS.values(), "S3cret-pw"]:
        assert secret not in output


UNREACHABLE = "postgresql://nobody@127.0.0.1:1/nothing"
"""A database URL nothing listens on (port 1)."""


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_status_exits_1_and_says_so_when_the_database_is_unreachable(
    home: Path, as_json: bool
) -> None:
    env = _clean_env(home, DATABASE_URL=UNREACHABLE)
    result = subprocess.run(
        [str(BIN / "memory-capture"), "status", *(["--json"] if as_json else [])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=home,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if as_json:
        problems = json.loads(result.stdout)["problems"]
        assert any(p.startswith("database: cannot connect") for p in problems), problems
    else:
        assert "problem: database: cannot connect" in result.stdout


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_doctor_exits_1_when_it_finds_the_database_not_healthy(home: Path, as_json: bool) -> None:
    env = _clean_env(home, DATABASE_URL=UNREACHABLE)
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", *(["--json"] if as_json else [])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=home,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    if as_json:
        report = json.loads(result.stdout)
        assert report["healthy"] is False and report["problems"]
    else:
        assert result.stdout.strip().splitlines()[-1] == "NOT healthy"
        assert "problem: cannot connect" in result.stderr
