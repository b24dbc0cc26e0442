"""A populated pool for the export/import tests: the real transcript fixtures backfilled, plus
a pinned fact, an edit (history), a profile, tags with an alias, suggestions and a summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from agents_memory.adapters import all_adapters
from agents_memory.admission.admit import Admitted, create_admission
from agents_memory.capture.backfill import backfill
from agents_memory.capture.discovery import Catalog
from agents_memory.config import Settings
from agents_memory.store import knowledge, tags
from agents_memory.store.memories import NewMemory, ensure_user, insert_memories

BIN = Path(sys.executable).parent
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
TRANSCRIPTS = {
    "claude-code/vct_v1.0.95_tools_thinking_unicode.jsonl": ".claude/projects/-p/a.jsonl",
    "codex/vct_v0.39.0_vscode_unicode.jsonl": ".codex/sessions/2026/11/30/rollout-b.jsonl",
    "gemini-cli/vct_legacy_json_2025-10_gemini-2.5-pro.json": ".gemini/tmp/p/chats/session-g.json",
}
PINNED = "We deploy with `make ship` from the release branch only."
PROFILE = "Prefers small commits and real databases in tests."


def populate(settings: Settings, home: Path, conn: psycopg.Connection[Any]) -> None:
    """Fill the pool ``settings`` names (``conn`` is a connection to it)."""
    for source, target in TRANSCRIPTS.items():
        dest = home / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((FIXTURES / source).read_bytes())
    backfill(settings, Catalog(all_adapters(), home))
    user = ensure_user(conn, settings.user_name)
    admission = create_admission(settings, home=home)
    fact = admission.pinned_fact(PINNED, cwd=None)
    assert isinstance(fact, Admitted)
    pinned = NewMemory("claude-code", "user", fact.text, source="manage_knowledge", is_pinned=True)
    insert_memories(conn, user, [pinned])
    first = conn.execute("SELECT min(id) FROM memory WHERE source = 'capture'").fetchone()
    assert first is not None
    edit = admission.edited_text("An edited turn: the first one, said better.")
    assert isinstance(edit, Admitted)
    knowledge.update_memory_text(
        conn, first[0], edit.text, changed_by="manage_knowledge", has_vector=True
    )
    knowledge.set_profile(conn, user, "core_profile", PROFILE, changed_by="librarian")
    shop = tags.create_project_tag(conn, "shop", git_remote="github.com/acme/shop")
    old = tags.create_project_tag(conn, "shop-old")
    other = tags.create_project_tag(conn, "blog")
    tags.set_alias(conn, old, shop)
    conn.execute(
        "UPDATE memory SET p_tag_id = CASE WHEN agent_platform = 'codex-cli' THEN %s"
        " WHEN agent_platform = 'gemini-cli' THEN %s ELSE %s END, tag_processed = true,"
        " d_tag = '{deploy}'",
        (old, other, shop),
    )
    ids = [r[0] for r in conn.execute("SELECT id FROM memory ORDER BY id LIMIT 3")]
    conn.execute(
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        " relation, confidence, evidence_memory_ids, signals) VALUES (%s, %s, %s, 'alias',"
        " 0.85, %s, '{\"git\": 1}')",
        (user, other, shop, ids),
    )
    conn.execute(
        "INSERT INTO project_tag_new_suggestions (user_id, name, members, uses, project_tag_id)"
        " VALUES (%s, 'payments', '{pay,billing}', 3, %s)",
        (user, shop),
    )
    conn.execute(
        "INSERT INTO tag_summaries (user_id, p_tag_id, period_start, period_end, summary,"
        " source_ids, model) VALUES (%s, %s, '2025-01-01', '2027-01-01', 'Shop work.', %s, 'm')",
        (user, shop, list(reversed(ids))),
    )
    conn.commit()


def machine_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".data"),
        XDG_STATE_HOME=str(home / ".state"),
        DATABASE_URL=url,
        USER_NAME="tester",
        DEVICE_NAME="test-device",
        EMBEDDING_BACKEND="none",
        COLD_PATH_ENABLED="false",
        # the console script imports this checkout's package, not the installed one's
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
    )
    env.update(extra)
    return env


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mcp-agents-memory"), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
