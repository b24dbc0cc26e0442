"""``mcp-agents-memory db status|start|stop`` on an embedded server of its own."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agents_memory.cli.memory import cli
from agents_memory.store.embedded import EmbeddedServer


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    yield data
    server = EmbeddedServer(data / "pg")
    if server.running() is not None:
        server.stop()
    if server.pgdata.is_relative_to("/var/lib/mcp-agents-memory"):
        shutil.rmtree(server.pgdata, ignore_errors=True)
        (server.pgdata.parent / f".{server.pgdata.name}.lock").unlink(missing_ok=True)


def _db(data: Path, *args: str) -> Result:
    env = {"MEMORY_DATA_DIR": str(data), "MEMORY_CONFIG_PATH": str(data / "none.env")}
    env |= {"DATABASE_URL": "", "DB_HOST": ""}
    return CliRunner().invoke(cli, ["db", *args], env=env, catch_exceptions=False)


def test_db_start_status_and_stop_drive_the_embedded_server(data_dir: Path) -> None:
    before = json.loads(_db(data_dir, "status", "--json").stdout)
    assert before["running"] is False and before["initialized"] is False
    started = _db(data_dir, "start")
    assert started.exit_code == 0 and "embedded server started" in started.stdout
    assert "already running" in _db(data_dir, "start").stdout
    running = json.loads(_db(data_dir, "status", "--json").stdout)
    assert running["running"] is True and running["pid"] > 0
    assert "running (pid" in _db(data_dir, "status").stdout
    stopped = _db(data_dir, "stop")
    assert "embedded server stopped" in stopped.stdout
    assert "was not running" in _db(data_dir, "stop").stdout
    assert json.loads(_db(data_dir, "status", "--json").stdout)["running"] is False


def test_db_refuses_an_external_server(tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://u@example.invalid/db", "MEMORY_DATA_DIR": str(tmp_path)}
    result = CliRunner().invoke(cli, ["db", "stop"], env=env)
    assert result.exit_code == 1 and "external server" in result.output


def test_doctor_says_when_the_capture_daemon_is_not_running(
    make_settings: Any, db_url: str, tmp_path: Path
) -> None:
    from agents_memory.capture.daemon import PidFile
    from agents_memory.ops.doctor import run_doctor

    settings = make_settings(database_url=db_url, embedding_backend="none")
    report = run_doctor(settings, state_dir=tmp_path)
    assert any("capture daemon is not running" in note for note in report.notes)
    lock = PidFile(tmp_path / "capture.pid")
    assert lock.acquire()
    try:
        report = run_doctor(settings, state_dir=tmp_path)
        assert not any("capture daemon is not running" in note for note in report.notes)
    finally:
        lock.release()
