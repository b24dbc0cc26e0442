-- 0017: one summary per session: what was asked, decided, touched and run, how it ended.
--
-- A session is (user, platform, session id). Its summary covers the turns it had when it was
-- written: their count and the newest turn's id, so the Cold Path writes it again once the
-- session grows (or ``stale`` says a forget or a rewrite left it behind). ``title`` is the one
-- line a list shows (the ask), ``summary`` the text a person reads, ``terms`` more of the
-- session's own words that a search may find it by (never shown). The full-text vector weighs
-- them in that order.
CREATE TABLE IF NOT EXISTS session_summaries (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    agent_platform TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    git_root       TEXT,
    p_tag_id       BIGINT REFERENCES project_tags (id) ON DELETE SET NULL,
    started_at     TIMESTAMPTZ NOT NULL,
    last_at        TIMESTAMPTZ NOT NULL,
    turns          INTEGER NOT NULL,
    last_turn_id   BIGINT NOT NULL,
    title          TEXT NOT NULL,
    summary        TEXT NOT NULL,
    terms          TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL CHECK (model IN ('extractive', 'draft', 'llm')),
    stale          BOOLEAN NOT NULL DEFAULT false,
    fts            TSVECTOR GENERATED ALWAYS AS (
                       setweight(to_tsvector('agents_memory'::regconfig, left(title, 1000)), 'A')
                       || setweight(to_tsvector('agents_memory'::regconfig, left(summary, 20000)), 'B')
                       || setweight(to_tsvector('agents_memory'::regconfig, left(terms, 20000)), 'D')
                   ) STORED,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT session_summaries_identity UNIQUE (user_id, agent_platform, session_id)
);
CREATE INDEX IF NOT EXISTS session_summaries_fts ON session_summaries USING gin (fts);
CREATE INDEX IF NOT EXISTS session_summaries_recent
    ON session_summaries (user_id, last_at DESC);
CREATE INDEX IF NOT EXISTS session_summaries_pending ON session_summaries (user_id)
    WHERE stale OR model = 'draft';
DROP TRIGGER IF EXISTS session_summaries_touch ON session_summaries;
CREATE TRIGGER session_summaries_touch BEFORE UPDATE ON session_summaries
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
