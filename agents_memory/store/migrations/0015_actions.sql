-- 0015: what the agents did: one row per tool call a client recorded (an "action").
--
-- An action belongs to the session and the assistant turn that issued it. Its key is the
-- client's tool-call id, unique only within one client and session, so the row's identity is
-- (user, platform, session, key): a session never replaces another session's action. It keeps
-- what was done and how it ended, never what a read returned or a whole diff: the targets
-- (project-relative paths, URLs, the MCP server/tool), the command line, the outcome, a short
-- redacted excerpt (error lines, the last lines of a shell command) and an edit's diffstat.
-- Rows are kept small (measured against the transcripts' bytes): no empty arrays (NULL), no
-- key the linked turn already holds.

-- The searchable text of an action: the words of its tool, targets, command and excerpt split
-- at every non-alphanumeric character (so `store/actions.py` is found by `actions` and `py`),
-- unstemmed. One cheap configuration (`simple`): measured, a second, stemmed vector made
-- capture a fifth slower.
CREATE OR REPLACE FUNCTION action_fts(tool TEXT, targets TEXT[], command TEXT, excerpt TEXT)
RETURNS TSVECTOR LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('pg_catalog.simple'::regconfig, regexp_replace(lower(left(
               concat_ws(' ', tool, array_to_string(coalesce(targets, '{}'), ' '), command,
                         excerpt), 20000)),
               '[^[:alnum:]]+', ' ', 'g'))
$$;

CREATE TABLE IF NOT EXISTS actions (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    session_id     TEXT,
    external_key   TEXT NOT NULL,
    -- The issuing turn's key when no stored turn carries it (a tool-only response); NULL when
    -- memory_id is that very turn (its external_uuid says it), to keep the row small.
    turn_key       TEXT,
    memory_id      BIGINT REFERENCES memory (id) ON DELETE SET NULL,
    tool           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN
                       ('edit', 'write', 'read', 'shell', 'search', 'web', 'mcp', 'agent', 'other')),
    targets        TEXT[],
    command        TEXT,
    outcome        TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'interrupted', 'unknown')),
    exit_code      INTEGER,
    excerpt        TEXT,
    lines_added    INTEGER,
    lines_removed  INTEGER,
    started_at     TIMESTAMPTZ,
    duration_ms    INTEGER,
    device_name    TEXT,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT actions_identity UNIQUE NULLS NOT DISTINCT
        (user_id, agent_platform, session_id, external_key)
);
-- Full text over the expression, not a stored column: the row stays small (measured: a stored
-- vector made the rows a third larger), the index serves `action_fts(...) @@ query`.
CREATE INDEX IF NOT EXISTS actions_fts
    ON actions USING gin (action_fts(tool, targets, command, excerpt));
-- A session's actions are found through the identity's index (its leading columns).
CREATE INDEX IF NOT EXISTS actions_memory ON actions (memory_id);

-- The actions that must never be stored again: those of forgotten turns and sessions, and
-- those read while capture was paused. Keys only (an action's identity), never its text.
CREATE TABLE IF NOT EXISTS action_tombstones (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    session_id     TEXT,
    external_key   TEXT NOT NULL,
    reason         TEXT NOT NULL CHECK (reason IN ('forgotten', 'paused')),
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT action_tombstones_identity UNIQUE NULLS NOT DISTINCT
        (user_id, agent_platform, session_id, external_key)
);
