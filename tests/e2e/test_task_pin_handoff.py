"""A hand-off between two real agent CLIs: Claude Code (fake model) calls ``task_pin`` create
for Codex; Codex's next session-start brief, injected by our hook, carries the pin to its
model. One HOME with both clients installed, one database, the fake model offline."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.store.embedded import EmbeddedServer, ServerInfo
from tests.e2e.clis import CLIS
from tests.e2e.conftest import fresh_database, installed_cli
from tests.e2e.fake_model import text_of
from tests.e2e.harness import Workspace, model_server, priority, run
from tests.e2e.scenario import prepare_database, product_command, write_product_settings

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture
def two_agents(
    e2e_machine: None, pg_server: tuple[EmbeddedServer, ServerInfo]
) -> Iterator[tuple[Workspace, str, Path]]:
    claude = CLIS["claude-code"](installed_cli("claude-code"))
    codex = CLIS["codex-cli"](installed_cli("codex-cli"))
    base = Path(tempfile.mkdtemp(prefix="am-e2e-handoff-"))
    ws = Workspace(
        home=base / "home",
        project=base / "project",
        bin_dirs=[
            claude.installed.bin_dir,
            codex.installed.bin_dir,
            product_command("memory-capture").parent,
        ],
    )
    for directory in (ws.home / "tmp", ws.project, base / "logs"):
        directory.mkdir(parents=True)
    _server, info = pg_server
    with fresh_database(info, f"e2e_handoff_{uuid.uuid4().hex[:8]}") as conninfo:
        prepare_database(conninfo)
        write_product_settings(ws.home, conninfo)
        env, cwd = ws.env(), ws.project
        capture = [*priority(), str(product_command("memory-capture"))]
        for cli in (claude, codex):
            cli.prepare(ws)
            installed = run(
                [*capture, "install", "--platform", cli.platform, "--yes"], env=ws.env(), cwd=cwd
            )
            assert installed.returncode == 0, installed.tail()
            cli.after_install(ws)
        del env
        yield ws, conninfo, base / "logs"
        # install started the capture daemon in the background; `uninstall --platform` would not
        # stop it either
        run([*capture, "stop"], env=ws.env(), cwd=cwd)
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(base, ignore_errors=True)


def _pins(conninfo: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(conninfo) as conn:
        return conn.execute(
            "SELECT pin_id, event, status, title, from_agent, to_agent FROM task_pin_events"
        ).fetchall()


def test_a_pin_created_by_claude_reaches_codex_in_its_brief(
    two_agents: tuple[Workspace, str, Path],
) -> None:
    ws, conninfo, logs = two_agents
    nonce = f"E2E-{uuid.uuid4().hex[:8]}"
    title = f"PIN-{nonce}: run the migration tests on staging"
    args = {"action": "create", "to": "codex-cli", "title": title, "payload": {"cmd": "pytest"}}
    claude = CLIS["claude-code"](installed_cli("claude-code"))
    codex = CLIS["codex-cli"](installed_cli("codex-cli"))
    env, cwd = ws.env(), ws.project
    with model_server(
        logs / "requests.jsonl", expect="pending", tool_args=args, tool="task_pin"
    ) as model:
        ask = f"USE_TOOL: hand the staging migration tests to Codex. {nonce}"
        tool = "mcp__mcp-agents-memory__task_pin"
        argv = [claude.exe, "-p", ask, "--output-format", "json", "--allowedTools", tool]
        first = run(model.wrap(argv), env=env, cwd=cwd)
        pins = _pins(conninfo)
        hello = f"Please say hello. {uuid.uuid4().hex[:8]}"
        second = run(model.wrap(codex.headless(hello)), env=env, cwd=cwd)
        requests = model.requests()
    (logs / "handoff.json").write_text(json.dumps(requests, default=str), encoding="utf-8")
    (logs / "agents.txt").write_text(
        f"$ claude -p {ask!r}\n{first.stdout}\n$ codex exec {hello!r}\n{second.stdout}",
        encoding="utf-8",
    )
    assert first.returncode == 0, first.tail()
    assert [(p[1], p[2], p[3], p[4], p[5]) for p in pins] == [
        ("create", "pending", title, "claude-code", "codex-cli")
    ], first.tail()
    replies = [r.get("reply_text") or "" for r in requests]
    assert any("after the tool: seed_found=yes" in r for r in replies), first.tail()
    assert second.returncode == 0, second.tail()
    codex_requests = [r for r in requests if r.get("path", "").endswith("/responses")]
    assert codex_requests, second.tail()
    seen = text_of(codex_requests[0]["body"])
    assert "## Task pins for codex-cli" in seen and title in seen, second.tail()
    assert "from claude-code (pending" in seen
