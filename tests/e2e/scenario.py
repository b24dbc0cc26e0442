"""One end-to-end session per CLI: install our hooks and MCP server into a throwaway HOME, chat
headless through the fake model, capture the transcript, uninstall. Every step's output is
kept in an :class:`Outcome`; the tests assert on it (so one failing step does not hide the
others' results)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.store import migrate
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories
from tests.e2e.clis import AgentCli
from tests.e2e.harness import (
    ModelServer,
    Ran,
    Workspace,
    model_server,
    priority,
    run,
)

USER = "e2e-user"
SEED_WORD = "ZORBLAX-7731"
SEED_TEXT = f"Pinned for the e2e suite: the build llama is named {SEED_WORD}."
TOOL_RETRIES = 2
"""Codex starts MCP servers concurrently with the first model request; now and then our tool
is not offered yet. The tool turn is retried (fresh session) up to this many times."""


def product_command(name: str) -> Path:
    """The console script installed beside the running interpreter (the venv's bin dir)."""
    return Path(sys.executable).parent / name


def prepare_database(conninfo: str) -> None:
    """Migrate and seed one pinned memory whose text the brief must carry."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        migrate.migrate(conn)
    with psycopg.connect(conninfo) as conn:
        user_id = ensure_user(conn, USER)
        pinned = NewMemory(
            "claude-code",
            "user",
            SEED_TEXT,
            external_uuid="e2e-seed-pinned",
            source="manage_knowledge",
            is_pinned=True,
        )
        insert_memories(conn, user_id, [pinned])


def write_product_settings(home: Path, conninfo: str) -> Path:
    """The product's ``.env`` in the throwaway HOME: every product process (hooks, MCP server,
    backfill) finds the database through it, as on a user's machine."""
    path = home / ".config" / "mcp-agents-memory" / ".env"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"DATABASE_URL={conninfo}",
        "DEVICE_NAME=e2e-device",
        f"USER_NAME={USER}",
        "EMBEDDING_BACKEND=none",
        "COLD_PATH_ENABLED=false",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass(slots=True)
class Outcome:
    cli: AgentCli
    ws: Workspace
    hello_nonce: str
    tool_nonce: str
    save_nonce: str = field(default_factory=lambda: f"E2E-{uuid.uuid4().hex[:8]}")
    steps: dict[str, Ran] = field(default_factory=dict)
    tool_attempts: list[Ran] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    transcripts: list[Path] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    rows_after_second_backfill: list[dict[str, Any]] = field(default_factory=list)
    installed_configs: dict[str, str | None] = field(default_factory=dict)
    uninstalled_configs: dict[str, str | None] = field(default_factory=dict)
    refreshed_brief_file: str | None = None
    """The client's managed context file after the capture daemon's first refresh."""

    @property
    def platform(self) -> str:
        return self.cli.platform

    def timings(self) -> dict[str, float]:
        timed = {name: ran.seconds for name, ran in self.steps.items()}
        for i, ran in enumerate(self.tool_attempts):
            timed[f"tool#{i + 1}"] = ran.seconds
        return timed

    def log_excerpt(self) -> str:
        """The steps' outputs, for failure messages."""
        ran = [*self.steps.values(), *self.tool_attempts]
        return "\n".join(r.tail() for r in ran)


def read_configs(home: Path, names: tuple[str, ...]) -> dict[str, str | None]:
    return {
        name: (home / name).read_text(encoding="utf-8") if (home / name).exists() else None
        for name in names
    }


