-- 0011: where a profile's text came from, so forgetting a turn drops what was built from it.
--
-- The librarian merges the turns it reads into the profile it had, so a field's text holds
-- something of every turn read since the field was last empty. `<field>_sources` is that set
-- of memory ids; NULL while the field has text means "unknown" (written before this version,
-- or imported): a forget then treats every user turn said before the field's last write as a
-- possible source. Each history entry names the turns read for that write (NULL: unknown).
ALTER TABLE users ADD COLUMN IF NOT EXISTS core_profile_sources BIGINT[];
ALTER TABLE users ADD COLUMN IF NOT EXISTS sub_profile_sources BIGINT[];
ALTER TABLE profile_history ADD COLUMN IF NOT EXISTS source_ids BIGINT[];
