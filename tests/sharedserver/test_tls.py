"""TLS is required on both servers and the product verifies the server's certificate
(``sslmode=verify-full&sslrootcert=``): plain TCP and an unknown CA are refused, with the
reason in ``doctor``'s problem line."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.sharedserver.conftest import SharedServer, product_env, run_cli

pytestmark = pytest.mark.sharedserver

REFUSED_PLAIN = {
    "pg15": "pg_hba.conf rejects connection",  # PostgreSQL's own hostssl-only rule
    "pg18": "TLS is required",  # the TLS proxy in front of the SSL-less wheel build
}


@pytest.mark.parametrize("name", ["pg15", "pg18"])
def test_the_product_reaches_the_server_only_over_verified_tls(
    name: str, request: pytest.FixtureRequest, tmp_path: Path, other_ca: Path
) -> None:
    server: SharedServer = request.getfixturevalue(name)
    memdb = server.new_database()
    with psycopg.connect(server.url(memdb)) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.info.user == "memuser"

    cases = {
        REFUSED_PLAIN[name]: server.url(memdb, sslmode="disable"),
        "certificate verify failed": server.url(memdb, ca=other_ca),
    }
    for reason, url in cases.items():
        doctor = run_cli("mcp-agents-memory", ["doctor"], product_env(tmp_path, url))
        assert doctor.returncode == 1
        assert "problem:" in doctor.stderr and reason in doctor.stderr, doctor.stderr