def stored_rows(conninfo: str) -> list[dict[str, Any]]:
    with psycopg.connect(conninfo) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT id, agent_platform, role, message, raw_message, source, session_id,"
            " external_uuid FROM memory ORDER BY id"
        )
        names = [d.name for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def run_session(cli: AgentCli, ws: Workspace, conninfo: str, logs: Path) -> Outcome:
    """Install, chat (plain turn, tool turn), capture twice, uninstall."""
    outcome = Outcome(cli, ws, f"E2E-{uuid.uuid4().hex[:8]}", f"E2E-{uuid.uuid4().hex[:8]}")
    env, cwd = ws.env(), ws.project
    capture = [*priority(), str(product_command("memory-capture"))]
    platform = cli.platform

    outcome.steps["install"] = run(
        [*capture, "install", "--platform", platform, "--yes"], env=env, cwd=cwd
    )
    outcome.installed_configs = read_configs(ws.home, cli.config_files)
    cli.after_install(ws)
    if cli.brief_file:
        brief_file = ws.home / cli.brief_file
        outcome.steps["brief in file"] = daemon_refresh(capture, brief_file, env=env, cwd=cwd)
        outcome.refreshed_brief_file = read_configs(ws.home, (cli.brief_file,))[cli.brief_file]

    tool_args = {"query": SEED_WORD, "platform": "*"}
    with model_server(logs / "requests.jsonl", expect=SEED_WORD, tool_args=tool_args) as model:
        outcome.steps["mcp list"] = run(model.wrap(cli.mcp_list()), env=env, cwd=cwd)
        hello = f"Please say hello. {outcome.hello_nonce}"
        outcome.steps["hello"] = run(model.wrap(cli.headless(hello)), env=env, cwd=cwd)
        ask = f"USE_TOOL: look up what the build llama is called. {outcome.tool_nonce}"
        for _ in range(TOOL_RETRIES):
            outcome.tool_attempts.append(run(model.wrap(cli.headless(ask)), env=env, cwd=cwd))
            if _tool_answered(model, outcome.tool_nonce):
                break
        if cli.save_probe:
            save = f"USE_TOOL=save_message: keep this note. {outcome.save_nonce}"
            outcome.steps["save probe"] = run(model.wrap(cli.headless(save)), env=env, cwd=cwd)
        outcome.requests = model.requests()
    outcome.transcripts = cli.transcripts(ws.home)

    backfill = [*capture, "backfill", "--platform", platform, "--json"]
    outcome.steps["backfill"] = run(backfill, env=env, cwd=cwd)
    outcome.rows = stored_rows(conninfo)
    outcome.steps["backfill again"] = run(backfill, env=env, cwd=cwd)
    outcome.rows_after_second_backfill = stored_rows(conninfo)

    outcome.steps["uninstall"] = run(
        [*capture, "uninstall", "--platform", platform, "--yes"], env=env, cwd=cwd
    )
    outcome.uninstalled_configs = read_configs(ws.home, cli.config_files)
    # install started the capture daemon in the background; `uninstall --platform` leaves it
    outcome.steps["stop daemon"] = run([*capture, "stop"], env=env, cwd=cwd)
    (logs / "outcome.json").write_text(
        json.dumps(
            {"timings": outcome.timings(), "transcripts": [str(p) for p in outcome.transcripts]}
        ),
        encoding="utf-8",
    )
    return outcome


def daemon_refresh(
    capture: list[str], brief_file: Path, *, env: dict[str, str], cwd: Path, timeout: float = 90
) -> Ran:
    """Wait until the capture daemon has written the brief into ``brief_file``'s managed block.
    Install has started one in the background (it usually has done so already); this runs
    another (``memory-capture run``, which refreshes the blocks too) in case install could
    not, and stops it with SIGTERM as a service manager would."""
    argv = [*capture, "run", "--no-cold-path", "--poll"]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    note = ""
    while not _has_brief(brief_file):
        if proc.poll() is not None:
            break
        if time.monotonic() - started > timeout:
            note = f"\n[harness] no brief in {brief_file} after {timeout:.0f}s"
            break
        time.sleep(0.2)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return Ran(argv, proc.returncode, out, err + note, time.monotonic() - started)


def _has_brief(path: Path) -> bool:
    try:
        return BRIEF_MARKER in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _tool_answered(model: ModelServer, nonce: str) -> bool:
    return any(
        r.get("reply_text") and nonce in r["reply_text"] and "after the tool" in r["reply_text"]
        for r in model.requests()
    )
