"""Actions captured from the real clients: after ``memory-capture install``, the fake model has
the client write a script, read it, edit it and run it with a secret-looking token in the
command line; the run fails (exit code 3, an error line). The capture daemon that install
started stores the failing shell call once, with the token masked and the error line kept,
and ``search_memory`` (the installed MCP server, through the SDK's real stdio client) finds it
by the command's words and by the error's. Offline, per client that records tool calls."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import string
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client, StdioServerParameters

from agents_memory.admission.redact import redact
from agents_memory.store.embedded import EmbeddedServer, ServerInfo
from tests.e2e.action_plans import COMMAND_WORDS, ERROR_LINE, EXIT_CODE, TOKEN_NAME, plan
from tests.e2e.clis import CLIS, AgentCli
from tests.e2e.conftest import fresh_database, installed_cli
from tests.e2e.harness import Ran, Workspace, model_server, priority, run
from tests.e2e.scenario import prepare_database, product_command, write_product_settings

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

CAPTURE_WAIT = 120.0
"""Seconds the daemon gets to store the session's actions and closing reply."""
SEARCHES = {"command": "migrate_orders.py staging", "error": "relation orders_archive"}


def _token() -> str:
    """A fresh secret-looking value that the redaction masks in the command line."""
    alphabet = string.ascii_letters + string.digits
    for _ in range(20):
        token = "".join(secrets.choice(alphabet) for _ in range(32))
        if token not in redact(f"{TOKEN_NAME}={token} {COMMAND_WORDS}").text:
            return token
    raise AssertionError("no token the redaction masks")


@dataclass(slots=True)
class Acted:
    platform: str
    token: str = field(default_factory=_token)
    nonce: str = field(default_factory=lambda: f"E2E-{uuid.uuid4().hex[:8]}")
    steps: dict[str, Ran] = field(default_factory=dict)
    answers: list[Any] = field(default_factory=list)
    captured: list[tuple[Any, ...]] = field(default_factory=list)
    """The failing shell call's rows once the daemon stored it (and the reply after it)."""
    after_backfill: list[tuple[Any, ...]] = field(default_factory=list)
    found: dict[str, Any] = field(default_factory=dict)
    waited: float = 0.0

    def excerpt(self) -> str:
        steps = "\n".join(r.tail() for r in self.steps.values())
        return f"{steps}\nthe model answered: {self.answers}"


def _shell_rows(conninfo: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(conninfo) as conn:
        return conn.execute(
            "SELECT id, session_id, external_key, kind, outcome, exit_code, command, excerpt"
            " FROM actions WHERE command LIKE %s ORDER BY id",
            (f"%{COMMAND_WORDS}",),
        ).fetchall()


def _replied(conninfo: str, nonce: str) -> bool:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memory WHERE role = 'assistant' AND message LIKE %s",
            (f"%{nonce} after the plan%",),
        ).fetchone()
    return bool(row and row[0])


def _wait_for_capture(conninfo: str, nonce: str) -> float:
    """Until the failing call is stored complete and the closing reply after it too."""
    started = time.monotonic()
    while time.monotonic() - started < CAPTURE_WAIT:
        rows = _shell_rows(conninfo)
        if rows and rows[-1][4] != "unknown" and _replied(conninfo, nonce):
            break
        time.sleep(0.5)
    return time.monotonic() - started


def _search(ws: Workspace) -> dict[str, Any]:
    """``search_memory`` through the installed MCP server, as a client would call it."""
    server = StdioServerParameters(
        command=str(product_command("mcp-agents-memory")), args=[], env=ws.env(), cwd=ws.project
    )

    async def go() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with Client(server) as client:
            for name, query in SEARCHES.items():
                result = await client.call_tool("search_memory", {"query": query, "detail": "full"})
                found[name] = result.content[0].text if result.content else ""
        return found

    return anyio.run(go)


