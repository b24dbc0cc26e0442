-- 0002: search. Newest-first walks over all of a user's rows, archived included (the recency
-- listing and the ILIKE fallback with include_archived, the full-text arm's newest-matches
-- scan); memory_user_active_time serves the default, active-only case.
CREATE INDEX IF NOT EXISTS memory_user_time ON memory (user_id, message_at DESC, id DESC);
