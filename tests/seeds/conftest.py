"""Seed fixtures: a seed A database on the test server, a seed B SQLite file."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from agents_memory.store.embedded import EmbeddedServer, ServerInfo
from tests.seeds import seed_a_schema, seed_b_schema

_counter = itertools.count()


@pytest.fixture
def make_seed_a(
    pg_server: tuple[EmbeddedServer, ServerInfo],
) -> Iterator[Callable[[int], tuple[str, dict[str, int]]]]:
    """Build a seed A database (vectors ``dim`` wide) with realistic rows: its URL and ids."""
    _server, info = pg_server
    made: list[str] = []

    def make(dim: int = 3072) -> tuple[str, dict[str, int]]:
        name = f"seed_a_{os.getpid()}_{next(_counter)}"
        with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        with psycopg.connect(info.conninfo(name)) as conn:
            conn.execute(seed_a_schema.ddl(dim))
            ids = seed_a_schema.populate(conn, dim)
        return info.conninfo(name), ids

    yield make
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def seed_b_path(tmp_path: Path) -> Path:
    path = tmp_path / "unified.db"
    seed_b_schema.build(path)
    return path
