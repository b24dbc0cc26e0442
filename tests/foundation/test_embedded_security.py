"""The embedded server against another local user and under root: no predictable shared socket
directory, no hijacked one, and no permission changed on a directory we did not create."""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agents_memory.errors import DatabaseError
from agents_memory.store.access import SOCKET_DIR_RECORD, SYSTEM_USER
from agents_memory.store.embedded import EmbeddedServer
from tests.conftest import postgres_processes, private_tmp_dir

OTHER_USER = "nobody"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


@pytest.fixture
def base() -> Iterator[Path]:
    path = private_tmp_dir("am-sec-", in_memory=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _long_pgdata(base: Path) -> Path:
    deep = base / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    return deep / "pg"


def _server_uid() -> int:
    return pwd.getpwnam(SYSTEM_USER).pw_uid if os.geteuid() == 0 else os.geteuid()


def _stopped(server: EmbeddedServer) -> None:
    server.stop()
    assert postgres_processes(server.pgdata) == []


def test_a_long_data_path_gets_a_private_unpredictable_socket_dir(base: Path) -> None:
    server = EmbeddedServer(_long_pgdata(base))
    old_predictable = Path(tempfile.gettempdir()) / (
        "mcp-agents-memory-" + hashlib.sha256(str(server.pgdata).encode()).hexdigest()[:12]
    )
    socket_dir: Path | None = None
    try:
        info = server.start()
        socket_dir = info.socket_dir
        assert info.socket_dir is not None and info.socket_dir != old_predictable
        st = info.socket_dir.lstat()
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == _server_uid()
        with psycopg.connect(info.conninfo()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        server.stop()
        again = server.start()
        assert again.socket_dir == info.socket_dir, "a private dir of ours is used again"
    finally:
        _stopped(server)
        if socket_dir is not None:
            shutil.rmtree(socket_dir, ignore_errors=True)


@needs_root
def test_a_socket_dir_another_user_took_over_is_refused_with_one_line(base: Path) -> None:
    server = EmbeddedServer(_long_pgdata(base))
    info = server.start()
    server.stop()
    assert info.socket_dir is not None
    # Another local user removes our (now empty) directory and plants their own, open to all.
    other = pwd.getpwnam(OTHER_USER)
    info.socket_dir.rmdir()
    info.socket_dir.mkdir()
    os.chown(info.socket_dir, other.pw_uid, other.pw_gid)
    info.socket_dir.chmod(0o777)
    try:
        with pytest.raises(DatabaseError) as caught:
            server.start()
        message = str(caught.value)
        assert "\n" not in message and "refusing the socket directory" in message
        assert server.running() is None, "the server must not start on a hijacked directory"
    finally:
        _stopped(server)
        shutil.rmtree(info.socket_dir, ignore_errors=True)


@needs_root
def test_a_planted_predictable_directory_is_never_used(base: Path) -> None:
    server = EmbeddedServer(_long_pgdata(base))
    planted = Path(tempfile.gettempdir()) / (
        "mcp-agents-memory-" + hashlib.sha256(str(server.pgdata).encode()).hexdigest()[:12]
    )
    other = pwd.getpwnam(OTHER_USER)
    planted.mkdir(mode=0o777, exist_ok=True)
    os.chown(planted, other.pw_uid, other.pw_gid)
    try:
        info = server.start()
        assert info.socket_dir != planted
        assert list(planted.iterdir()) == [], "nothing of ours may land in the planted dir"
        record = server.pgdata.parent / f".{server.pgdata.name}.{SOCKET_DIR_RECORD}"
        assert record.read_text(encoding="utf-8") == str(info.socket_dir)
    finally:
        _stopped(server)
        shutil.rmtree(planted, ignore_errors=True)


@needs_root
def test_as_root_no_directory_above_the_data_dir_changes_mode(base: Path) -> None:
    home = base / "root-home"
    home.mkdir()
    home.chmod(0o700)  # like /root
    system_dir = base / "var-lib"
    ancestors = [home, *home.parents]
    modes = {p: p.stat().st_mode for p in ancestors}
    server = EmbeddedServer(home / ".local" / "share" / "pg", system_dir=system_dir)
    try:
        info = server.start()
        with psycopg.connect(info.conninfo()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert {p: p.stat().st_mode for p in ancestors} == modes
        assert server.pgdata.parent == system_dir
        assert stat.S_IMODE(system_dir.stat().st_mode) == 0o711
        assert system_dir.stat().st_uid == 0
        assert server.pgdata.stat().st_uid == pwd.getpwnam(SYSTEM_USER).pw_uid
        again = EmbeddedServer(home / ".local" / "share" / "pg", system_dir=system_dir)
        assert again.pgdata == server.pgdata, "every process finds the same cluster"
    finally:
        _stopped(server)


@needs_root
def test_as_root_a_reachable_data_dir_is_used_in_place(base: Path) -> None:
    server = EmbeddedServer(base / "data" / "pg", system_dir=base / "var-lib")
    assert server.pgdata == base / "data" / "pg"
    assert not (base / "var-lib").exists()
