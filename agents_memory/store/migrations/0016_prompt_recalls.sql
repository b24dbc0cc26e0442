-- 0016: what memory gave each session unasked: the session-start brief's turns and each
-- prompt's recalled memories (issue 29), so a later prompt of the same session never gets a
-- memory again, and the owner sees how many prompts got memories and which.
--
-- Never the prompt's text (it may hold a secret): a short hash of it, enough to tell two
-- prompts apart. Rows older than 30 days are deleted as new ones come (store/prompt_recalls.py).
CREATE TABLE IF NOT EXISTS prompt_recalls (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    session_id     TEXT,
    kind           TEXT NOT NULL CHECK (kind IN ('brief', 'prompt')),
    -- 'added' or why nothing was added (prompt_recall.Reason); 'brief' for a brief.
    outcome        TEXT NOT NULL,
    memory_ids     BIGINT[] NOT NULL DEFAULT '{}',
    best           REAL,
    prompt_hash    TEXT,
    git_root       TEXT,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS prompt_recalls_session
    ON prompt_recalls (user_id, agent_platform, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS prompt_recalls_time ON prompt_recalls (user_id, created_at DESC);

-- A prompt's recall searches its project first: the turns of one repository, newest first.
CREATE INDEX IF NOT EXISTS memory_git_root_time
    ON memory (git_root, message_at DESC) WHERE git_root IS NOT NULL;
