"""Actions given back: ``read_memory`` (real MCP client) lists each assistant turn's tool calls
inline, one line each; ``mcp-agents-memory actions`` (the real CLI) finds them by words of a
path, a command or an error, with filters. The real fixtures captured by the real backfill."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.recall.state import ServerState
from agents_memory.server.app import create_server
from tests.owner.helpers import SPOTTER, SPOTTER_SESSION, env_for, place_spotter, run
from tests.server.mcpcall import call, ok

CODEX = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex"
CODEX_SHELL = CODEX / "vct_v0.39.0_vscode_unicode.jsonl"


def _captured(settings: Settings, home: Path) -> None:
    place_spotter(home)
    rollout = home / ".codex" / "sessions" / "2025" / "09" / "19" / f"rollout-{CODEX_SHELL.name}"
    rollout.parent.mkdir(parents=True)
    shutil.copyfile(CODEX_SHELL, rollout)
    backfill(settings, Catalog(all_adapters(), home))


def _turn_of(state: ServerState, where: str) -> int:
    with state.pool.connection() as conn:
        row = conn.execute(f"SELECT memory_id FROM actions WHERE {where}").fetchone()
    assert row is not None and row[0] is not None
    return int(row[0])


def test_read_memory_shows_each_assistant_turns_actions_inline(
    state: ServerState, server_settings: Settings, tmp_path: Path
) -> None:
    _captured(server_settings, tmp_path)
    server = create_server(server_settings, state)
    # The server was started by a tool-only response; the exchange's turn is the next one,
    # which also made the `tail -5` call.
    shell_turn = _turn_of(state, "command LIKE 'tail -5 %'")
    failed_turn = _turn_of(state, "outcome = 'error'")

    spotter = ok(call(server, "read_memory", {"memory_id": shell_turn, "before": 0, "after": 0}))
    codex = ok(call(server, "read_memory", {"memory_id": failed_turn, "before": 1, "after": 1}))

    [turn] = spotter["turns"]
    assert turn["role"] == "assistant" and spotter["session_id"] == SPOTTER_SESSION
    assert turn["actions"][0] == "shell `mix phx.server` → ok"  # placed by time, first
    assert turn["actions"][1].startswith("shell `tail -5 /tmp/claude-1000/")
    anchor = next(t for t in codex["turns"] if t["anchor"])
    assert (
        "shell `applypatch << 'PATCH'…` → error: patch rejected: empty patch" in (anchor["actions"])
    )
    assert all(len(line) < 300 for t in codex["turns"] for line in t["actions"])
    assert all(t["actions"] == [] for t in codex["turns"] if t["role"] == "user")


def test_the_actions_command_finds_them_by_path_command_and_error_with_filters(
    server_settings: Settings, tmp_path: Path
) -> None:
    _captured(server_settings, tmp_path)
    env = env_for(server_settings.database_url or "", tmp_path)

    error = run("mcp-agents-memory", "actions", "patch", "rejected", env=env)
    edits = run("mcp-agents-memory", "actions", "--file", "README.*.md", "--json", env=env)
    by_command = run("mcp-agents-memory", "actions", "phx.server", "--kind", "shell", env=env)
    by_path = run("mcp-agents-memory", "actions", "app.js", env=env)
    nothing = run("mcp-agents-memory", "actions", "kubernetes", env=env)

    assert error.returncode == 0, error.stderr
    [line] = error.stdout.splitlines()
    assert "codex-cli" in line and "→ error: patch rejected: empty patch" in line
    assert edits.returncode == 0, edits.stderr
    found: list[dict[str, Any]] = json.loads(edits.stdout)
    assert sorted(a["targets"][0] for a in found) == ["README.zh-CN.md", "README.zh-TW.md"]
    assert all(a["kind"] == "edit" and a["lines_added"] == 22 for a in found)
    assert "shell `mix phx.server` → ok" in by_command.stdout
    assert "read assets/js/app.js → ok" in by_path.stdout
    assert nothing.stdout.strip() == "no match"
    assert SPOTTER.exists()
