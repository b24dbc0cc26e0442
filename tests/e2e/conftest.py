"""Fixtures for the real-CLI suite: the npm- and pip-installed CLIs (once per run, cached across
runs in ``$E2E_CLI_ROOT`` or ``~/.cache/mcp-agents-memory-e2e/cli``), the network-namespace
check, and one recorded end-to-end session per CLI on its own database of the shared embedded
server.

Every reason the machine cannot run the suite (no npm, registry unreachable, no namespaces,
the product's scripts not installed) is a skip with that reason, never a failure.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from agents_memory.store.embedded import EmbeddedServer, ServerInfo
from tests.e2e.clis import CLIS, AgentCli
from tests.e2e.harness import (
    HarnessUnavailable,
    Installed,
    PipPackage,
    Workspace,
    check_namespaces,
    cli_root,
    ensure_installed,
)
from tests.e2e.scenario import (
    Outcome,
    prepare_database,
    product_command,
    run_session,
    write_product_settings,
)

_installs: dict[str, Installed] = {}
_outcomes: list[Outcome] = []


@pytest.fixture(scope="session")
def e2e_machine() -> None:
    """Skip the suite, with the reason, when this machine cannot run it."""
    for name in ("memory-capture", "mcp-agents-memory"):
        if not product_command(name).exists():
            pytest.skip(f"`{name}` is not installed beside {sys.executable}; pip install -e .")
    try:
        check_namespaces()
    except HarnessUnavailable as exc:
        pytest.skip(str(exc))


def installed_cli(platform: str) -> Installed:
    """Install (or reuse) one CLI; a failure skips the tests that need it."""
    package = CLIS[platform].package
    if platform not in _installs:
        try:
            _installs[platform] = ensure_installed(package, cli_root())
        except HarnessUnavailable as exc:
            pytest.skip(f"{package.spec}: {exc}")
    return _installs[platform]


@pytest.fixture(scope="session")
def all_clis_installed(e2e_machine: None) -> None:
    """Install them all up front, so the install time is one figure and not a test's."""
    for platform in CLIS:
        try:
            _installs.setdefault(platform, ensure_installed(CLIS[platform].package, cli_root()))
        except HarnessUnavailable:
            continue  # that CLI's tests skip with the reason (installed_cli retries once)


@contextmanager
def fresh_database(info: ServerInfo, name: str) -> Iterator[str]:
    with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield info.conninfo(name)
    finally:
        with psycopg.connect(info.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module", params=list(CLIS), ids=list(CLIS))
def session(
    request: pytest.FixtureRequest,
    all_clis_installed: None,
    pg_server: tuple[EmbeddedServer, ServerInfo],
) -> Iterator[Outcome]:
    """One recorded end-to-end session of the CLI named by the parameter."""
    platform: str = request.param
    cli: AgentCli = CLIS[platform](installed_cli(platform))
    _server, info = pg_server
    # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps (see
    # tests/conftest.private_tmp_dir). E2E_KEEP=1 keeps the HOMEs and the fake-model logs.
    base = Path(tempfile.mkdtemp(prefix=f"am-e2e-{platform}-"))
    ws = Workspace(
        home=base / "home",
        project=base / "project",
        bin_dirs=[cli.installed.bin_dir, product_command("memory-capture").parent],
    )
    for directory in (ws.home / "tmp", ws.project, base / "logs"):
        directory.mkdir(parents=True)
    with fresh_database(info, f"e2e_{platform.replace('-', '_')}_{os.getpid()}") as conninfo:
        prepare_database(conninfo)
        write_product_settings(ws.home, conninfo)
        cli.prepare(ws)
        outcome = run_session(cli, ws, conninfo, base / "logs")
        _outcomes.append(outcome)
        yield outcome
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(base, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Versions, install times and per-step times, so a slow CLI shows in the CI log."""
    if not _installs and not _outcomes:
        return
    write = terminalreporter.write_line
    terminalreporter.section("real agent CLIs")
    for platform, done in _installs.items():
        took = "cached" if done.install_seconds is None else f"{done.install_seconds:.1f}s"
        tool = "pip" if isinstance(done.package, PipPackage) else "npm"
        write(f"{platform}: {done.package.spec} {done.version} ({tool} install: {took})")
    for outcome in _outcomes:
        steps = ", ".join(f"{k} {v:.1f}s" for k, v in outcome.timings().items())
        write(f"{outcome.platform}: {steps}")
    write(f"CLI cache: {cli_root()}")
    if os.environ.get("E2E_KEEP") == "1":
        for outcome in _outcomes:
            write(f"{outcome.platform}: HOME and logs kept in {outcome.ws.home.parent}")
