"""Seed A's schema as ``reference/seeds.md`` A.2 describes it (migrations 019-031), and a
realistic set of rows: archived, pinned, subagent, aliases, both suggestion queues, a task pin,
chat venues, Korean and Russian text, a secret and a private span."""

from __future__ import annotations

import json
from typing import Any

import psycopg

PIN_TITLE = "Review the 0031 migration"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def ddl(dim: int) -> str:
    return f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE migration_history (id serial PRIMARY KEY, name text UNIQUE NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE users (
    user_id BIGSERIAL PRIMARY KEY,
    user_name TEXT NOT NULL UNIQUE,
    core_profile TEXT NULL,
    sub_profile TEXT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    librarian_last_run_at TIMESTAMPTZ,
    librarian_msg_count_at_run BIGINT
);
CREATE TABLE project_tags (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT NULL,
    alias_of BIGINT NULL REFERENCES project_tags(id) ON DELETE SET NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    kind TEXT NULL CHECK (kind IN ('project', 'category')),
    paused BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT project_tags_alias_not_self CHECK (alias_of IS NULL OR alias_of <> id)
);
CREATE INDEX project_tags_alias_of_idx ON project_tags (alias_of) WHERE alias_of IS NOT NULL;
CREATE INDEX project_tags_kind_idx ON project_tags (kind) WHERE kind IS NOT NULL;
CREATE TABLE memory (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    agent_model TEXT NULL,
    subagent BOOLEAN NOT NULL DEFAULT false,
    subagent_model TEXT NULL,
    subagent_role TEXT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    message TEXT NOT NULL,
    raw_message TEXT NULL,
    p_tag_id BIGINT NULL REFERENCES project_tags(id) ON DELETE SET NULL,
    d_tag TEXT[] NOT NULL DEFAULT '{{}}',
    embedding halfvec({dim}),
    is_active BOOLEAN NOT NULL DEFAULT true,
    archived_at TIMESTAMPTZ NULL,
    is_pinned BOOLEAN NOT NULL DEFAULT false,
    cold_error TEXT NULL,
    tag_processed BOOLEAN NOT NULL DEFAULT false,
    external_uuid TEXT NULL,
    device_name TEXT NULL,
    entry_type TEXT NOT NULL DEFAULT 'memory',
    venue TEXT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT subagent_consistency CHECK (
        (subagent = false AND subagent_model IS NULL AND subagent_role IS NULL)
        OR (subagent = true AND subagent_model IS NOT NULL)),
    CONSTRAINT pinned_not_archived CHECK (NOT (is_pinned AND archived_at IS NOT NULL))
);
CREATE INDEX memory_user_active_created ON memory (user_id, is_active, created_at DESC);
CREATE INDEX memory_p_tag ON memory (p_tag_id) WHERE p_tag_id IS NOT NULL;
CREATE INDEX memory_d_tag ON memory USING gin (d_tag);
CREATE INDEX memory_role ON memory (role);
CREATE INDEX memory_embedding_hnsw ON memory USING hnsw (embedding halfvec_cosine_ops)
    WHERE embedding IS NOT NULL;
CREATE UNIQUE INDEX memory_external_uuid ON memory (external_uuid)
    WHERE external_uuid IS NOT NULL;
CREATE TABLE project_tag_alias_suggestions (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(user_id),
    source_tag_id BIGINT NOT NULL REFERENCES project_tags(id) ON DELETE CASCADE,
    target_tag_id BIGINT NOT NULL REFERENCES project_tags(id) ON DELETE CASCADE,
    relation TEXT NOT NULL CHECK (relation IN ('rename', 'alias', 'same_project', 'different',
        'misfile_suspected', 'insufficient')),
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed',
        'rejected', 'auto_applied', 'superseded', 'expired')),
    confidence NUMERIC(5,4) CHECK (confidence >= 0 AND confidence <= 1),
    candidate_sources TEXT[] NOT NULL DEFAULT '{{}}',
    evidence_memory_ids BIGINT[] NOT NULL DEFAULT '{{}}',
    conflict_memory_ids BIGINT[] NOT NULL DEFAULT '{{}}',
    signals JSONB NOT NULL DEFAULT '{{}}',
    model_provider TEXT, model_name TEXT, rationale TEXT,
    auto_apply_eligible BOOLEAN NOT NULL DEFAULT false,
    decided_by TEXT CHECK (decided_by IN ('user', 'system')),
    decision_reason TEXT, decided_at TIMESTAMPTZ, applied_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (source_tag_id <> target_tag_id)
);
CREATE UNIQUE INDEX alias_one_pending ON project_tag_alias_suggestions
    (user_id, LEAST(source_tag_id, target_tag_id), GREATEST(source_tag_id, target_tag_id))
    WHERE status = 'pending';
