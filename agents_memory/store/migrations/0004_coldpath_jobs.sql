-- 0004: what the Cold Path jobs need beyond 0001.
-- One summary per (tag or git root, period): the Clusterer upserts into it, so running it
-- twice over the same period does not add a second summary.
CREATE UNIQUE INDEX IF NOT EXISTS tag_summaries_period
    ON tag_summaries (user_id, coalesce(p_tag_id, 0), coalesce(d_tag, ''), period_start);
-- The librarian's gate counts a user's active turns; its slices read them by time.
CREATE INDEX IF NOT EXISTS memory_user_turns
    ON memory (user_id, message_at) WHERE role = 'user' AND is_active;
