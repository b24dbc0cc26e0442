"""Imported history without a git repository on this machine still gets a project: Codex's
recorded repository URL, else the working directory's name (one rule, in the tagger), from the
real transcript fixtures backfilled into a home where none of their folders exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents_memory.adapters import all_adapters
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.coldpath.folder_project import folder_project
from agents_memory.coldpath.tagger import TaggerJob
from agents_memory.config import Settings
from agents_memory.store.coldpath import tag_suggestions as suggestion_store

from .jobkit import add, context, row, tagged

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PLACES = {
    "claude-code/spotter_v2.1.38_tool_heavy.jsonl": ".claude/projects/-a/s1.jsonl",
    "claude-code/spotter_v2.1.38_short_interrupt_local_command.jsonl": (
        ".claude/projects/-a/s2.jsonl"
    ),
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": ".claude/projects/-b/v.jsonl",
    "claude-code/agent-sessions_composite_v2.1.x_record_types.jsonl": (
        ".claude/projects/-c/c.jsonl"
    ),
    "codex/vct_v0.39.0_vscode_unicode.jsonl": ".codex/sessions/2026/11/30/rollout-a.jsonl",
    "codex/claude-code-transcripts_v0.77.0_agents_md_env_context_trimmed.jsonl": (
        ".codex/sessions/2026/11/30/rollout-b.jsonl"
    ),
    "codex/agent-sessions_composite_v0.1xx_record_types.jsonl": (
        ".codex/sessions/2026/11/30/rollout-c.jsonl"
    ),
    "gemini-cli/vct_legacy_json_2025-10_gemini-2.5-pro.json": ".gemini/tmp/p/chats/session-g.json",
}


@pytest.mark.parametrize(
    ("cwd", "name"),
    [
        ("/home/wei/repo/claude-code", "claude-code"),
        ("/Users/macmini/Code/homelab-migration", "homelab-migration"),
        ("C:\\Users\\x\\My Proj", "my-proj"),
        ("/tmp", None),
        ("/tmp/repo", None),
        ("/home/marco", None),
        ("[trimmed for fixture]", None),
        ("", None),
    ],
)
def test_a_folder_names_a_project_unless_it_is_generic(cwd: str, name: str | None) -> None:
    assert folder_project(cwd) == name


def test_imported_history_without_a_repository_here_gets_projects(
    settings: Settings, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    for source, target in PLACES.items():
        dest = home / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((FIXTURES / source).read_bytes())
    backfill(settings, Catalog(all_adapters(), home))
    remote = conn.execute(
        "SELECT DISTINCT git_remote FROM memory WHERE agent_platform = 'codex-cli'"
        " AND git_remote IS NOT NULL"
    ).fetchall()
    assert {r[0] for r in remote} == {  # a placeholder ("[trimmed for fixture]") is not one
        "https://github.com/Mai0313/claude-code",
        "https://example.invalid/repo.git",
    }

    TaggerJob().run(context(conn, settings))
    rows = conn.execute(
        "SELECT m.cwd, t.name FROM memory m LEFT JOIN project_tags t ON t.id = m.p_tag_id"
    ).fetchall()
    untagged = [cwd for cwd, name in rows if name is None]
    by_folder = {cwd: name for cwd, name in rows if name}
    assert by_folder["/home/marco/projects/spotter"] == "spotter"
    assert by_folder["/Users/macmini/Code/homelab-migration"] == "homelab-migration"
    # one project for the repository Codex recorded and the folder Claude Code ran in
    assert by_folder["/proj/ds906659/gai/claude-code"] == "claude-code"
    assert by_folder["/home/wei/repo/claude-code"] == "claude-code"
    # left: no folder recorded (Gemini's legacy JSON), /tmp, a trimmed placeholder
    assert sorted(set(map(str, untagged))) == ["/tmp", "None", "[trimmed for fixture]"]
    assert all(folder_project(cwd) is None for cwd in untagged)
    print(f"untagged after the tagger: {len(untagged)} of {len(rows)} turns")


def test_a_rejected_name_is_not_taken_from_a_folder(
    settings: Settings, conn: psycopg.Connection[Any]
) -> None:
    ctx = context(conn, settings)
    suggestion_store.suggest_new_tag(conn, ctx.user_id, "spotter", members=["spotter"])
    pending = suggestion_store.new_suggestions(conn, ctx.user_id)
    suggestion_store.decide_new_suggestion(conn, pending[0].id, "rejected", decided_by="user")
    ids = add(conn, settings, row("hello", cwd="/home/marco/projects/spotter"))
    TaggerJob().run(ctx)
    assert tagged(conn, ids[0])[0] is None