CREATE TABLE project_tag_new_suggestions (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(user_id),
    name TEXT NOT NULL,
    members TEXT[] NOT NULL DEFAULT '{{}}',
    uses INT NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'confirmed', 'rejected', 'superseded')),
    recommendation TEXT CHECK (recommendation IN ('project', 'generic', 'unsure')),
    rationale TEXT, model_provider TEXT, model_name TEXT,
    project_tag_id BIGINT REFERENCES project_tags(id) ON DELETE SET NULL,
    retrotagged INT NOT NULL DEFAULT 0,
    decided_by TEXT, decision_reason TEXT, decided_at TIMESTAMPTZ,
    last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (user_id, name)
);
"""


def vector(dim: int, first: float) -> str:
    return "[" + ",".join([str(first)] + ["0.25"] * (dim - 1)) + "]"


KOREAN = "메모리 서버를 PostgreSQL로 옮기자. 한국어 검색도 되어야 해"
RUSSIAN = "Перенесём память на PostgreSQL; русский поиск тоже должен работать"
CORE = "이름: 훈. Senior engineer; пишет на TypeScript и Python"
SUB = "지금: mcp-agents-memory v0.9 마이그레이션"


def populate(conn: psycopg.Connection[Any], dim: int) -> dict[str, int]:
    """Insert the rows; returns the seed ids tests refer to by name."""
    ids: dict[str, int] = {}

    def one(query: str, params: tuple[Any, ...] = ()) -> int:
        row = conn.execute(query, params).fetchone()
        assert row is not None
        return int(row[0])

    ids["user"] = one(
        "INSERT INTO users (user_name, core_profile, sub_profile, created_at)"
        " VALUES ('hoon', %s, %s, '2025-11-02 09:00+09') RETURNING user_id",
        (CORE, SUB),
    )
    tag = "INSERT INTO project_tags (name, description, kind, paused) VALUES (%s, %s, %s, %s)"
    ids["mam"] = one(
        tag + " RETURNING id", ("mcp-agents-memory", "the memory server", "project", False)
    )
    ids["blog"] = one(tag + " RETURNING id", ("blog", None, "category", True))
    ids["old"] = one(tag + " RETURNING id", ("старый-проект", "прежнее имя", None, False))
    ids["alias"] = one(
        "INSERT INTO project_tags (name, alias_of) VALUES ('agents-memory', %s) RETURNING id",
        (ids["mam"],),
    )
    u = ids["user"]
    rows: dict[str, dict[str, Any]] = {
        "korean": {
            "agent_platform": "claude-code", "role": "user", "message": KOREAN,
            "p_tag_id": ids["mam"], "d_tag": ["postgres", "migration"],
            "embedding": vector(dim, 0.5), "tag_processed": True,
            "external_uuid": "claude-code:s1:u1", "device_name": "Mac-Studio",
            "venue": "terminal", "created_at": "2025-11-03 10:00+09",
        },
        "russian": {
            "agent_platform": "claude-code", "agent_model": "claude-opus-4",
            "role": "assistant", "message": RUSSIAN,
            "raw_message": "<base>envelope</base>" + RUSSIAN, "p_tag_id": ids["alias"],
            "d_tag": ["postgres"], "embedding": vector(dim, 0.6), "tag_processed": True,
            "external_uuid": "claude-code:s1:u2", "device_name": "Mac-Studio",
            "venue": "terminal", "created_at": "2025-11-03 10:00:05+09",
        },
        "subagent": {
            "agent_platform": "claude-code", "agent_model": "claude-opus-4", "subagent": True,
            "subagent_model": "claude-haiku-4", "subagent_role": "explorer",
            "role": "assistant", "message": "Found 3 call sites of insertRawMemory",
            "external_uuid": "claude-code:s1:u3", "device_name": "MS-Mortar",
            "venue": "subagent", "created_at": "2025-11-03 10:01+09",
        },
        "pinned": {
            "agent_platform": "gemini-cli-mcp-client", "role": "user",
            "message": "Always answer in Korean unless asked otherwise", "d_tag": ["style"],
            "is_pinned": True, "tag_processed": True, "device_name": "t460",
            "created_at": "2025-11-04 08:00+09",
        },
        "archived": {
            "agent_platform": "codex-desktop", "agent_model": "gpt-5-codex",
            "role": "assistant", "message": "Old plan: keep v0.x triage tables",
            "p_tag_id": ids["old"], "d_tag": ["legacy"], "is_active": False,
            "archived_at": "2025-12-01 00:00+00", "cold_error": "tagger: timeout",
            "tag_processed": True, "device_name": "MacBook", "venue": "auto",
            "created_at": "2025-10-01 12:00+09",
        },
        "secret": {
            "agent_platform": "codex-cli", "role": "user",
            "message": f"use this token {SECRET} for the CI", "raw_message": f"raw {SECRET}",
            "external_uuid": "codex:s9:@120", "device_name": "Mac-Pro", "venue": "terminal",
            "created_at": "2025-11-05 11:00+09",
        },
        "task": {
            "agent_platform": "claude-code", "role": "user",
            "message": "TASK: codex should review the migration", "device_name": "Mac-Studio",
            "entry_type": "task", "created_at": "2025-11-05 12:00+09",
        },
        "buzz": {
            "agent_platform": "buzz", "role": "user", "message": "배포는 금요일에 하자",
            "external_uuid": "buzz:ev42", "venue": "buzz:dev",
            "created_at": "2025-11-06 09:00+09",
        },
        "private": {
            "agent_platform": "claude-code", "role": "user",
            "message": "<private>my bank PIN is 1234</private>",
            "external_uuid": "claude-code:s1:u9", "device_name": "Mac-Studio",
            "venue": "terminal", "created_at": "2025-11-06 10:00+09",
        },
    }  # fmt: skip
    for name, values in rows.items():
        columns = ["user_id", *values]
        marks = ", ".join("%s::halfvec" if c == "embedding" else "%s" for c in columns)
        ids[name] = one(
            f"INSERT INTO memory ({', '.join(columns)}) VALUES ({marks}) RETURNING id",
            (u, *values.values()),
        )
    conn.execute(
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        " relation, status, confidence, candidate_sources, evidence_memory_ids, signals,"
        " model_provider, model_name, rationale, created_at) VALUES"
        " (%s, %s, %s, 'same_project', 'pending', 0.9100, '{cooccurrence}', %s,"
        "  '{\"shared_dtags\": 2}', 'xai', 'grok-4', 'same repo, new name', '2025-11-07')",
        (u, ids["old"], ids["mam"], [ids["archived"], ids["korean"]]),
    )
    conn.execute(
        "INSERT INTO project_tag_alias_suggestions (user_id, source_tag_id, target_tag_id,"
        " relation, status, decided_by, decision_reason, decided_at, created_at) VALUES"
        " (%s, %s, %s, 'different', 'rejected', 'user', 'not the same', '2025-11-08',"
        "  '2025-11-07')",
        (u, ids["blog"], ids["mam"]),
    )
    conn.execute(
        "INSERT INTO project_tag_new_suggestions (user_id, name, members, uses, status,"
        " recommendation, rationale) VALUES"
        " (%s, 'dotfiles', '{dotfiles,zsh}', 12, 'pending', 'project', 'many rows'),"
        " (%s, 'misc', '{misc}', 30, 'rejected', 'generic', NULL)",
        (u, u),
    )
    # a pin in seed A's own form: a JSON header line, then its text; an update names its pin
    header = {"to": "codex", "from": "claude-code", "status": "pending", "title": PIN_TITLE}
    ids["pin"] = one(
        "INSERT INTO memory (user_id, agent_platform, role, message, device_name, entry_type,"
        " created_at) VALUES (%s, 'claude-code', 'user', %s, 'Mac-Studio', 'task',"
        " '2025-11-07 09:00+09') RETURNING id",
        (u, json.dumps(header) + f"\nThe diff is in 0031; token {SECRET}"),
    )
    update = {"pin": ids["pin"], "status": "done", "note": "merged, thanks"}
    ids["pin_done"] = one(
        "INSERT INTO memory (user_id, agent_platform, role, message, device_name, entry_type,"
        " created_at) VALUES (%s, 'codex-cli', 'user', %s, 'MacBook', 'task',"
        " '2025-11-07 15:00+09') RETURNING id",
        (u, json.dumps(update)),
    )
    return ids