@pytest.fixture(scope="module", params=list(CLIS), ids=list(CLIS))
def acted(
    request: pytest.FixtureRequest, e2e_machine: None, pg_server: tuple[EmbeddedServer, ServerInfo]
) -> Iterator[Acted]:
    platform: str = request.param
    cli: AgentCli = CLIS[platform](installed_cli(platform))
    base = Path(tempfile.mkdtemp(prefix=f"am-e2e-actions-{platform}-"))
    ws = Workspace(
        home=base / "home",
        project=base / "project",
        bin_dirs=[cli.installed.bin_dir, product_command("memory-capture").parent],
    )
    for directory in (ws.home / "tmp", ws.project, base / "logs"):
        directory.mkdir(parents=True)
    _server, info = pg_server
    outcome = Acted(platform)
    with fresh_database(info, f"e2e_actions_{platform.replace('-', '_')}_{os.getpid()}") as db:
        prepare_database(db)
        write_product_settings(ws.home, db)
        cli.prepare(ws)
        env, cwd = ws.env(), ws.project
        capture = [*priority(), str(product_command("memory-capture"))]
        outcome.steps["install"] = run(
            [*capture, "install", "--platform", platform, "--yes"], env=env, cwd=cwd
        )
        cli.after_install(ws)
        # install starts the daemon in the background; `start` says so, or starts it if not
        outcome.steps["start"] = run([*capture, "start"], env=env, cwd=cwd)
        calls = plan(platform, ws.project, outcome.token)
        prompt = f"USE_PLAN: run the staging migration and fix what fails. {outcome.nonce}"
        log = base / "logs" / "requests.jsonl"
        with model_server(log, expect="", tool_args={}, plan=calls) as model:
            outcome.steps["plan"] = run(
                model.wrap(cli.acting(prompt)), env=env, cwd=cwd, timeout=300
            )
            outcome.answers = [r.get("tool") or r.get("reply_text") for r in model.requests()]
        outcome.waited = _wait_for_capture(db, outcome.nonce)
        outcome.captured = _shell_rows(db)
        backfill = [*capture, "backfill", "--platform", platform, "--json"]
        outcome.steps["backfill"] = run(backfill, env=env, cwd=cwd)
        outcome.after_backfill = _shell_rows(db)
        outcome.found = _search(ws)
        outcome.steps["stop daemon"] = run([*capture, "stop"], env=env, cwd=cwd)
        (base / "logs" / "acted.json").write_text(
            json.dumps({"captured": outcome.captured, "found": outcome.found}, default=str),
            encoding="utf-8",
        )
        yield outcome
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(base, ignore_errors=True)


def test_the_daemon_stores_the_failing_shell_call_once_redacted(acted: Acted) -> None:
    assert acted.steps["install"].returncode == 0, acted.excerpt()
    assert acted.steps["plan"].returncode == 0, acted.excerpt()
    assert f"FAKE-REPLY to {acted.nonce} after the plan." in acted.answers, acted.excerpt()
    assert len(acted.captured) == 1, f"after {acted.waited:.0f}s: {acted.captured}"
    [(_id, session, _key, kind, outcome, exit_code, command, excerpt)] = acted.captured
    assert (kind, outcome, exit_code) == ("shell", "error", EXIT_CODE), acted.captured
    assert command == f"{TOKEN_NAME}=[redacted:token] {COMMAND_WORDS}"
    assert excerpt is not None and ERROR_LINE in excerpt and acted.token not in excerpt
    assert session, "the action belongs to no session"
    assert acted.steps["backfill"].returncode == 0, acted.steps["backfill"].tail()
    assert acted.after_backfill == acted.captured, "a backfill after the daemon doubled it"


@pytest.mark.parametrize("search", list(SEARCHES))
def test_search_memory_finds_the_failing_call_by_its_words(acted: Acted, search: str) -> None:
    text = acted.found[search]
    assert acted.token not in text
    answer = json.loads(text)
    hits = [
        action
        for result in answer["results"]
        for action in result.get("actions") or []
        if (action.get("command") or "").endswith(COMMAND_WORDS)
    ]
    assert hits, f"{SEARCHES[search]!r} did not find the call: {text[:2000]}"
    assert ERROR_LINE in (hits[0].get("excerpt") or ""), hits[0]
    assert hits[0]["command"] == f"{TOKEN_NAME}=[redacted:token] {COMMAND_WORDS}"
