-- 0021: a team on one PostgreSQL — each person's memory private by default, shared by project,
-- enforced by the database's own row-level security.
--
-- Who is who: `team_members` maps a PostgreSQL login role to a person (a `users` row) or marks
-- it as the Cold Path's role (processes every row, is no person). A role that is in no row
-- here — the schema's owner, which a single person's set-up always connects as — is not
-- affected at all: the owner of a table bypasses its policies (no FORCE ROW LEVEL SECURITY),
-- and nobody else is granted anything until `mcp-agents-memory team init`.
--
-- What a person sees: their own rows, and a teammate's rows in a project that teammate shared
-- (`project_shares`, by the project's canonical tag, its aliases included), unless they hid
-- that row for themselves (`hidden_memories`). What a person may change: their own rows only.

CREATE TABLE IF NOT EXISTS team_members (
    db_role  TEXT PRIMARY KEY,
    kind     TEXT NOT NULL CHECK (kind IN ('person', 'coldpath')),
    user_id  BIGINT UNIQUE REFERENCES users (user_id) ON DELETE CASCADE,
    added_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT team_member_person CHECK ((kind = 'person') = (user_id IS NOT NULL))
);

CREATE TABLE IF NOT EXISTS project_shares (
    user_id   BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    p_tag_id  BIGINT NOT NULL REFERENCES project_tags (id) ON DELETE CASCADE,
    shared_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, p_tag_id)
);

CREATE TABLE IF NOT EXISTS hidden_memories (
    user_id   BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    memory_id BIGINT NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
    hidden_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, memory_id)
);

-- The caller's person (NULL for the owner and the Cold Path). Not SECURITY DEFINER on purpose:
-- `current_user` must be the caller; `team_members` is readable by the team (who is on it is
-- no secret among its members).
CREATE OR REPLACE FUNCTION am_me() RETURNS BIGINT
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT user_id FROM team_members WHERE db_role = current_user AND kind = 'person'
$$;

CREATE OR REPLACE FUNCTION am_is_coldpath() RETURNS BOOLEAN
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT EXISTS (SELECT 1 FROM team_members WHERE db_role = current_user AND kind = 'coldpath')
$$;

-- Every (owner, tag) pair a teammate may read: each share expanded over the tag's aliases.
CREATE OR REPLACE FUNCTION am_shared_pairs() RETURNS TABLE (owner_id BIGINT, tag_id BIGINT)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT s.user_id, t.id
      FROM project_shares s
      JOIN project_tags t ON canonical_project_tag_id(t.id) = canonical_project_tag_id(s.p_tag_id)
$$;

-- The team's people by name (no profile): run as the schema's owner, so a member reads the
-- names without reading the users table.
CREATE OR REPLACE FUNCTION am_person_names() RETURNS TABLE (user_id BIGINT, user_name TEXT)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT u.user_id, u.user_name FROM users u JOIN team_members t ON t.user_id = u.user_id
$$;

ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_history ENABLE ROW LEVEL SECURITY;
ALTER TABLE profile_history ENABLE ROW LEVEL SECURITY;
ALTER TABLE project_tag_alias_suggestions ENABLE ROW LEVEL SECURITY;
ALTER TABLE project_tag_new_suggestions ENABLE ROW LEVEL SECURITY;
ALTER TABLE tag_summaries ENABLE ROW LEVEL SECURITY;
ALTER TABLE task_pin_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE actions ENABLE ROW LEVEL SECURITY;
ALTER TABLE action_tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE project_shares ENABLE ROW LEVEL SECURITY;
ALTER TABLE hidden_memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE prompt_recalls ENABLE ROW LEVEL SECURITY;
ALTER TABLE session_summaries ENABLE ROW LEVEL SECURITY;

-- users: one's own row only (profiles are private); a teammate's name, which results carry,
-- comes from am_person_names().
DROP POLICY IF EXISTS team_read ON users;
CREATE POLICY team_read ON users FOR SELECT
    USING ((SELECT am_is_coldpath()) OR user_id = (SELECT am_me()));
