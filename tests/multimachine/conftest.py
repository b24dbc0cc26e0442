"""Shared by the multi-machine tests: one embedded server reached over TCP on 127.0.0.1, and
the environment of one simulated machine (its own home and DEVICE_NAME)."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents_memory.store.embedded import EmbeddedServer
from tests.conftest import postgres_processes, private_tmp_dir

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tcp_server() -> Iterator[str]:
    base = private_tmp_dir("am-mm-", in_memory=True)
    server = EmbeddedServer(
        base / "pg", port=_free_port(), listen_host="127.0.0.1", tcp_auth="trust"
    )
    info = server.start()
    try:
        assert info.listen_host == "127.0.0.1"
        yield f"postgresql://postgres@127.0.0.1:{info.port}/agents_memory"
    finally:
        server.stop()
        leftover = postgres_processes(server.pgdata)
        shutil.rmtree(base, ignore_errors=True)
        assert leftover == []


def machine_env(home: Path, device: str, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "MEMORY_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        DATABASE_URL=url,
        DEVICE_NAME=device,
        EMBEDDING_BACKEND="none",
        CAPTURE_RESCAN_SEC="0.5",
        CAPTURE_DEBOUNCE_MS="50",
        USER_NAME="shared-user",
        COLD_PATH_ENABLED="false",
    )
    return env
