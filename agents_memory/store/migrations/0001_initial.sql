-- 0001: the core schema (everything but vectors; see vectors.py for the optional pgvector part).

CREATE TABLE meta (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Full-text configuration: the 'russian' parser mapping stems English (asciiword ->
-- english_stem) and Russian (word -> russian_stem) and keeps Korean words whole; Korean
-- particles are handled at query time with prefix matching.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'agents_memory') THEN
        CREATE TEXT SEARCH CONFIGURATION agents_memory (COPY = pg_catalog.russian);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END
$$;

CREATE TABLE users (
    user_id                    BIGSERIAL PRIMARY KEY,
    user_name                  TEXT NOT NULL UNIQUE,
    core_profile               TEXT,
    sub_profile                TEXT,
    librarian_last_run_at      TIMESTAMPTZ,
    librarian_msg_count_at_run BIGINT,
    created_at                 TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at                 TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TRIGGER users_touch BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- Every profile change, whoever made it (librarian or a person through manage_knowledge).
CREATE TABLE profile_history (
    id         BIGSERIAL PRIMARY KEY,
    user_id    BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    field      TEXT NOT NULL CHECK (field IN ('core_profile', 'sub_profile')),
    old_value  TEXT,
    new_value  TEXT,
    changed_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX profile_history_user ON profile_history (user_id, created_at DESC);

CREATE TABLE project_tags (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT,
    alias_of    BIGINT REFERENCES project_tags (id) ON DELETE SET NULL,
    kind        TEXT CHECK (kind IN ('project', 'category')),
    paused      BOOLEAN NOT NULL DEFAULT false,
    git_root    TEXT,
    git_remote  TEXT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT project_tags_no_self_alias CHECK (alias_of IS NULL OR alias_of <> id)
);
CREATE INDEX project_tags_alias_of ON project_tags (alias_of) WHERE alias_of IS NOT NULL;
CREATE INDEX project_tags_kind ON project_tags (kind) WHERE kind IS NOT NULL;
CREATE INDEX project_tags_git_remote ON project_tags (git_remote) WHERE git_remote IS NOT NULL;
CREATE INDEX project_tags_git_root ON project_tags (git_root) WHERE git_root IS NOT NULL;
CREATE TRIGGER project_tags_touch BEFORE UPDATE ON project_tags
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- Follow alias_of to the root; cycles stop at the first repeated id. NULL -> NULL, unknown -> id.
CREATE OR REPLACE FUNCTION canonical_project_tag_id(tag_id BIGINT) RETURNS BIGINT
LANGUAGE plpgsql STABLE AS $$
DECLARE
    current_id BIGINT := tag_id;
    next_id    BIGINT;
    seen       BIGINT[] := ARRAY[]::BIGINT[];
BEGIN
    IF tag_id IS NULL THEN
        RETURN NULL;
    END IF;
    LOOP
        seen := seen || current_id;
        SELECT alias_of INTO next_id FROM project_tags WHERE id = current_id;
        IF next_id IS NULL OR next_id = ANY (seen) THEN
            RETURN current_id;
        END IF;
        current_id := next_id;
    END LOOP;
END
$$;

CREATE TABLE memory (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    agent_model    TEXT,
    subagent       BOOLEAN NOT NULL DEFAULT false,
    subagent_model TEXT,
    subagent_role  TEXT,
    role           TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    message        TEXT NOT NULL,
    raw_message    TEXT,
    p_tag_id       BIGINT REFERENCES project_tags (id) ON DELETE SET NULL,
    d_tag          TEXT[] NOT NULL DEFAULT '{}',
    is_active      BOOLEAN NOT NULL DEFAULT true,
    archived_at    TIMESTAMPTZ,
    is_pinned      BOOLEAN NOT NULL DEFAULT false,
    cold_error     TEXT,
    cold_attempts  INTEGER NOT NULL DEFAULT 0,
    tag_processed  BOOLEAN NOT NULL DEFAULT false,
    external_uuid  TEXT UNIQUE,
    device_name    TEXT,
    session_id     TEXT,
    cwd            TEXT,
    git_root       TEXT,
    git_remote     TEXT,
    source         TEXT NOT NULL DEFAULT 'capture'
                   CHECK (source IN ('capture', 'save_message', 'manage_knowledge', 'import')),
    message_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    embedding_model TEXT,
    -- A bounded prefix: a tsvector may not exceed 1 MB, and a pasted 20 MB log must still
    -- be stored (the vector arm and the ILIKE fallback still see the whole text).
    fts            TSVECTOR GENERATED ALWAYS AS
                   (to_tsvector('agents_memory'::regconfig, left(message, 100000))) STORED,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT subagent_consistency
        CHECK (subagent OR (subagent_model IS NULL AND subagent_role IS NULL)),
    CONSTRAINT pinned_not_archived CHECK (NOT (is_pinned AND archived_at IS NOT NULL))
);
CREATE INDEX memory_user_active_time ON memory (user_id, is_active, message_at DESC);
CREATE INDEX memory_p_tag ON memory (p_tag_id) WHERE p_tag_id IS NOT NULL;
CREATE INDEX memory_d_tag ON memory USING gin (d_tag);
CREATE INDEX memory_fts ON memory USING gin (fts);
CREATE INDEX memory_pinned ON memory (user_id, message_at DESC) WHERE is_pinned;
CREATE INDEX memory_untagged ON memory (id) WHERE NOT tag_processed;
CREATE INDEX memory_session ON memory (agent_platform, session_id, message_at DESC)
    WHERE session_id IS NOT NULL;

CREATE OR REPLACE FUNCTION memory_normalize() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.subagent_role := NULLIF(lower(btrim(NEW.subagent_role)), '');
    RETURN NEW;
END
$$;
CREATE TRIGGER memory_normalize BEFORE INSERT OR UPDATE OF subagent_role ON memory
    FOR EACH ROW EXECUTE FUNCTION memory_normalize();
CREATE TRIGGER memory_touch BEFORE UPDATE ON memory
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- Edits keep history (manage_knowledge update, a transcript's rewritten message).
CREATE TABLE memory_history (
    id         BIGSERIAL PRIMARY KEY,
    memory_id  BIGINT NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
    old_message TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX memory_history_memory ON memory_history (memory_id, created_at DESC);

CREATE TABLE project_tag_alias_suggestions (
    id                  BIGSERIAL PRIMARY KEY,
    user_id             BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    source_tag_id       BIGINT NOT NULL REFERENCES project_tags (id) ON DELETE CASCADE,
    target_tag_id       BIGINT NOT NULL REFERENCES project_tags (id) ON DELETE CASCADE,
    relation            TEXT NOT NULL CHECK (relation IN ('rename', 'alias', 'same_project',
                            'different', 'misfile_suspected', 'insufficient')),
    status              TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed',
                            'rejected', 'auto_applied', 'superseded', 'expired')),
    confidence          NUMERIC(5, 4) CHECK (confidence >= 0 AND confidence <= 1),
    candidate_sources   TEXT[] NOT NULL DEFAULT '{}',
    evidence_memory_ids BIGINT[] NOT NULL DEFAULT '{}',
    conflict_memory_ids BIGINT[] NOT NULL DEFAULT '{}',
    signals             JSONB NOT NULL DEFAULT '{}',
    model_provider      TEXT,
    model_name          TEXT,
    rationale           TEXT,
    auto_apply_eligible BOOLEAN NOT NULL DEFAULT false,
    decided_by          TEXT CHECK (decided_by IN ('user', 'system')),
    decision_reason     TEXT,
    decided_at          TIMESTAMPTZ,
    applied_at          TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT alias_suggestion_distinct CHECK (source_tag_id <> target_tag_id)
);
CREATE UNIQUE INDEX alias_suggestion_one_pending ON project_tag_alias_suggestions
    (user_id, LEAST(source_tag_id, target_tag_id), GREATEST(source_tag_id, target_tag_id))
    WHERE status = 'pending';
CREATE INDEX alias_suggestion_status ON project_tag_alias_suggestions
    (user_id, status, created_at DESC);
CREATE TRIGGER alias_suggestions_touch BEFORE UPDATE ON project_tag_alias_suggestions
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

CREATE TABLE project_tag_new_suggestions (
    id              BIGSERIAL PRIMARY KEY,
    user_id         BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    members         TEXT[] NOT NULL DEFAULT '{}',
    uses            INTEGER NOT NULL DEFAULT 0,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'confirmed', 'rejected', 'superseded')),
    recommendation  TEXT CHECK (recommendation IN ('project', 'generic', 'unsure')),
    rationale       TEXT,
    git_root        TEXT,
    git_remote      TEXT,
    model_provider  TEXT,
    model_name      TEXT,
    project_tag_id  BIGINT REFERENCES project_tags (id) ON DELETE SET NULL,
    retrotagged     INTEGER NOT NULL DEFAULT 0,
    decided_by      TEXT CHECK (decided_by IN ('user', 'system')),
    decision_reason TEXT,
    decided_at      TIMESTAMPTZ,
    last_seen_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT new_suggestion_once UNIQUE (user_id, name)
);
CREATE INDEX new_suggestion_status ON project_tag_new_suggestions (status);
CREATE TRIGGER new_suggestions_touch BEFORE UPDATE ON project_tag_new_suggestions
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

