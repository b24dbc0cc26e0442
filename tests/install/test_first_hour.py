"""The first hour on a fresh machine, exactly as the README's set-up section runs it: the wheel
installed with pipx into a throwaway home holding real transcripts, then `memory-capture install
--yes` without systemd. Slow (pipx builds a venv with every dependency): `pytest -m slow`."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.capture.daemon import running_pid
from agents_memory.store.embedded import EmbeddedServer
from tests.capture.test_pipeline import lay_out_fixture_home
from tests.capture.transcripts import claude_exchange, claude_session_path
from tests.coldpath.jobkit import git_repo
from tests.embeddings.fake_openai import FakeEmbeddingServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SESSION = "f1a2b3c4-0000-4000-8000-00000000f1a5"
INTERVAL_SEC = 3.0


def _poll(what: str, check: Callable[[], Any], timeout: float) -> Any:
    """``check()``'s first truthy answer within ``timeout`` seconds (bounded polling)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


def _ours(markers: list[str]) -> list[str]:
    """Command lines of live processes that mention any of ``markers`` (our paths)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        line = raw.replace(b"\0", b" ").decode(errors="replace")
        if state != "Z" and any(m in line for m in markers):
            found.append(f"{entry.name}: {line}")
    return found


class Machine:
    """A fresh home: HOME, XDG dirs, pipx's dirs and a PATH with only the system's tools."""

    def __init__(self, root: Path, embeddings: FakeEmbeddingServer) -> None:
        self.root = root
        self.home = root / "home"
        self.bin = root / "pipx-bin"
        self.home.mkdir()
        keep = ("PIP_", "LANG", "LC_", "TMPDIR", "SSL_", "REQUESTS_CA")
        self.env = {k: v for k, v in os.environ.items() if k.startswith(keep)}
        self.env.update(
            HOME=str(self.home),
            PATH=f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            PIPX_HOME=str(root / "pipx"),
            PIPX_BIN_DIR=str(self.bin),
            PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR")
            or str(Path.home() / ".cache" / "pip"),  # the real cache: only downloads are shared
            USER_NAME="first-hour",
            DEVICE_NAME="fresh",
            EMBEDDING_BACKEND="openai",
            EMBEDDING_BASE_URL=embeddings.base_url,
            EMBEDDING_MODEL="fake-embed",
            EMBEDDING_DIM=str(embeddings.dim),
            COLD_PATH_INTERVAL_SEC=str(INTERVAL_SEC),
            COLD_PATH_WARMUP_SEC="0",
            CAPTURE_RESCAN_SEC="2",
        )

    def run(self, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(argv),
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        return done

    @property
    def server(self) -> EmbeddedServer:
        return EmbeddedServer(self.home / ".local" / "share" / "mcp-agents-memory" / "pg")

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        info = self.server.running()
        assert info is not None, "the embedded database is not running"
        with psycopg.connect(info.conninfo(), autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


@pytest.fixture
def embeddings() -> Iterator[FakeEmbeddingServer]:
    fake = FakeEmbeddingServer(dim=16)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def machine(tmp_path: Path, embeddings: FakeEmbeddingServer) -> Iterator[Machine]:
    system = Path("/var/lib/mcp-agents-memory")  # as root: clusters and binary copies
    before = set(system.iterdir()) if system.is_dir() else set()
    fresh = Machine(tmp_path, embeddings)
    yield fresh
    # Whatever happened: nothing of ours keeps running, no cluster is left behind.
    for line in _ours([str(tmp_path)]):
        pid = int(line.split(":", 1)[0])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    server = fresh.server
    if server.running() is not None:
        server.stop()
    if server.pgdata.is_relative_to("/var/lib/mcp-agents-memory"):
        shutil.rmtree(server.pgdata, ignore_errors=True)
        (server.pgdata.parent / f".{server.pgdata.name}.lock").unlink(missing_ok=True)
    if system.is_dir():
        for made in set(system.glob("pginstall-*")) - before:
            shutil.rmtree(made, ignore_errors=True)


def _wheel(dest: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dest), str(ROOT)],
        check=True,
        timeout=600,
    )
    return next(dest.glob("mcp_agents_memory-*.whl"))


def test_the_first_hour_on_a_fresh_home_without_systemd(machine: Machine, tmp_path: Path) -> None:
    pytest.importorskip("pipx", reason="the CI venv installs pipx (.ci/run)")
    lay_out_fixture_home(machine.home)
    repo = git_repo(tmp_path / "src", "widget-factory")
    transcript = claude_session_path(machine.home, SESSION, "-src-widget-factory")
    transcript.write_bytes(claude_exchange(SESSION, 1, cwd=str(repo)))
    wheel = _wheel(tmp_path / "dist")

    started = time.monotonic()
    # The README's set-up section, word for word (the wheel stands in for the clone's ".").
    machine.run(sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(wheel))
    installed = time.monotonic()
    assert shutil.which("memory-capture", path=machine.env["PATH"]) == str(
        machine.bin / "memory-capture"
    )
    assert shutil.which("mcp-agents-memory", path=machine.env["PATH"])
    result = machine.run(str(machine.bin / "memory-capture"), "install", "--yes")
    out = result.stdout

    assert "rows stored" in out and "started the capture daemon" in out, out
    assert "mcp_optional_startup_grace_ms" in out
    state = machine.home / ".local" / "state" / "mcp-agents-memory"
    daemon = running_pid(state / "capture.pid")
    assert daemon is not None and daemon > 0
    stored = machine.query("SELECT count(*) FROM memory")[0][0]
    assert stored > 50  # the fixtures' history, backfilled
    _poll(
        "the Cold Path child",
        lambda: [p for p in _ours([str(tmp_path / "pipx")]) if " coldpath" in p],
        30,
    )

    appended = time.monotonic()
    with transcript.open("ab") as out_file:
        out_file.write(claude_exchange(SESSION, 2, cwd=str(repo)))
    text = "question 2 about the capture daemon"
    _poll(
        "the new turn's embedding",
        lambda: machine.query(
            "SELECT 1 FROM memory WHERE message = %s AND embedding IS NOT NULL", text
        ),
        INTERVAL_SEC + 60,
    )
    embedded = time.monotonic()
    tag = _poll(
        "the git project's tag",
        lambda: machine.query(
            "SELECT t.name FROM memory m JOIN project_tags t ON t.id = m.p_tag_id"
            " WHERE m.message = %s",
            text,
        ),
        60,
    )
    assert tag == [("widget-factory",)]
    assert machine.query("SELECT count(*) FROM project_tag_new_suggestions") == [(0,)]

    again = machine.run(str(machine.bin / "memory-capture"), "install", "--yes")
    assert "nothing to change" in again.stdout and "already running" in again.stdout

    machine.run(str(machine.bin / "memory-capture"), "uninstall", "--yes")
    machine.run(str(machine.bin / "memory-capture"), "stop")
    assert running_pid(state / "capture.pid") is None
    assert _ours([str(tmp_path), str(machine.server.pgdata)]) == []
    print(
        f"\nfirst hour: pipx install {installed - started:.1f} s, "
        f"memory-capture install {appended - installed:.1f} s, "
        f"new turn embedded after {embedded - appended:.1f} s; "
        f"total {embedded - started:.1f} s"
    )
