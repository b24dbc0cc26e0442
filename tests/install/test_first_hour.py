"""The first hour on a fresh machine, exactly as the README's set-up section runs it: the
section's block, taken from README.md itself, run in a fresh shell (``env -i``, the default
PATH) in a throwaway home holding real transcripts, with a built wheel in place of the clone's
``.``; then a new login shell must find both commands. Without systemd. Slow (pipx builds a
venv with every dependency): `pytest -m slow`."""

from __future__ import annotations

import contextlib
import os
import re
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


DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SETUP_BLOCK = re.compile(r"^## Set-up.*?^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_setup_block() -> str:
    """The README's set-up commands, as a reader copies them."""
    found = SETUP_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found is not None, "README.md has no ```bash block under ## Set-up"
    return found[1].strip()


class Machine:
    """A fresh home whose shells have nothing but HOME and the default PATH. What a real
    machine has configured lives in files: pip's settings (the index, certificates and the
    download cache this machine uses) in ``~/.config/pip/pip.conf``, ours in
    ``~/.config/mcp-agents-memory/.env``."""

    def __init__(self, root: Path, embeddings: FakeEmbeddingServer) -> None:
        self.root = root
        self.home = root / "home"
        self.bin = self.home / ".local" / "bin"
        self.home.mkdir()
        self.env = {"HOME": str(self.home), "PATH": DEFAULT_PATH}
        pip = {
            k[4:].lower().replace("_", "-"): v
            for k, v in os.environ.items()
            if k.startswith("PIP_")
        }
        pip.setdefault("cache-dir", str(Path.home() / ".cache" / "pip"))  # only downloads shared
        self._write(".config/pip/pip.conf", "[global]\n", pip)
        ours = {
            "USER_NAME": "first-hour",
            "DEVICE_NAME": "fresh",
            "EMBEDDING_BACKEND": "openai",
            "EMBEDDING_BASE_URL": embeddings.base_url,
            "EMBEDDING_MODEL": "fake-embed",
            "EMBEDDING_DIM": str(embeddings.dim),
            "COLD_PATH_INTERVAL_SEC": str(INTERVAL_SEC),
            "COLD_PATH_WARMUP_SEC": "0",
            "CAPTURE_RESCAN_SEC": "2",
        }
        self._write(".config/mcp-agents-memory/.env", "", ours, sep="=")

    def _write(self, name: str, head: str, values: dict[str, str], sep: str = " = ") -> None:
        path = self.home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + "".join(f"{k}{sep}{v}\n" for k, v in values.items()), "utf-8")

    def shell(self, script: str, *, login: bool = False) -> subprocess.CompletedProcess[str]:
        """``script`` in a new bash (a login shell: it reads the start-up files)."""
        return self.run("/bin/bash", "-lc" if login else "-c", script)

    def run(self, *argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
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
    block, swapped = re.subn(r"\binstall \.(?=\s|$)", f"install {wheel}", readme_setup_block())
    assert swapped == 1, block
    # pipx as a distribution ships it (/usr/bin/pipx), here the CI venv's: the block runs
    # word for word after it.
    stand_in = f'pipx() {{ "{sys.executable}" -m pipx "$@"; }}'

    started = time.monotonic()
    result = machine.shell(f"{stand_in}\n{block}")
    installed = time.monotonic()
    out = result.stdout

    login = machine.shell("command -v memory-capture mcp-agents-memory", login=True)
    assert login.stdout.split() == [
        str(machine.bin / "memory-capture"),
        str(machine.bin / "mcp-agents-memory"),
    ], login
    assert "rows stored" in out and "started the capture daemon" in out, out
    assert "mcp_optional_startup_grace_ms" in out
    assert "new shells find memory-capture and mcp-agents-memory" in out, out
    assert "next steps:" in out and "applying migration" not in out + result.stderr
    state = machine.home / ".local" / "state" / "mcp-agents-memory"
    daemon = running_pid(state / "capture.pid")
    assert daemon is not None and daemon > 0
    stored = machine.query("SELECT count(*) FROM memory")[0][0]
    assert stored > 50  # the fixtures' history, backfilled
    _poll(
        "the Cold Path child",
        lambda: [p for p in _ours([str(machine.home / ".local")]) if " coldpath" in p],
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
        f"\nfirst hour: the README's block (pipx install, ensurepath, memory-capture install) "
        f"{installed - started:.1f} s; a new turn embedded {embedded - appended:.1f} s after "
        f"it was written; {embedded - started:.1f} s from the first command"
    )