CREATE TABLE tag_summaries (
    id           BIGSERIAL PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    p_tag_id     BIGINT REFERENCES project_tags (id) ON DELETE CASCADE,
    d_tag        TEXT,
    period_start TIMESTAMPTZ NOT NULL,
    period_end   TIMESTAMPTZ NOT NULL,
    summary      TEXT NOT NULL,
    source_ids   BIGINT[] NOT NULL DEFAULT '{}',
    model        TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT tag_summary_has_tag CHECK (p_tag_id IS NOT NULL OR d_tag IS NOT NULL),
    CONSTRAINT tag_summary_period CHECK (period_start <= period_end)
);
CREATE INDEX tag_summaries_tag ON tag_summaries (user_id, p_tag_id, period_end DESC);
CREATE TRIGGER tag_summaries_touch BEFORE UPDATE ON tag_summaries
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

CREATE TABLE capture_cursors (
    id             BIGSERIAL PRIMARY KEY,
    platform       TEXT NOT NULL,
    device_name    TEXT NOT NULL,
    path           TEXT NOT NULL,
    dev            BIGINT,
    inode          BIGINT,
    size           BIGINT NOT NULL DEFAULT 0,
    "offset"       BIGINT NOT NULL DEFAULT 0,
    last_line_hash TEXT,
    state          JSONB NOT NULL DEFAULT '{}',
    unknown_kinds  JSONB NOT NULL DEFAULT '{}',
    rows_captured  BIGINT NOT NULL DEFAULT 0,
    issues         BIGINT NOT NULL DEFAULT 0,
    last_issue     TEXT,
    rescans        INTEGER NOT NULL DEFAULT 0,
    last_capture_at TIMESTAMPTZ,
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT capture_cursor_file UNIQUE (device_name, path)
);

CREATE TABLE llm_usage (
    day        DATE NOT NULL,
    role       TEXT NOT NULL,
    calls      INTEGER NOT NULL DEFAULT 0,
    tokens_in  BIGINT NOT NULL DEFAULT 0,
    tokens_out BIGINT NOT NULL DEFAULT 0,
    est_cost   NUMERIC(12, 6) NOT NULL DEFAULT 0,
    PRIMARY KEY (day, role)
);
