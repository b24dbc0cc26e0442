-- 0014: a tombstone knows whose turn it buried.
--
-- A client's id is unique only within its session (a proxy can hand out `msg_1` in every
-- session), so a tombstone refuses an incoming turn only when the session and role match too.
-- NULL (tombstones written before this version) keeps the old rule: the key alone.
ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS session_id TEXT;
ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS role TEXT;