-- The Cold Path's own entry (its settings' user: no turns) is the only row it adds.
DROP POLICY IF EXISTS coldpath_insert ON users;
CREATE POLICY coldpath_insert ON users FOR INSERT WITH CHECK ((SELECT am_is_coldpath()));
DROP POLICY IF EXISTS own_update ON users;
CREATE POLICY own_update ON users FOR UPDATE
    USING ((SELECT am_is_coldpath()) OR user_id = (SELECT am_me()))
    WITH CHECK ((SELECT am_is_coldpath()) OR user_id = (SELECT am_me()));

-- Tables whose rows carry their person: own rows for everything, every row for the Cold Path.
DO $$
DECLARE
    owned TEXT;
BEGIN
    FOREACH owned IN ARRAY ARRAY['memory', 'profile_history', 'project_tag_alias_suggestions',
                                 'project_tag_new_suggestions', 'tag_summaries',
                                 'task_pin_events', 'actions', 'action_tombstones',
                                 'project_shares', 'hidden_memories', 'prompt_recalls',
                                 'session_summaries']
    LOOP
        EXECUTE format('DROP POLICY IF EXISTS own_rows ON %I', owned);
        EXECUTE format(
            'CREATE POLICY own_rows ON %I FOR ALL'
            ' USING (user_id = (SELECT am_me()) OR (SELECT am_is_coldpath()))'
            ' WITH CHECK (user_id = (SELECT am_me()) OR (SELECT am_is_coldpath()))', owned);
    END LOOP;
END
$$;

-- A teammate's turns, actions and project summaries in a shared project (not those hidden).
DROP POLICY IF EXISTS team_read ON memory;
CREATE POLICY team_read ON memory FOR SELECT
    USING ((SELECT am_me()) IS NOT NULL
           AND (user_id, p_tag_id) IN (SELECT owner_id, tag_id FROM am_shared_pairs())
           AND id NOT IN (SELECT h.memory_id FROM hidden_memories h WHERE h.user_id = (SELECT am_me())));
DROP POLICY IF EXISTS team_read ON actions;
CREATE POLICY team_read ON actions FOR SELECT
    USING ((SELECT am_me()) IS NOT NULL AND memory_id IN (SELECT id FROM memory));
DROP POLICY IF EXISTS team_read ON tag_summaries;
CREATE POLICY team_read ON tag_summaries FOR SELECT
    USING ((SELECT am_me()) IS NOT NULL
           AND (user_id, p_tag_id) IN (SELECT owner_id, tag_id FROM am_shared_pairs()));
DROP POLICY IF EXISTS team_read ON session_summaries;
CREATE POLICY team_read ON session_summaries FOR SELECT
    USING ((SELECT am_me()) IS NOT NULL
           AND (user_id, p_tag_id) IN (SELECT owner_id, tag_id FROM am_shared_pairs()));
-- Who shares what is visible to the team (it decides what they see).
DROP POLICY IF EXISTS team_read ON project_shares;
CREATE POLICY team_read ON project_shares FOR SELECT USING ((SELECT am_me()) IS NOT NULL);

-- A turn's earlier texts follow the turn: readable where the turn is, written by its owner.
DROP POLICY IF EXISTS follows_memory ON memory_history;
CREATE POLICY follows_memory ON memory_history FOR SELECT
    USING (memory_id IN (SELECT id FROM memory));
DROP POLICY IF EXISTS own_memory ON memory_history;
CREATE POLICY own_memory ON memory_history FOR ALL
    USING ((SELECT am_is_coldpath())
           OR memory_id IN (SELECT id FROM memory WHERE user_id = (SELECT am_me())))
    WITH CHECK ((SELECT am_is_coldpath())
                OR memory_id IN (SELECT id FROM memory WHERE user_id = (SELECT am_me())));
