-- 0023: capture's own state — tombstones, cursors and pauses — belongs to a person in a team.
--
-- Before, each was the database's: two teammates whose machines carry the same DEVICE_NAME
-- and transcript path (the same user name in a container, a default host name) shared one
-- cursor, so one daemon skipped the other's file up to where the first had read; a pause of
-- one paused the other; and a turn one person forgot (its key) was refused to everyone.
--
-- Whose: `user_id` is the team member's person (`am_me()`, the default, so capture's own
-- statements need no change), or NULL for rows the schema's owner writes — a single person's
-- set-up, and the admin's own capture — so every existing row stays the owner's and nothing
-- changes without a team. Capture's statements match `user_id IS NOT DISTINCT FROM am_me()`;
-- row-level security gives a member their own rows only (and the Cold Path every row).

ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS user_id BIGINT
    REFERENCES users (user_id) ON DELETE CASCADE DEFAULT am_me();
ALTER TABLE capture_cursors ADD COLUMN IF NOT EXISTS user_id BIGINT
    REFERENCES users (user_id) ON DELETE CASCADE DEFAULT am_me();
ALTER TABLE capture_pauses ADD COLUMN IF NOT EXISTS user_id BIGINT
    REFERENCES users (user_id) ON DELETE CASCADE DEFAULT am_me();

-- One key per person (a buried key of one person is no one else's); a lookup by key uses the
-- same index (the key is its first column) and picks the person among the key's few rows.
DROP INDEX IF EXISTS tombstones_key;
CREATE UNIQUE INDEX IF NOT EXISTS tombstones_person_key ON tombstones (external_uuid, user_id)
    NULLS NOT DISTINCT WHERE external_uuid IS NOT NULL;

ALTER TABLE capture_cursors DROP CONSTRAINT IF EXISTS capture_cursor_file;
CREATE UNIQUE INDEX IF NOT EXISTS capture_cursor_person_file
    ON capture_cursors (device_name, path, user_id) NULLS NOT DISTINCT;

ALTER TABLE capture_pauses DROP CONSTRAINT IF EXISTS capture_pauses_pkey;
CREATE UNIQUE INDEX IF NOT EXISTS capture_pause_person
    ON capture_pauses (device_name, platform, user_id) NULLS NOT DISTINCT;

ALTER TABLE tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_cursors ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_pauses ENABLE ROW LEVEL SECURITY;

-- Own rows for a person, every row for the Cold Path (the USING clause checks writes too).
DROP POLICY IF EXISTS own_rows ON tombstones;
CREATE POLICY own_rows ON tombstones FOR ALL
    USING (user_id = (SELECT am_me()) OR (SELECT am_is_coldpath()));
DROP POLICY IF EXISTS own_rows ON capture_cursors;
CREATE POLICY own_rows ON capture_cursors FOR ALL
    USING (user_id = (SELECT am_me()) OR (SELECT am_is_coldpath()));
DROP POLICY IF EXISTS own_rows ON capture_pauses;
CREATE POLICY own_rows ON capture_pauses FOR ALL
    USING (user_id = (SELECT am_me()) OR (SELECT am_is_coldpath()));
