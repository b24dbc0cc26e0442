"""claude-mem's SQLite schema, from its own source, and realistic rows.

The statements are copied from ``src/services/sqlite/SessionStore.ts`` of thedotmack/claude-mem
(see ``tests/seeds/SOURCES.md`` for the commits): :data:`CURRENT` is the schema a fresh
database ends with today (each table's last ``CREATE TABLE`` of its migrations, renamed from
``*_new``, then the later ``ALTER TABLE … ADD COLUMN`` statements in their order);
:data:`OLD` is its first schema (migration 4, before the user_prompts table, the observation
fields of migration 8 and the column renames of migration 17).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from tests.seeds.seed_a_schema import SECRET

CURRENT: Final = """
CREATE TABLE schema_versions (
  id INTEGER PRIMARY KEY,
  version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL
);
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')),
  worker_port INTEGER,
  prompt_counter INTEGER DEFAULT 0,
  custom_title TEXT
);
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content
  ON sdk_sessions(platform_source, content_session_id);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id)
    ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id)
    ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE pending_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER NOT NULL,
  content_session_id TEXT NOT NULL,
  message_type TEXT NOT NULL CHECK(message_type IN ('observation', 'summarize')),
  tool_name TEXT,
  tool_input TEXT,
  tool_response TEXT,
  cwd TEXT,
  last_user_message TEXT,
  last_assistant_message TEXT,
  prompt_number INTEGER,
  status TEXT NOT NULL DEFAULT 'pending' CHECK(status IN ('pending', 'processing')),
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY (session_db_id) REFERENCES sdk_sessions(id) ON DELETE CASCADE
);
CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER,
  content_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(session_db_id) REFERENCES sdk_sessions(id) ON DELETE CASCADE
);
ALTER TABLE observations ADD COLUMN content_hash TEXT;
ALTER TABLE observations ADD COLUMN generated_by_model TEXT;
ALTER TABLE observations ADD COLUMN relevance_count INTEGER DEFAULT 0;
ALTER TABLE observations ADD COLUMN merged_into_project TEXT;
ALTER TABLE session_summaries ADD COLUMN merged_into_project TEXT;
ALTER TABLE observations ADD COLUMN agent_type TEXT;
ALTER TABLE observations ADD COLUMN agent_id TEXT;
ALTER TABLE observations ADD COLUMN metadata TEXT;
ALTER TABLE observations ADD COLUMN synced_at INTEGER;
ALTER TABLE session_summaries ADD COLUMN synced_at INTEGER;
ALTER TABLE user_prompts ADD COLUMN synced_at INTEGER;
ALTER TABLE observations ADD COLUMN origin_device_id TEXT;
ALTER TABLE observations ADD COLUMN origin_local_id TEXT;
ALTER TABLE observations ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';
ALTER TABLE session_summaries ADD COLUMN origin_device_id TEXT;
ALTER TABLE session_summaries ADD COLUMN origin_local_id TEXT;
ALTER TABLE session_summaries ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';
ALTER TABLE user_prompts ADD COLUMN origin_device_id TEXT;
ALTER TABLE user_prompts ADD COLUMN origin_local_id TEXT;
ALTER TABLE user_prompts ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';
"""

OLD: Final = """
CREATE TABLE schema_versions (
  id INTEGER PRIMARY KEY,
  version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  claude_session_id TEXT UNIQUE NOT NULL,
  sdk_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active'
);
CREATE TABLE IF NOT EXISTS observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT NOT NULL,
  type TEXT NOT NULL CHECK(type IN ('decision', 'bugfix', 'feature', 'refactor', 'discovery')),
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(sdk_session_id) REFERENCES sdk_sessions(sdk_session_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT UNIQUE NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(sdk_session_id) REFERENCES sdk_sessions(sdk_session_id) ON DELETE CASCADE
);
"""

T0: Final = 1_760_000_000_000  # milliseconds, as claude-mem stores them (2025-10-09)
SESSION: Final = "5b7c0d2e-claude-code-session"
PROMPT: Final = "Почему падает миграция 0031 на пустой базе?"
SECOND: Final = "fix it and add a test"
OBS_TITLE: Final = "Migration 0031 assumed a non-empty users table"


def _iso(ms: int) -> str:
    """claude-mem's ``created_at`` text: ``new Date(ms).toISOString()``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def build(path: Path) -> None:
    """A claude-mem database of today's schema: two sessions (one Claude Code, one Codex),
    prompts, observations (one with a secret in its narrative, one by a subagent), two
    summaries of one session, a summary of a session with no turns, a pending message."""
    with sqlite3.connect(path) as conn:
        conn.executescript(CURRENT)
        conn.executemany(
            "INSERT INTO sdk_sessions (id, content_session_id, memory_session_id, project,"
            " platform_source, user_prompt, started_at, started_at_epoch, status, custom_title)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (1, SESSION, "mem-1", "agents-memory", "claude", PROMPT, _iso(T0), T0,
                 "completed", None),
                (2, "rollout-codex-7", "mem-2", "agents-memory", "codex", "ls", _iso(T0 + 9),
                 T0 + 9_000, "active", "Codex look-around"),
                (3, "empty-session", "mem-3", "other", "claude", None, _iso(T0 + 10), T0 + 10_000,
                 "failed", None),
            ],
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number,"
            " prompt_text, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (1, SESSION, 1, PROMPT, _iso(T0), T0),
                (1, SESSION, 2, SECOND, _iso(T0 + 60_000), T0 + 60_000),
                (2, "rollout-codex-7", 1, "ls", _iso(T0 + 9_000), T0 + 9_000),
            ],
        )
        observations = [
            ("mem-1", "agents-memory", "bugfix", OBS_TITLE, "0031 crashed on a fresh install",
             ["0031 read users before any row existed", "fixed with a LEFT JOIN"],
             f"The deploy token {SECRET} was in the log; migration 0031 now copes.",
             ["gotcha", "problem-solution"], ["store/migrations/0031.sql"],
             ["store/migrations/0031.sql", "tests/store/test_0031.py"], 2, "claude-sonnet-4-5",
             None, T0 + 90_000),
            ("mem-2", "agents-memory", "discovery", "Repository layout", None, [],
             "The repo keeps SQL under store/.", [], [], [], 1, "claude-haiku-4-5", "Explore",
             T0 + 12_000),
        ]  # fmt: skip
        conn.executemany(
            "INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts,"
            " narrative, concepts, files_read, files_modified, prompt_number,"
            " generated_by_model, agent_type, created_at, created_at_epoch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (*o[:5], json.dumps(o[5]), o[6], json.dumps(o[7]), json.dumps(o[8]),
                 json.dumps(o[9]), *o[10:13], _iso(o[13]), o[13])
                for o in observations
            ],
        )  # fmt: skip
        summaries = [
            ("mem-1", "Why does 0031 fail on an empty database?", "the migration and its test",
             "0031 assumed users existed", None, "add a test", [], [], None, 1, T0 + 95_000),
            ("mem-1", "fix it and add a test", None, None, "0031 fixed, test added", None,
             ["store/migrations/0031.sql"], ["tests/store/test_0031.py"], "ran pytest", 2,
             T0 + 120_000),
            ("mem-3", "nothing happened", None, None, None, None, [], [], None, 1, T0 + 11_000),
        ]  # fmt: skip
        conn.executemany(
            "INSERT INTO session_summaries (memory_session_id, project, request, investigated,"
            " learned, completed, next_steps, files_read, files_edited, notes, prompt_number,"
            " created_at, created_at_epoch) VALUES (?, 'agents-memory', ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?)",
            [(*s[:6], json.dumps(s[6]), json.dumps(s[7]), s[8], s[9], _iso(s[10]), s[10])
             for s in summaries],
        )  # fmt: skip
        conn.execute(
            "INSERT INTO pending_messages (session_db_id, content_session_id, message_type,"
            " tool_name, created_at_epoch) VALUES (2, 'rollout-codex-7', 'observation',"
            " 'Bash', ?)",
            (T0 + 13_000,),
        )


def build_old(path: Path) -> None:
    """A claude-mem database of its first schema: a session's first prompt on its row,
    observations with only ``text`` and ``type``, one summary."""
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD)
        conn.execute(
            "INSERT INTO sdk_sessions (id, claude_session_id, sdk_session_id, project,"
            " user_prompt, started_at, started_at_epoch, status)"
            " VALUES (1, 'old-session', 'sdk-old', 'legacy', 'rename the CLI', ?, ?,"
            " 'completed')",
            (_iso(T0), T0),
        )
        conn.execute(
            "INSERT INTO observations (sdk_session_id, project, text, type, created_at,"
            " created_at_epoch) VALUES ('sdk-old', 'legacy', 'The CLI is called am now',"
            " 'decision', ?, ?)",
            (_iso(T0 + 1000), T0 + 1000),
        )
        conn.execute(
            "INSERT INTO session_summaries (sdk_session_id, project, request, completed,"
            " created_at, created_at_epoch) VALUES ('sdk-old', 'legacy', 'rename the CLI',"
            " 'renamed', ?, ?)",
            (_iso(T0 + 2000), T0 + 2000),
        )
