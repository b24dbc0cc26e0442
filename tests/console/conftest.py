"""A console over a pool captured from the real fixtures (tests/data/pool.py), served by
Starlette's test client (routes, auth, CSRF) or by uvicorn on a real port (the browser)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from starlette.testclient import TestClient

from agents_memory.adapters import all_adapters
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.console.app import bind, create_app
from agents_memory.console.build import open_console
from agents_memory.console.context import Console
from agents_memory.console.security import Guard
from tests.data.pool import populate

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
EVIL = "<script>alert('owned')</script><img src=x onerror=alert(1)>"
"""A turn that carries markup, as transcripts do."""


@pytest.fixture
def pool_settings(make_settings: Any, db_url: str, tmp_path: Path) -> Settings:
    settings: Settings = make_settings(database_url=db_url, embedding_backend="none")
    with psycopg.connect(db_url) as conn:
        populate(settings, tmp_path / "home", conn)
        conn.execute(
            "INSERT INTO memory (user_id, agent_platform, role, message, session_id, source)"
            " SELECT user_id, 'claude-code', 'assistant', %s, 'evil-session', 'capture'"
            " FROM users LIMIT 1",
            (EVIL,),
        )
    return settings


@pytest.fixture
def console(pool_settings: Settings, tmp_path: Path) -> Iterator[Console]:
    made = open_console(
        pool_settings, Catalog(all_adapters(), tmp_path / "home"), tmp_path / "capture.pid"
    )
    yield made
    made.state.close()


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


@pytest.fixture
def guard() -> Guard:
    return Guard(port=PORT)


@pytest.fixture
def anonymous(console: Console, guard: Guard) -> Iterator[TestClient]:
    """A client that has not logged in."""
    with TestClient(create_app(console, guard), base_url=ORIGIN, follow_redirects=False) as client:
        yield client


@pytest.fixture
def client(anonymous: TestClient, guard: Guard) -> TestClient:
    """A logged-in client whose changes come from the console's origin."""
    assert guard.login_token
    login = anonymous.get(f"/login?token={guard.login_token}")
    assert login.status_code == 303
    anonymous.headers["origin"] = ORIGIN
    return anonymous


class LiveServer:
    """The console served by uvicorn on a real port in a thread (for the browser)."""

    def __init__(self, console: Console) -> None:
        import uvicorn

        self.sock = bind(0)
        self.guard = Guard(port=self.sock.getsockname()[1])
        config = uvicorn.Config(
            create_app(console, self.guard),
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.guard.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        started = threading.Event()
        for _ in range(200):
            if self.server.started:
                started.set()
                break
            self.thread.join(timeout=0.05)
        assert started.is_set(), "the console did not start"
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
