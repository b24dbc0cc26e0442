-- 0022: task pins addressed to a teammate's agent. A pin stays its sender's rows (the log of
-- one `pin_id` under one `user_id`); `to_user_id` names the teammate it is for (NULL: the
-- sender's own agents, as before). The database lets the addressee read that pin and append
-- its progress, and only in a project the sender or the addressee shares with the team.

ALTER TABLE task_pin_events ADD COLUMN IF NOT EXISTS to_user_id BIGINT
    REFERENCES users (user_id) ON DELETE CASCADE;
CREATE INDEX IF NOT EXISTS task_pin_events_to_person ON task_pin_events (to_user_id, id DESC)
    WHERE to_user_id IS NOT NULL;

-- Whether `project` (a tag's name, any alias) is shared with the team by `a` or by `b`.
CREATE OR REPLACE FUNCTION am_project_shared(project TEXT, a BIGINT, b BIGINT) RETURNS BOOLEAN
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT EXISTS (SELECT 1 FROM am_shared_pairs() s JOIN project_tags t ON t.id = s.tag_id
                    WHERE s.owner_id IN (a, b) AND lower(t.name) = lower(project))
$$;

-- The addressee reads the pin's events (its creation and every update).
DROP POLICY IF EXISTS addressee_read ON task_pin_events;
CREATE POLICY addressee_read ON task_pin_events FOR SELECT
    USING (to_user_id IS NOT NULL AND to_user_id = (SELECT am_me()));
-- ... and appends its progress (an update of a pin addressed to them, in the sender's log).
-- Whether the pin was created for that person is read as the schema's owner: a policy of a
-- table that reads the same table under its own policies would recurse.
CREATE OR REPLACE FUNCTION am_pin_for(pin BIGINT, sender BIGINT, person BIGINT) RETURNS BOOLEAN
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT EXISTS (SELECT 1 FROM task_pin_events c WHERE c.id = pin AND c.event = 'create'
                    AND c.user_id = sender AND c.to_user_id = person)
$$;
DROP POLICY IF EXISTS addressee_update ON task_pin_events;
CREATE POLICY addressee_update ON task_pin_events FOR INSERT
    WITH CHECK (event = 'update' AND to_user_id IS NOT NULL AND to_user_id = (SELECT am_me())
                AND am_pin_for(pin_id, user_id, to_user_id));
-- A pin for someone else is only written in a project shared with the team.
DROP POLICY IF EXISTS teammate_in_shared_project ON task_pin_events;
CREATE POLICY teammate_in_shared_project ON task_pin_events AS RESTRICTIVE FOR INSERT
    WITH CHECK (to_user_id IS NULL OR to_user_id = user_id OR (SELECT am_is_coldpath())
                OR am_project_shared(project, user_id, to_user_id));
